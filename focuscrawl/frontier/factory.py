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

__all__ = ["build_frontier", "redis_url"]


def build_frontier(settings: Any, spider_name: str) -> Frontier:
    backend = defaults.read(settings, "FOCUSCRAWL_FRONTIER")
    if backend == "redis" or (backend == "memory" and redis_url(settings)):
        frontier: Any
        if redis_cluster(settings):  # sharded: the record is read on its own master's shard
            from focuscrawl.frontier.redis_shards import ShardedRedisFrontier

            frontier = ShardedRedisFrontier.from_settings(settings, spider_name)
        else:
            from focuscrawl.frontier.redis_frontier import RedisFrontier  # optional dependency

            frontier = RedisFrontier.from_settings(settings, spider_name)
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
