"""Settings → frontier backend. The scheduler calls this; backends never read settings."""

from __future__ import annotations

import os
from typing import Any

from focuscrawl.frontier.base import Frontier
from focuscrawl.frontier.memory import MemoryFrontier


def redis_url(settings: Any) -> str:
    return settings.get("FOCUSCRAWL_REDIS_URL") or settings.get("REDIS_URL") or ""


def build_frontier(settings: Any, spider_name: str) -> Frontier:
    backend = settings.get("FOCUSCRAWL_FRONTIER", "memory")
    if backend == "redis" or (backend == "memory" and redis_url(settings)):
        from focuscrawl.frontier.redis import RedisFrontier  # optional dependency

        return RedisFrontier.from_settings(settings, spider_name)
    jobdir = settings.get("JOBDIR")
    journal = os.path.join(jobdir, "frontier.jsonl") if jobdir else None
    return MemoryFrontier(journal)
