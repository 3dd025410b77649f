"""Round trips, commands and Redis CPU per page, one Redis against a 3-master cluster, with the
crawl's own call pattern: pop (sent ahead, with the popped URL's change-store read), the
change store's read of the popped URL, then the page's links and its ack queued
(``push_many(..., on_results=...)``, sent with the next pop). Pages alternate between the two
targets, 250 at a time; ``INFO commandstats`` and ``INFO cpu`` of every master.

    .venv/bin/python bench/bench_cluster_roundtrips.py [--urls 20000] [--pages 4000]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cluster_memory import Server  # noqa: E402
from bench_cluster_shards import Nodes, workload  # noqa: E402
from focuseval.localcluster import LocalCluster  # noqa: E402

import focuscrawl.change.store_redis as store_redis  # noqa: E402
from focuscrawl.change.store_redis import RedisChangeStore, prefetch_command  # noqa: E402
from focuscrawl.frontier.redis_frontier import RedisFrontier  # noqa: E402
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier  # noqa: E402
from focuscrawl.frontier.rediswire import Pipeline  # noqa: E402

CHUNK = 250
LINKS = 3  # new links per page


class Counted:
    """How often the change store waited for Redis itself (a read not served ahead), and how
    often the frontier read a reply that had not arrived yet (a round trip waited for)."""

    calls = 0
    blocked = 0


_run = RedisChangeStore._run
_read_replies = Pipeline.read_replies


def _counted_read_replies(self: Pipeline, upto: Any) -> list[Any]:
    if not self.arrived():
        Counted.blocked += 1
    return _read_replies(self, upto)


def _counted_run(self: RedisChangeStore, shared: Any, build: Any = None) -> list[Any]:
    Counted.calls += 1
    return _run(self, shared, build)


def in_commands(nodes: Nodes) -> float:
    """Microseconds spent inside the commands this bench sends (``INFO commandstats`` usec of
    EVALSHA, EVAL, HMGET, ZRANGE: a script's own calls are inside its time; ZRANGE is also
    called by scripts, a small overlap), summed over the masters."""
    sent = ("cmdstat_evalsha", "cmdstat_eval", "cmdstat_hmget", "cmdstat_zrange")
    total = 0.0
    for c in nodes.clients:
        stats = c.info("commandstats")
        total += sum(float(stats[name].get("usec", 0)) for name in sent if name in stats)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=20_000)
    parser.add_argument("--pages", type=int, default=4_000)
    args = parser.parse_args()
    RedisChangeStore._run = _counted_run  # type: ignore[method-assign]
    Pipeline.read_replies = _counted_read_replies  # type: ignore[method-assign]
    store_redis.WRITE_DELAY = 1e9
    n = args.urls
    items = list(workload(n, 1000))
    server = Server()
    three = LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-rt3-")), 3).start()
    targets: dict[str, tuple[Any, Any, Nodes]] = {}
    for name, url, cluster, nodes in (
        ("one Redis", server.url, False, Nodes([server.port])),
        ("3 masters, 48 shards", three.url, True, Nodes(three.ports)),
    ):
        frontier: Any = (ShardedRedisFrontier if cluster else RedisFrontier)(url, "p", capacity=n)
        frontier.pop_ahead = True
        frontier.prefetch = lambda u, wait, url=url: prefetch_command(url, u, wait)
        store = RedisChangeStore(url, "fc:chg", cluster=cluster)
        targets[name] = (frontier, store, nodes)
    try:
        for frontier, store, _ in targets.values():
            store.open()
            frontier.open()
            frontier.push_many(items, on_results=lambda results: None)
            frontier.flush()
        stats: dict[str, dict[str, float]] = {
            name: dict.fromkeys(
                ("cpu", "calls", "usec", "waits", "sends", "store", "blocked", "pages"), 0.0
            )
            for name in targets
        }
        serial = 0
        for _ in range(args.pages // CHUNK):
            for name, (frontier, store, nodes) in targets.items():
                s = stats[name]
                cpu, calls, usec = sum(nodes.cpu()), sum(nodes.calls()), in_commands(nodes)
                waits, sends, stored = frontier.waits, frontier.sends, Counted.calls
                blocked = Counted.blocked
                for _ in range(CHUNK):
                    entry = frontier.pop()
                    if entry is None:
                        break
                    store.get(entry.url)
                    store.record(entry.url, None, "new", 1.0)  # written behind
                    links = []
                    for _ in range(LINKS):
                        serial += 1
                        host = f"www.site{serial % 1000}.example.org"
                        link = f"https://{host}/new/{serial}"
                        score = (serial * 7919 % 1000) / 1000
                        links.append((link, score, hashlib.sha1(link.encode()).digest(), {}))
                    frontier.push_many(links, [entry.fingerprint], lambda results: None)
                    s["pages"] += 1
                s["cpu"] += sum(nodes.cpu()) - cpu
                s["calls"] += sum(nodes.calls()) - calls
                s["usec"] += in_commands(nodes) - usec
                s["waits"] += frontier.waits - waits
                s["sends"] += frontier.sends - sends
                s["store"] += Counted.calls - stored
                s["blocked"] += Counted.blocked - blocked
        base = stats["one Redis"]["cpu"] / stats["one Redis"]["pages"]
        for name, s in stats.items():
            p = s["pages"]
            print(
                f"{name:<22} {s['cpu'] / p * 1e6:6.1f} µs Redis CPU/page ({s['cpu'] / p / base:.2f}x)"
                f"  {s['calls'] / p:5.2f} commands/page ({s['usec'] / p:.0f} µs in them)"
                f"  frontier reads {s['waits'] / p:.2f}"
                f" (blocked {s['blocked'] / p:.2f})  sends {s['sends'] / p:.2f}"
                f"  change-store round trips {s['store'] / p:.2f}"
            )
        for frontier, store, nodes in targets.values():
            frontier.close()
            store.close()
            nodes.close()
    finally:
        server.stop()
        three.stop()


if __name__ == "__main__":
    main()
