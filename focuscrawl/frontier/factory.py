"""Settings → frontier backend. The scheduler calls this; backends never read settings."""

from __future__ import annotations

import os
from typing import Any

from focuscrawl.credentials import with_env_password
from focuscrawl.frontier.base import Frontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.quarantine import QUARANTINE_FILE


def redis_url(settings: Any) -> str:
    """The Redis URL of the settings; its password from ``FOCUSCRAWL_REDIS_PASSWORD`` when it
    has none (print it only through :func:`focuscrawl.credentials.redact_url`)."""
    return with_env_password(
        settings.get("FOCUSCRAWL_REDIS_URL") or settings.get("REDIS_URL") or ""
    )


def build_frontier(settings: Any, spider_name: str) -> Frontier:
    backend = settings.get("FOCUSCRAWL_FRONTIER", "memory")
    if backend == "redis" or (backend == "memory" and redis_url(settings)):
        from focuscrawl.frontier.redis import RedisFrontier  # optional dependency

        return RedisFrontier.from_settings(settings, spider_name)
    jobdir = settings.get("JOBDIR")
    journal = os.path.join(jobdir, "frontier.jsonl") if jobdir else None
    return MemoryFrontier(
        journal,
        quarantine_after=settings.getint("FOCUSCRAWL_QUARANTINE_AFTER", 2),
        quarantine_path=os.path.join(jobdir, QUARANTINE_FILE) if jobdir else None,
    )
