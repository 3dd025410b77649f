"""Settings → frontier backend. The scheduler calls this; backends never read settings."""

from __future__ import annotations

import os
from typing import Any

from focuscrawl import defaults
from focuscrawl.frontier.base import Frontier
from focuscrawl.frontier.connection import redis_cluster, redis_url
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.prefetch import load_prefetch
from focuscrawl.frontier.quarantine import QUARANTINE_FILE
from focuscrawl.frontier.workmark import MARK_FILE, WORKER_MARK

__all__ = ["build_frontier", "redis_url", "work_mark_path"]


def work_mark_path(settings: Any) -> str | None:
    """The work mark of this process (:mod:`focuscrawl.frontier.workmark`), or None when
    there is no quarantine: ``JOBDIR/working.mark`` for a JOBDIR crawl, else (Redis) a slot per
    process in JOBDIR or the data directory, where a restarted worker finds the dead ones."""
    if defaults.read(settings, "FOCUSCRAWL_QUARANTINE_AFTER") <= 0:
        return None
    jobdir = settings.get("JOBDIR")
    if _redis_backend(settings):
        where = jobdir or defaults.read(settings, "FOCUSCRAWL_DATA_DIR")
        return os.path.join(where, WORKER_MARK.format(pid=os.getpid()))
    return os.path.join(jobdir, MARK_FILE) if jobdir else None


def _redis_backend(settings: Any) -> bool:
    backend = defaults.read(settings, "FOCUSCRAWL_FRONTIER")
    return backend == "redis" or (backend == "memory" and bool(redis_url(settings)))


def build_frontier(settings: Any, spider_name: str) -> Frontier:
    if _redis_backend(settings):
        frontier: Any
        if redis_cluster(settings):  # sharded: the record is read on its own master's shard
            from focuscrawl.frontier.redis_shards import ShardedRedisFrontier

            frontier = ShardedRedisFrontier.from_settings(settings, spider_name)
        else:
            from focuscrawl.frontier.redis_frontier import RedisFrontier  # optional dependency

            frontier = RedisFrontier.from_settings(settings, spider_name)
        mark = work_mark_path(settings)
        frontier.mark_dir = os.path.dirname(mark) if mark else None
        # the change store's read sent with each pop: handed in, named by a setting
        prefetch = load_prefetch(defaults.read(settings, "FOCUSCRAWL_FRONTIER_PREFETCH") or "")
        if prefetch is not None:
            frontier.prefetch = lambda url, wait: prefetch(frontier.url, url, wait)
        return frontier
    jobdir = settings.get("JOBDIR")
    journal = os.path.join(jobdir, "frontier.jsonl") if jobdir else None
    return MemoryFrontier(
        journal,
        quarantine_after=defaults.read(settings, "FOCUSCRAWL_QUARANTINE_AFTER"),
        quarantine_path=os.path.join(jobdir, QUARANTINE_FILE) if jobdir else None,
    )
