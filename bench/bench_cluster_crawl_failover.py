"""A master of the Redis Cluster SIGKILLed while real ``topical_redis`` workers crawl: pages lost,
pages fetched twice, and the stall, over several runs.

Each run (:func:`tests.cluster_failover_crawl.crawl_with_failover`): a local cluster of 3 masters
with a replica each (``cluster-node-timeout`` 1 s, no persistence), ``--workers`` workers crawl
a loopback site of 3 hosts × ``--pages-per-host`` pages (every page reachable from the seeds:
an uninterrupted crawl fetches all of them), and once ``--kill-after`` pages are fetched the
master serving the frontier shard of the first host is SIGKILLed (no ``WAIT``: the replica has
what asynchronous replication gave it). Runs alternate between workers whose ``REDIS_URL`` names
the killed master and workers given another node. A reference crawl without the kill comes
first. ``--min-replicas``: one more kill with ``min-replicas-to-write 1`` on every node, where
the promoted master refuses writes until the killed node is back as its replica. Reported per run: pages lost (never fetched), repeats (fetches beyond the first),
re-deliveries counted in Redis (expired leases), change-store records, the longest pause of a
worker's frontier ("is back after"), the longest gap between two fetches from the killed
master's host after the kill, and the crawl's time.

    .venv/bin/python bench/bench_cluster_crawl_failover.py [--runs 4] [--lease 5] [--min-replicas]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cluster_failover_crawl import crawl_with_failover  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument(
        "--first", type=int, default=0, help="start with kill #first+1 (alternation of the URL)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pages-per-host", type=int, default=60)
    parser.add_argument("--kill-after", type=int, default=40)
    parser.add_argument(
        "--lease", type=float, default=5.0, help="FOCUSCRAWL_REDIS_LEASE of the workers"
    )
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep each run's logs")
    parser.add_argument(
        "--min-replicas",
        action="store_true",
        help="one more kill with min-replicas-to-write 1 on every node (the killed node is "
        "restarted, as the promoted master's replica, once a worker logs NOREPLICAS)",
    )
    args = parser.parse_args()
    head = (
        f"{'run':<22} {'pages':>5} {'killed at':>9} {'lost':>4} {'repeats':>7} "
        f"{'redeliv.':>8} {'records':>7} {'paused s':>8} {'gap s':>6} {'took s':>6}"
    )
    print(
        f"{args.workers} workers, lease {args.lease:g}s, site of {3 * args.pages_per_host} pages, "
        f"master SIGKILLed after {args.kill_after} pages\n{head}"
    )
    plan = [("reference (no kill)", False, True, False)] if not args.no_reference else []
    plan += [
        (f"kill #{i + 1}, URL " + ("= victim" if i % 2 == 0 else "other"), True, i % 2 == 0, False)
        for i in range(args.first, args.first + args.runs)
    ]
    if args.min_replicas:
        plan.append(("kill, min-replicas 1", True, True, True))
    totals = {"lost": 0, "repeats": 0, "redelivered": 0}
    stalls: list[float] = []
    for label, kill, through_victim, min_replicas in plan:
        work = Path(tempfile.mkdtemp(prefix="fc-bench-crawl-failover-"))
        try:
            run = crawl_with_failover(
                work,
                workers=args.workers,
                pages_per_host=args.pages_per_host,
                kill_after=args.kill_after,
                kill=kill,
                lease=args.lease,
                through_victim=through_victim,
                min_replicas=min_replicas,
            )
        except BaseException:
            print(f"{label}: failed; logs and Redis state in {work}")
            raise
        print(
            f"{label:<22} {run.pages:>5} {run.killed_at if kill else '-':>9} {len(run.lost):>4} "
            f"{run.repeats:>7} {run.redelivered:>8} {run.records:>7} {run.paused:>8.1f} "
            f"{run.stall if kill else 0.0:>6.1f} {run.took:>6.1f}"
            + (f"  exit codes {run.codes}" if any(run.codes) else "")
            + (f"  {len(run.errors)} error lines" if run.errors else "")
            + (f"  ({run.refused} workers refused NOREPLICAS)" if min_replicas else ""),
            flush=True,
        )
        if kill:
            totals["lost"] += len(run.lost)
            totals["repeats"] += run.repeats
            totals["redelivered"] += run.redelivered
            stalls.append(run.paused)
        if args.keep:
            print(f"  logs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if stalls:
        print(
            f"over {len(stalls)} kills: {totals['lost']} pages lost, {totals['repeats']} "
            f"repeats, {totals['redelivered']} re-deliveries; frontier paused "
            f"{min(stalls):.1f}-{max(stalls):.1f}s"
        )


if __name__ == "__main__":
    main()
