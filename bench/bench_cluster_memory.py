"""Redis memory per queued and per seen URL: focuscrawl's Redis frontier against scrapy-redis.

Starts its own ``redis-server`` on a free port (no persistence), fills each structure with the
same requests — the topical spider's (URL, score, errback, ``focuscrawl`` meta with the parent
URL) — and reads ``used_memory`` from ``INFO memory`` before and after. Target: at most a third
of scrapy-redis's bytes.

    .venv/bin/python bench/bench_cluster_memory.py            # 1,000,000 URLs (a few minutes)
    .venv/bin/python bench/bench_cluster_memory.py --urls 100000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import redis

TARGET = 1 / 3
BATCH = 5000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="fc-bench-redis-")
        self.port = free_port()
        exe = shutil.which("redis-server")
        if exe is None:
            sys.exit("redis-server is not installed")
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--logfile", ""],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "Ready to accept connections" in line:
                break
        self.proc.stdout.close()  # redis logs nothing more at this level; a closed pipe is fine
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.client = redis.Redis.from_url(self.url, socket_timeout=None)  # FLUSHALL of GBs

    def used(self) -> int:
        """Dataset bytes: ``used_memory`` once every client buffer of the bench is gone."""
        self.client.connection_pool.disconnect()  # frees pipelines' query/output buffers
        return int(self.client.info("memory")["used_memory"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        shutil.rmtree(self.dir, ignore_errors=True)


def workload(
    n: int, hosts: int, seed: int = 7, anchors: bool = True
) -> Iterator[tuple[str, float, dict[str, Any]]]:
    """The topical spider's requests: URL, float score, its ``focuscrawl`` meta (with the link
    learner on, the default, the meta carries the anchor's words, lower-cased: here 1-3)."""
    rng = random.Random(seed)
    words = ["birds", "nesting", "migration", "wetland", "species", "raptor", "owl", "finch"]
    for i in range(n):
        host = f"www.site{i % hosts}.example.org"
        slug = "-".join(rng.sample(words, 3))
        url = f"https://{host}/wiki/{slug}-{i}.html"
        parent = f"https://{host}/wiki/{rng.choice(words)}-{rng.randrange(n)}.html"
        score = round(rng.random(), 6)
        depth = rng.randrange(1, 8)
        meta = {"d": depth, "inh": round(rng.random(), 4), "tb": 0, "score": score, "par": parent}
        if anchors:
            meta["a"] = " ".join(rng.sample(words, rng.randint(1, 3)))  # as the policy stores it
        yield url, score, {"focuscrawl": meta, "depth": depth}


class _Spider:
    """What scrapy-redis and our encoder need of a spider: a name and the errback method."""

    name = "topical"

    def errback(self, failure: Any) -> None:  # pragma: no cover - never called
        pass


Prepared = list[tuple[str, str, bytes, bytes]]  # host, repr(score), entry, fingerprint


def bench_scrapy_redis(
    queue_server: Server, seen_server: Server, n: int, hosts: int, anchors: bool = True
) -> tuple[float, float, Prepared]:
    """scrapy-redis's queue and dupefilter, filled in one pass over the workload (one server
    each, so one ``Request`` per URL serves both), and our entries prepared from the same
    requests for :func:`bench_focuscrawl`."""
    from scrapy import Request
    from scrapy.utils.request import RequestFingerprinter
    from scrapy_redis.queue import PriorityQueue

    from focuscrawl.frontier.base import host_of
    from focuscrawl.frontier.redis_frontier import encode_entry
    from focuscrawl.frontier.requests import encode

    spider = _Spider()
    queue = PriorityQueue(queue_server.client, spider, "topical:requests")
    fingerprinter = RequestFingerprinter()
    for server in (queue_server, seen_server):
        server.client.flushall()
    base_q, base_s = queue_server.used(), seen_server.used()
    pipe_q = queue_server.client.pipeline(transaction=False)
    pipe_s = seen_server.client.pipeline(transaction=False)
    prepared: Prepared = []
    for k, (url, score, meta) in enumerate(workload(n, hosts, anchors=anchors), 1):
        request = Request(url, errback=spider.errback, meta=meta, priority=int(score * 1000))
        # what PriorityQueue.push does, batched: ZADD key -priority pickled-request
        pipe_q.zadd(queue.key, {queue._encode_request(request): -request.priority})
        # RFPDupeFilter.request_seen: SADD key hex-fingerprint
        pipe_s.sadd("topical:dupefilter", fingerprinter.fingerprint(request).hex())
        # ours: the scheduler's data of the same request (its integer priority is scrapy-redis's
        # score; focuscrawl keeps the float score instead)
        data = encode(request, spider)  # type: ignore[arg-type]
        data.pop("pr", None)
        host = host_of(url)
        fp = hashlib.sha1(url.encode()).digest()
        prepared.append((host, repr(score), encode_entry(url, fp, data, host, score), fp))
        if k % BATCH == 0:
            pipe_q.execute()
            pipe_s.execute()
    pipe_q.execute()
    pipe_s.execute()
    queued = (queue_server.used() - base_q) / n
    seen = (seen_server.used() - base_s) / n
    for server in (queue_server, seen_server):
        server.client.flushall()
    return queued, seen, prepared


