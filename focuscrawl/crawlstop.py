"""Stop a crawl from inside a component (a pipeline, the scheduler) with a close reason."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem, IgnoreRequest

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


#: the exit status of ``scrapy crawl`` when a storage fault stopped the crawl (resumable)
STORAGE_FAULT_EXIT = 4
#: the exit status of ``scrapy crawl`` when Redis lost the frontier mid-crawl
FRONTIER_LOST_EXIT = 5


class HeldItem(DropItem):
    """An item a storage fault stopped, or one still waiting for a store when the crawl stops:
    its page is not acknowledged, and its visit not recorded, so the resumed crawl fetches it
    again. Logged at DEBUG: the fault itself had its one ERROR line."""

    def __init__(self, fault: BaseException) -> None:
        super().__init__(f"held back: {fault}", log_level="DEBUG")
        self.fault = fault


class Unfinished(IgnoreRequest):
    """A request given up because the crawl is stopping (it waited for Redis): the spider's
    errback does not acknowledge it, so it is fetched again when the crawl goes on."""


def started_engine(crawler: Crawler | None) -> Any:
    """The crawler's engine, or None before the crawl started (Scrapy raises until then) or
    without a crawler."""
    try:
        return crawler.engine if crawler is not None else None
    except Exception:  # noqa: BLE001 (not started)
        return None


def engine_stopping(crawler: Crawler | None) -> bool:
    """Whether the crawler's engine is shutting down (a signal, or a close)."""
    try:
        engine = crawler.engine if crawler is not None else None
    except Exception:  # noqa: BLE001 (not started)
        return False
    if engine is None:
        return False
    slot = getattr(engine, "_slot", None)
    return not getattr(engine, "running", True) or (slot is not None and slot.closing is not None)


def stop_crawl(crawler: Crawler | None, reason: str, exit_status: int = 0) -> bool:
    """Close the crawler's spider with ``reason`` (once: a later call while it closes is a
    no-op); False when there is no engine to ask. ``exit_status`` (when not 0) becomes the
    stat ``focuscrawl/exit_status``, the project's ``scrapy crawl`` exit status."""
    stats = getattr(crawler, "stats", None)
    if exit_status and stats is not None and not stats.get_value("focuscrawl/exit_status"):
        stats.set_value("focuscrawl/exit_status", exit_status)
    try:
        engine = crawler.engine if crawler is not None else None
    except Exception:  # noqa: BLE001 (Scrapy raises until the crawl has started)
        return False
    if engine is None:
        return False
    slot = getattr(engine, "_slot", None)
    if slot is not None and slot.closing is not None:
        return True  # already closing (for this reason or another)
    close = getattr(engine, "close_spider_async", None)
    if close is None:  # an engine without the async API (older Scrapy, a test double)
        engine.close_spider(crawler.spider, reason)  # type: ignore[union-attr]
        return True
    if getattr(engine, "spider", None) is None:
        return False
    from scrapy.utils.defer import deferred_from_coro

    deferred_from_coro(close(reason=reason))
    return True
