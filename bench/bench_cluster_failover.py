"""What a master's failover loses: pushes acknowledged by a Redis Cluster master that its replica
had not received when the master was SIGKILLed (asynchronous replication, no ``WAIT``).

A local cluster of 3 masters with a replica each (no persistence). One client pushes URLs
through the sharded frontier in batches (``push_many``, each batch acknowledged before the
next); a thread SIGKILLs the master of a shard mid-way, at no particular moment. The frontier
finds the promoted replica and goes on. Then every queued URL is counted: acknowledged as added
but missing = lost. Also: how long the pushes were stalled by the failover.

    .venv/bin/python bench/bench_cluster_failover.py [--urls 200000] [--kill-after 2.0]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from focuseval.localcluster import LocalCluster  # noqa: E402

from focuscrawl.frontier.base import PushResult  # noqa: E402
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier  # noqa: E402

BATCH = 500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--kill-after", type=float, default=2.0, help="seconds into the pushes")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fc-bench-failover-"))
    cluster = LocalCluster(workdir, masters=3, replicas=1, node_timeout_ms=1000).start()
    try:
        frontier = ShardedRedisFrontier(cluster.url, "fo:topical", shards=48, retry_timeout=120)
        frontier.open()
        victim = int(frontier.shards[0].url.rsplit(":", 1)[1].split("/")[0])
        killed = threading.Event()

        def kill() -> None:
            if not killed.wait(args.kill_after):  # a timed kill, at no particular moment
                cluster.kill(victim)
                killed.set()

        killer = threading.Thread(target=kill, daemon=True)
        acked: list[str] = []
        slowest, start = 0.0, time.perf_counter()
        killer.start()
        for first in range(0, args.urls, BATCH):
            items = []
            for i in range(first, min(first + BATCH, args.urls)):
                url = f"https://www.site{i % 5000}.example.org/p/{i}"
                items.append(
                    (url, (i * 7919 % 10007) / 10007, hashlib.sha1(url.encode()).digest(), {})
                )
            t = time.perf_counter()
            results = frontier.push_many(items)
            slowest = max(slowest, time.perf_counter() - t)
            assert results is not None
            acked += [
                item[0] for item, r in zip(items, results, strict=True) if r is PushResult.ADDED
            ]
        took = time.perf_counter() - start
        if not killed.is_set():
            killed.set()
            print("the pushes ended before the kill: raise --urls or lower --kill-after")
        queued = len(frontier)
        frontier.close()
    finally:
        cluster.stop()
    print(
        f"{len(acked):,} pushes acknowledged in {took:.1f}s; master :{victim} SIGKILLed "
        f"{args.kill_after}s in; longest stall {slowest:.1f}s (failover and reconnect)"
    )
    # every URL is new: a push answered "queued" was sent again after the failover and had
    # reached the replica the first time
    print(
        f"queued after failover: {queued:,} of {args.urls:,} pushed; lost: {args.urls - queued:,}; "
        f"sent again and found already queued: {args.urls - len(acked):,}"
    )


if __name__ == "__main__":
    main()