def bench_focuscrawl(server: Server, prepared: Prepared, bloom: float) -> tuple[float, float]:
    """Push every prepared entry (as ``RedisFrontier.push_many`` does), then pop and ack every
    one (as workers do, pipelined per host)."""
    from focuscrawl.frontier.redis_frontier import PUSH_CHUNK, RedisFrontier
    from focuscrawl.frontier.rediswire import SCRIPTS

    n = len(prepared)
    server.client.flushall()
    base = server.used()
    frontier = RedisFrontier(server.url, "focuscrawl:topical", capacity=n, bloom_error_rate=bloom)
    frontier.open()
    sha = {name: script.sha for name, script in SCRIPTS.items()}
    for name in ("pushmany", "pop", "ack"):
        server.client.script_load(SCRIPTS[name].text)
    for start in range(0, n, BATCH):
        pipe = server.client.pipeline(transaction=False)
        for chunk in range(start, min(start + BATCH, n), PUSH_CHUNK):
            args: list[object] = []
            for host, score, rest, fp in prepared[chunk : min(chunk + PUSH_CHUNK, n)]:
                args += [host, score, rest, "0", frontier.offsets(fp)]
            pipe.evalsha(sha["pushmany"], 0, *frontier.script_args(args))
        pipe.execute()
    assert len(frontier) == n, len(frontier)
    queued = (server.used() - base) / n
    host_counts = Counter(host for host, _, _, _ in prepared)
    for host, count in host_counts.items():
        done = 0
        while done < count:
            pipe = server.client.pipeline(transaction=False)
            k = min(BATCH // 2, count - done)
            for _ in range(k):
                pipe.evalsha(sha["pop"], 0, *frontier.script_args([host, "300"]))
            popped = pipe.execute()
            pipe = server.client.pipeline(transaction=False)
            for rest, _score8 in popped:
                fp = rest[1:21]
                pipe.evalsha(sha["ack"], 0, *frontier.script_args([fp[:8], frontier.offsets(fp)]))
            pipe.execute()
            done += k
    assert len(frontier) == 0 and frontier.in_flight() == 0
    seen = (server.used() - base) / n
    frontier.close()
    server.client.flushall()
    return queued, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument(
        "--no-bloom", dest="bloom", action="store_false", help="skip the Bloom-filter run"
    )
    parser.add_argument(
        "--no-anchors",
        dest="anchors",
        action="store_false",
        help="requests without the anchor text the link learner adds to their meta",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    server, other = Server(), Server()
    try:
        t0 = time.perf_counter()
        their_q, their_s, prepared = bench_scrapy_redis(
            server, other, args.urls, args.hosts, args.anchors
        )
        other.stop()
        t1 = time.perf_counter()
        our_q, our_s = bench_focuscrawl(server, prepared, 0.0)
        t2 = time.perf_counter()
        bloom_q, bloom_s = bench_focuscrawl(server, prepared, 0.01) if args.bloom else (0.0, 0.0)
        t3 = time.perf_counter()
    finally:
        server.stop()
        other.stop()
    n, h = args.urls, args.hosts
    print(f"Redis memory per URL, {n:,} URLs on {h:,} hosts (used_memory delta / URLs)")
    print(f"{'':38} {'queued':>9} {'seen':>9}   {'ratio q':>7} {'ratio s':>7}")
    print(f"{'scrapy-redis (pickle zset, hex set)':38} {their_q:9.1f} {their_s:9.1f}   "
          f"{1:7.2f} {1:7.2f}  ({t1 - t0:.0f}s)")  # fmt: skip
    runs = [("focuscrawl exact (index incl. in q)", our_q, our_s, t2 - t1)]
    if args.bloom:
        runs.append(("focuscrawl Bloom 1% (index incl.)", bloom_q, bloom_s, t3 - t2))
    for name, q, s, t in runs:
        print(f"{name:38} {q:9.1f} {s:9.1f}   {q / their_q:7.2f} {s / their_s:7.2f}  ({t:.0f}s)")
    print(f"scrapy-redis queued incl. its dupefilter entry: {their_q + their_s:.1f} bytes "
          f"(focuscrawl exact {our_q / (their_q + their_s):.2f} of it)")  # fmt: skip
    print(f"target: ratio <= {TARGET:.2f} "
          f"(queued {'met' if our_q / their_q <= TARGET else 'MISSED'}, "
          f"seen {'met' if our_s / their_s <= TARGET else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
