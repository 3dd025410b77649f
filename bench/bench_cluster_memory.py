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


def workload(n: int, hosts: int, seed: int = 7) -> Iterator[tuple[str, float, dict[str, Any]]]:
    """The topical spider's requests: URL, float score, its ``focuscrawl`` meta."""
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
        yield url, score, {"focuscrawl": meta, "depth": depth}


class _Spider:
    """What scrapy-redis and our encoder need of a spider: a name and the errback method."""

    name = "topical"

    def errback(self, failure: Any) -> None:  # pragma: no cover - never called
        pass


def bench_scrapy_redis(server: Server, n: int, hosts: int) -> tuple[float, float]:
    from scrapy import Request
    from scrapy.utils.request import RequestFingerprinter
    from scrapy_redis.queue import PriorityQueue

    spider = _Spider()
    queue = PriorityQueue(server.client, spider, "topical:requests")
    fingerprinter = RequestFingerprinter()
    server.client.flushall()
    base = server.used()
    pipe = server.client.pipeline(transaction=False)
    for k, (url, score, meta) in enumerate(workload(n, hosts), 1):
        request = Request(url, errback=spider.errback, meta=meta, priority=int(score * 1000))
        # what PriorityQueue.push does, batched: ZADD key -priority pickled-request
        pipe.zadd(queue.key, {queue._encode_request(request): -request.priority})
        if k % BATCH == 0:
            pipe.execute()
    pipe.execute()
    queued = (server.used() - base) / n
    server.client.flushall()
    base = server.used()
    for k, (url, _score, meta) in enumerate(workload(n, hosts), 1):
        # RFPDupeFilter.request_seen: SADD key hex-fingerprint
        pipe.sadd("topical:dupefilter", fingerprinter.fingerprint(Request(url, meta=meta)).hex())
        if k % BATCH == 0:
            pipe.execute()
    pipe.execute()
    seen = (server.used() - base) / n
    server.client.flushall()
    return queued, seen


def bench_focuscrawl(server: Server, n: int, hosts: int, bloom: float) -> tuple[float, float]:
    from scrapy import Request

    from focuscrawl.frontier.redis import RedisFrontier
    from focuscrawl.frontier.requests import encode

    spider = _Spider()
    server.client.flushall()
    base = server.used()
    frontier = RedisFrontier(server.url, "focuscrawl:topical", capacity=n, bloom_error_rate=bloom)
    frontier.open()
    items = []
    for url, score, meta in workload(n, hosts):
        request = Request(url, errback=spider.errback, meta=meta)
        fp = hashlib.sha1(url.encode()).digest()
        items.append((url, score, fp, encode(request, spider)))  # type: ignore[arg-type]
        if len(items) == BATCH:
            frontier.push_many(items)
            items.clear()
    frontier.push_many(items)
    assert len(frontier) == n, len(frontier)
    queued = (server.used() - base) / n
    # fetch everything: pop + ack per host, pipelined
    host_counts: dict[str, int] = {}
    for url, _s, _m in workload(n, hosts):
        host = url.split("/")[2]
        host_counts[host] = host_counts.get(host, 0) + 1
    for host, count in host_counts.items():
        done = 0
        while done < count:
            pipe = server.client.pipeline(transaction=False)
            k = min(BATCH // 2, count - done)
            for _ in range(k):
                frontier._scripts["pop"](keys=[], args=frontier._args([host, "300"]), client=pipe)
            popped = pipe.execute()
            pipe = server.client.pipeline(transaction=False)
            for rest, _score8 in popped:
                fp = rest[1:21]
                args = frontier._args([fp[:8], frontier._offsets(fp)])
                frontier._scripts["ack"](keys=[], args=args, client=pipe)
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
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    server = Server()
    try:
        t0 = time.perf_counter()
        their_q, their_s = bench_scrapy_redis(server, args.urls, args.hosts)
        t1 = time.perf_counter()
        our_q, our_s = bench_focuscrawl(server, args.urls, args.hosts, 0.0)
        t2 = time.perf_counter()
        bloom_q, bloom_s = bench_focuscrawl(server, args.urls, args.hosts, 0.01)
        t3 = time.perf_counter()
    finally:
        server.stop()
    n, h = args.urls, args.hosts
    print(f"Redis memory per URL, {n:,} URLs on {h:,} hosts (used_memory delta / URLs)")
    print(f"{'':38} {'queued':>9} {'seen':>9}   {'ratio q':>7} {'ratio s':>7}")
    print(f"{'scrapy-redis (pickle zset, hex set)':38} {their_q:9.1f} {their_s:9.1f}   "
          f"{1:7.2f} {1:7.2f}  ({t1 - t0:.0f}s)")  # fmt: skip
    for name, q, s, t in (
        ("focuscrawl exact (index incl. in q)", our_q, our_s, t2 - t1),
        ("focuscrawl Bloom 1% (index incl.)", bloom_q, bloom_s, t3 - t2),
    ):
        print(f"{name:38} {q:9.1f} {s:9.1f}   {q / their_q:7.2f} {s / their_s:7.2f}  ({t:.0f}s)")
    print(f"scrapy-redis queued incl. its dupefilter entry: {their_q + their_s:.1f} bytes "
          f"(focuscrawl exact {our_q / (their_q + their_s):.2f} of it)")  # fmt: skip
    print(f"target: ratio <= {TARGET:.2f} "
          f"(queued {'met' if our_q / their_q <= TARGET else 'MISSED'}, "
          f"seen {'met' if our_s / their_s <= TARGET else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
