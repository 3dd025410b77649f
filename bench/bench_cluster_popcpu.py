"""Where a Redis Cluster's extra CPU per pop + ack goes: one Redis against clusters of 1 and 3
masters, with 1 or 16 shards per master, with and without the head probes, side by side.

Every target gets the same 60,000 URLs; then 250 pops + acks at a time on each in turn
(``--pops`` in all per target); Redis CPU (``INFO cpu``, summed over the masters) per pop + ack.

    .venv/bin/python bench/bench_cluster_popcpu.py [--urls 60000] [--pops 8000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cluster_memory import Server  # noqa: E402
from bench_cluster_shards import Nodes, workload  # noqa: E402
from focuseval.localcluster import LocalCluster  # noqa: E402

import focuscrawl.frontier.redis_shards as shards  # noqa: E402
from focuscrawl.frontier.redis_frontier import RedisFrontier  # noqa: E402

CHUNK = 250


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=60_000)
    parser.add_argument("--pops", type=int, default=8_000)
    args = parser.parse_args()
    n = args.urls
    items = list(workload(n, 1000))
    server = Server()
    three = LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-pop3-")), 3).start()
    one = LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-pop1-")), 1).start()
    sharded = shards.ShardedRedisFrontier
    targets: dict[str, tuple[Any, Nodes]] = {
        "one Redis": (RedisFrontier(server.url, "p", capacity=n), Nodes([server.port])),
        "3 masters, 48 shards": (sharded(three.url, "p", capacity=n), Nodes(three.ports)),
        "3 masters, 48 shards, no probes": (
            sharded(three.url, "q", capacity=n),
            Nodes(three.ports),
        ),
        "1 master, 16 shards": (sharded(one.url, "p", capacity=n), Nodes(one.ports)),
        "1 master, 1 shard": (sharded(one.url, "q", shards=1, capacity=n), Nodes(one.ports)),
    }
    try:
        for frontier, _ in targets.values():
            frontier.open()
            frontier.push_many(items, on_results=lambda results: None)
            frontier.flush()
        cpu = dict.fromkeys(targets, 0.0)
        sends = dict.fromkeys(targets, 0)
        for _ in range(args.pops // CHUNK):
            for name, (frontier, nodes) in targets.items():
                shards.PROBE_EVERY = 10**9 if name.endswith("no probes") else 4
                before, sent = sum(nodes.cpu()), frontier.sends
                for _ in range(CHUNK):
                    entry = frontier.pop()
                    frontier.ack(entry.fingerprint)
                frontier.flush()
                cpu[name] += sum(nodes.cpu()) - before
                sends[name] += frontier.sends - sent
        done = args.pops // CHUNK * CHUNK
        base = cpu["one Redis"]
        for name in targets:
            print(
                f"{name:<32} {cpu[name] / done * 1e6:7.1f} µs Redis CPU per pop+ack "
                f"({cpu[name] / base:.2f}x), {sends[name] / done:.2f} sends"
            )
        for frontier, nodes in targets.values():
            frontier.close()
            nodes.close()
    finally:
        shards.PROBE_EVERY = 4
        server.stop()
        three.stop()
        one.stop()


if __name__ == "__main__":
    main()
