"""One Redis against a 3-master Redis Cluster, same run: the frontier's memory per queued URL,
the spread of keys, memory and operations over the masters, and Redis CPU per frontier op.

Starts its own ``redis-server`` (one instance) and its own local cluster
(:class:`focuseval.localcluster.LocalCluster`, no persistence), pushes the same URLs
(the topical spider's request data, on ``--hosts`` hosts) into each through the frontier's own
``push_many`` (pipelined, sent without waiting, flushed every batch), then pops and acknowledges
``--pops`` of them one by one through ``pop()``/``ack()`` as a worker does. Reads ``INFO memory``,
``INFO cpu`` and ``INFO commandstats`` of every master before and after each phase.

    .venv/bin/python bench/bench_cluster_shards.py                      # 200,000 URLs
    .venv/bin/python bench/bench_cluster_shards.py --urls 10000000 --only cluster --pops 20000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from focuseval.localcluster import LocalCluster  # noqa: E402

from focuscrawl.frontier.redis_frontier import RedisFrontier  # noqa: E402
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier  # noqa: E402

BATCH = 20_000
POP_CHUNK = 250
WORDS = ["birds", "nesting", "migration", "wetland", "species", "raptor", "owl", "finch"]


def workload(
    n: int, hosts: int, seed: int = 7
) -> Iterator[tuple[str, float, bytes, dict[str, Any]]]:
    """The topical spider's requests as its scheduler stores them: URL, float score,
    fingerprint, data (callback, errback, ``focuscrawl`` meta with parent URL and anchor words)."""
    rng = random.Random(seed)
    for i in range(n):
        host = f"www.site{i % hosts}.example.org"
        slug = "-".join(rng.sample(WORDS, 3))
        url = f"https://{host}/wiki/{slug}-{i}"
        score = round(rng.random(), 6)
        meta = {
            "focuscrawl": {
                "score": score,
                "inh": round(rng.random() * 0.5, 4),
                "d": rng.randint(1, 6),
                "par": f"https://{host}/wiki/{rng.choice(WORDS)}-{rng.randint(0, n)}",
                "aw": rng.sample(WORDS, rng.randint(1, 3)),
            },
            "depth": rng.randint(1, 6),
        }
        data = {"meta": meta, "cb": "parse", "eb": "errback"}
        yield url, score, hashlib.sha1(url.encode()).digest(), data


class Nodes:
    """The masters of a target, and their INFO counters."""

    def __init__(self, ports: list[int]) -> None:
        self.clients = [redis.Redis(port=p, socket_timeout=None) for p in ports]

    def used(self) -> list[int]:
        return [int(c.info("memory")["used_memory"]) for c in self.clients]

    def cpu(self) -> list[float]:
        out = []
        for c in self.clients:
            info = c.info("cpu")
            out.append(float(info["used_cpu_sys"]) + float(info["used_cpu_user"]))
        return out

    def calls(self) -> list[int]:
        out = []
        for c in self.clients:
            stats = c.info("commandstats")
            out.append(sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info"))
        return out

    def keys(self) -> list[int]:
        return [int(c.dbsize()) for c in self.clients]

    def close(self) -> None:
        for c in self.clients:
            c.close()


def spread(values: list[float]) -> float:
    """Largest deviation from the mean, as a fraction of the mean."""
    mean = sum(values) / len(values)
    return max(abs(v - mean) for v in values) / mean if mean else 0.0


class Target:
    """A frontier and its masters, with what was measured on them."""

    def __init__(self, name: str, frontier: Any, nodes: Nodes) -> None:
        self.name, self.frontier, self.nodes = name, frontier, nodes
        self.r: dict[str, Any] = {"name": name, "push_s": 0.0, "push_cpu": 0.0, "popped": 0}
        self.r.update(pop_s=0.0, pop_cpu=0.0, sends=0, waits=0)

    def open(self) -> None:
        self.frontier.open()
        self.base_mem, self.base_calls = self.nodes.used(), self.nodes.calls()

    def push(self, batch: list[Any]) -> None:
        cpu, t = sum(self.nodes.cpu()), time.perf_counter()
        self.frontier.push_many(batch, on_results=lambda results: None)
        self.frontier.flush()
        self.r["push_s"] += time.perf_counter() - t
        self.r["push_cpu"] += sum(self.nodes.cpu()) - cpu

    def pushed(self, n: int) -> None:
        self.r["queued"] = len(self.frontier)
        mem = self.nodes.used()
        self.r["mem_per_master"] = [a - b for a, b in zip(mem, self.base_mem, strict=True)]
        self.r["bytes_per_queued"] = sum(self.r["mem_per_master"]) / n
        self.r["push_cpu_us"] = self.r["push_cpu"] / n * 1e6
        self.r["keys_per_master"] = self.nodes.keys()
        self.calls = self.nodes.calls()
        self.r["push_calls_per_master"] = [
            a - b for a, b in zip(self.calls, self.base_calls, strict=True)
        ]

    def pop(self, count: int) -> None:
        f = self.frontier
        cpu, t, sends, waits = sum(self.nodes.cpu()), time.perf_counter(), f.sends, f.waits
        for _ in range(count):
            entry = f.pop()
            if entry is None:
                break
            f.ack(entry.fingerprint)
            self.r["popped"] += 1
        f.flush()
        self.r["pop_s"] += time.perf_counter() - t
        self.r["pop_cpu"] += sum(self.nodes.cpu()) - cpu
        self.r["sends"] += f.sends - sends
        self.r["waits"] += f.waits - waits

    def popped(self) -> dict[str, Any]:
        r, n = self.r, max(self.r["popped"], 1)
        calls = self.nodes.calls()
        r["pop_calls_per_master"] = [a - b for a, b in zip(calls, self.calls, strict=True)]
        r["calls_per_pop"] = sum(r["pop_calls_per_master"]) / n
        r["pop_cpu_us"] = r["pop_cpu"] / n * 1e6
        r["sends_per_pop"], r["waits_per_pop"] = r["sends"] / n, r["waits"] / n
        if r["popped"] == r["queued"]:  # drained: what is left is the seen set
            mem = self.nodes.used()
            seen = sum(a - b for a, b in zip(mem, self.base_mem, strict=True))
            r["bytes_per_seen"] = seen / n
        self.frontier.close()
        self.nodes.close()
        return r


def run(targets: list[Target], n: int, hosts: int, pops: int) -> list[dict[str, Any]]:
    """Each phase side by side: a batch (of pushes, then of pops) to each target in turn."""
    for target in targets:
        target.open()
    batch: list[Any] = []
    t0 = time.perf_counter()
    for i, item in enumerate(workload(n, hosts), 1):
        batch.append(item)
        if len(batch) == BATCH or i == n:
            for target in targets:
                target.push(batch)
            batch = []
            if i % 1_000_000 < BATCH:
                print(f"  {i:,} URLs pushed in {time.perf_counter() - t0:.0f}s", flush=True)
    for target in targets:
        target.pushed(n)
    for _ in range(0, pops, POP_CHUNK):
        for target in targets:
            target.pop(POP_CHUNK)
    return [target.popped() for target in targets]


def show(r: dict[str, Any]) -> None:
    print(
        f"{r['name']:<22} queued {r['queued']:>10,}  {r['bytes_per_queued']:7.1f} B/queued URL  "
        f"push {r['push_s']:7.1f}s ({r['push_cpu_us']:5.1f} µs Redis CPU/URL)  "
        f"pop+ack {r['popped']:,} in {r['pop_s']:.1f}s ({r['pop_cpu_us']:5.1f} µs Redis CPU, "
        f"{r['calls_per_pop']:.2f} Redis commands incl. inside scripts, "
        f"{r['sends_per_pop']:.2f} sends and {r['waits_per_pop']:.2f} waits per pop+ack)"
    )
    if "bytes_per_seen" in r:
        print(f"    {r['bytes_per_seen']:.1f} B per seen (popped and acknowledged) URL")
    if len(r["mem_per_master"]) > 1:
        for label in (
            "mem_per_master",
            "keys_per_master",
            "push_calls_per_master",
            "pop_calls_per_master",
        ):
            values = r[label]
            print(f"    {label:<22} {values}  spread ±{spread(values) * 100:.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--pops", type=int, default=20_000)
    parser.add_argument("--masters", type=int, default=3)
    parser.add_argument("--shards", type=int, default=0, help="0: 16 per master")
    parser.add_argument("--only", choices=("single", "cluster"), default=None)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fc-bench-cluster-"))
    targets: list[Target] = []
    server, cluster = None, None
    try:
        if args.only != "cluster":
            from bench_cluster_memory import Server  # one plain redis-server, no persistence

            server = Server()
            frontier = RedisFrontier(server.url, "focuscrawl:topical", capacity=args.urls)
            targets.append(Target("one Redis", frontier, Nodes([server.port])))
        if args.only != "single":
            cluster = LocalCluster(workdir / "cluster", masters=args.masters).start()
            sharded = ShardedRedisFrontier(
                cluster.url, "focuscrawl:topical", shards=args.shards, capacity=args.urls
            )
            name = f"cluster, {args.masters} masters"
            targets.append(Target(name, sharded, Nodes(cluster.ports)))
        results = run(targets, args.urls, args.hosts, args.pops)
    finally:
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.stop()
    for r in results:
        show(r)
    if len(results) == 2:
        one, many = results
        for key, label in (
            ("bytes_per_queued", "memory per queued URL"),
            ("push_cpu_us", "Redis CPU per push"),
            ("pop_cpu_us", "Redis CPU per pop+ack"),
            ("calls_per_pop", "Redis commands per pop+ack"),
            ("bytes_per_seen", "memory per seen URL"),
            ("sends_per_pop", "sends per pop+ack"),
        ):
            if key in one and key in many:
                print(f"cluster / one Redis, {label}: {many[key] / one[key]:.3f}")


if __name__ == "__main__":
    main()
