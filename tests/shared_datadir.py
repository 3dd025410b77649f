"""Redis-fed workers sharing one data directory, one SIGKILLed (issue 29): the scenario.

Run by ``tests/test_faults_shared_datadir.py`` (small) and ``bench/bench_shared_datadir.py``
(measured). ``workers`` crawls of one web with the same ``REDIS_URL`` and the same
``FOCUSCRAWL_DATA_DIR`` (one SQLite index, as scrapyd jobs in one folder), each its own crawl
log and stats file; the first is SIGKILLed once it crawled ``kill_after`` pages, the others
run to the end. What it tells:

* ``live_duplicates``: pages fetched more than once by the workers that were never killed
  (a lease that expired under a live worker: target 0). Pages the killed worker had fetched and
  a live one fetched again (its in-flight, expected) are counted apart (``refetched``);
* ``lock_stops``: workers that stopped on the index's lock, or exited non-zero (target 0);
* each live worker's reactor lag (``focuscrawl/reactor/lag_p99_ms``, ``…/lag_max_ms``,
  ``…/busy_lag_p99_ms``: the share of the lag the worker itself was busy) and its longest wait
  for an index write turn, all over the whole crawl, the kill included.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fault_crawl import BFS, CrawlProcess, crawl_args, topic_file

LOCK_LINE = ("locked by another process", "write turn")


@dataclass
class SharedRun:
    codes: list[int] = field(default_factory=list)
    fetched: int = 0  # distinct pages fetched by any worker
    live_duplicates: int = 0
    refetched: int = 0
    lock_stops: int = 0
    lags: list[dict[str, float]] = field(default_factory=list)  # per live worker
    logs: list[str] = field(default_factory=list)

    def lag(self, key: str) -> float:
        return max((lag.get(key, 0.0) for lag in self.lags), default=0.0)


def fetches(log: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    if not log.exists():
        return counts
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # the line being written at the kill
            continue
        if record.get("status") == 200 and record.get("relevance") is not None:
            counts[record["url"]] += 1
    return counts


def shared_datadir_run(
    web: Any,
    work: Path,
    redis_url: str,
    workers: int = 3,
    kill_after: int = 60,
    extra: tuple[str, ...] = (),
    timeout: float = 300,
) -> SharedRun:
    topic = topic_file(work, web)
    args = [*BFS, "-s", f"REDIS_URL={redis_url}", "-s", "FOCUSCRAWL_REDIS_LEASE=5"]
    args += ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True", *extra]  # what a shared dir needs
    crawls = [
        CrawlProcess(work, "topical", crawl_args(web, topic, work, run, *args))
        for run in range(1, workers + 1)
    ]
    run = SharedRun()
    try:
        crawls[0].wait_for_pages(kill_after)
        crawls[0].kill()
        run.codes = [c.finish(timeout=timeout) for c in crawls]
    finally:
        for c in crawls:
            c.kill()
    run.logs = [c.log for c in crawls]
    counts = [fetches(work / f"log{n}.jsonl") for n in range(1, workers + 1)]
    live: Counter[str] = Counter()
    for c in counts[1:]:
        live.update(c)
    run.fetched = len(set().union(*counts))
    run.live_duplicates = sum(n - 1 for n in live.values() if n > 1)
    run.refetched = sum(1 for url in counts[0] if url in live)
    for n, (code, log) in enumerate(zip(run.codes, run.logs, strict=True)):
        if n == 0:
            continue  # the killed one
        if code != 0 or any(line in log for line in LOCK_LINE):
            run.lock_stops += 1
        stats_path = work / f"stats{n + 1}.json"
        stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
        run.lags.append(
            {
                key.rsplit("/", 1)[1]: float(stats.get(key, 0.0))
                for key in (
                    "focuscrawl/reactor/lag_p99_ms",
                    "focuscrawl/reactor/lag_max_ms",
                    "focuscrawl/reactor/busy_lag_p99_ms",
                    "focuscrawl/index/turn_wait_max_ms",
                )
            }
        )
    return run
