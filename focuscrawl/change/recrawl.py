"""What the spider's recrawl mode (``-a mode=recrawl``) asks the change store: the due list.

    from focuscrawl.change.recrawl import due_urls
    urls = due_urls(crawler.settings)          # best first, at most FOCUSCRAWL_RECRAWL_BUDGET

New links found while recrawling go to the frontier as usual; the change pipeline then tells
new pages (``new``) from revisited ones.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from focuscrawl.change.store import open_store


def _get(settings: Mapping[str, Any], name: str, default: Any) -> Any:
    value = settings.get(name)
    return default if value in (None, "") else value


def due_urls(settings: Mapping[str, Any], now: float | None = None) -> list[str]:
    """The stored URLs to revisit now, ordered by ``FOCUSCRAWL_RECRAWL_POLICY``."""
    store = open_store(settings)
    store.open()
    try:
        return store.due(
            time.time() if now is None else now,
            int(_get(settings, "FOCUSCRAWL_RECRAWL_BUDGET", 0)),
            str(_get(settings, "FOCUSCRAWL_RECRAWL_POLICY", "cluster")),
            period=float(_get(settings, "FOCUSCRAWL_RECRAWL_PERIOD", 86400.0)),
            sample=float(_get(settings, "FOCUSCRAWL_RECRAWL_SAMPLE", 0.2)),
            threshold=float(_get(settings, "FOCUSCRAWL_RECRAWL_CLUSTER_THRESHOLD", 0.3)),
        )
    finally:
        store.close()
