"""Three Redis-fed workers on one data dir, one SIGKILLed: duplicates, lock stops, reactor lag.

The scenario of issue 29 (``tests/shared_datadir.py``): ``--workers`` crawls of the synthetic
test web with one Redis (frontier and change store) and one ``FOCUSCRAWL_DATA_DIR`` (one SQLite
index), the first SIGKILLed after ``--kill-after`` pages, the others run to the end. Run with
the index written off the reactor in fair turns (the default) and, with ``--inline``, as before
(written on the reactor, SQLite's busy wait). Reported per run: pages fetched, pages fetched
twice by live workers, pages of the killed worker fetched again, workers stopped by the lock,
the live workers' reactor lag p99 / max (and its busy share) and longest index-turn wait.

    .venv/bin/python bench/bench_shared_datadir.py                     # threaded, then inline
    .venv/bin/python bench/bench_shared_datadir.py --pages 600 --runs 2 --modes thread

Targets (issue 29): 0 live-worker duplicates, 0 lock stops, reactor lag p99 < 50 ms.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from focuseval.testweb import TestWebProcess  # noqa: E402

from tests.conftest import RedisServer  # noqa: E402
from tests.shared_datadir import shared_datadir_run  # noqa: E402

MODES = {
    "thread": ("-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True"),
    "inline": ("-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=False"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", type=int, default=300, help="articles per host of the web")
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--kill-after", type=int, default=60)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--modes", default="thread,inline")
    ap.add_argument("--commit-delay", type=float, default=0.3)
    ap.add_argument("--busy-timeout", type=float, default=20.0)
    args = ap.parse_args()
    header = (
        "mode    run  fetched  live_dup  refetched  lock_stops  lag_p99_ms  lag_max_ms  "
        "busy_p99_ms  turn_wait_max_ms"
    )
    print(header)
    with TestWebProcess(corpus="synthetic", pages=args.pages) as web:
        for mode in args.modes.split(","):
            for n in range(1, args.runs + 1):
                with tempfile.TemporaryDirectory(prefix="fc-shared-") as tmp:
                    work = Path(tmp)
                    server = RedisServer(work, appendonly=True)
                    server.start()
                    extra = (
                        *MODES[mode],
                        "-s", f"FOCUSCRAWL_INDEX_COMMIT_DELAY={args.commit_delay}",
                        "-s", f"FOCUSCRAWL_DB_BUSY_TIMEOUT={args.busy_timeout}",
                    )  # fmt: skip
                    try:
                        run = shared_datadir_run(
                            web, work, server.url, args.workers, args.kill_after, extra
                        )
                    finally:
                        server.stop()
                print(
                    f"{mode:7} {n:3}  {run.fetched:7}  {run.live_duplicates:8}  "
                    f"{run.refetched:9}  {run.lock_stops:10}  {run.lag('lag_p99_ms'):10.1f}  "
                    f"{run.lag('lag_max_ms'):10.1f}  {run.lag('busy_lag_p99_ms'):11.1f}  "
                    f"{run.lag('turn_wait_max_ms'):16.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
