"""The scheduler's frontier calls, guarded against the faults of what the frontier stands on.

* A storage fault of the JOBDIR journal (a full disk, a read-only JOBDIR): one error line, the
  spider closes (reason ``storage_full`` / ``storage_error``); the journal took no partial record
  and no later one (:mod:`focuscrawl.frontier.journal`), so the crawl resumes from it.
* Redis away or full (:class:`~focuscrawl.frontier.redis_health.FrontierUnavailable`): the
  crawl pauses (:class:`~focuscrawl.frontier.outage.FrontierOutage`), the reactor goes on.
* Redis lost the frontier (:class:`~focuscrawl.frontier.redis_health.FrontierLost`: the crawl's
  epoch key is gone, checked with every count of what is queued): one error line, the spider
  closes (reason ``redis_lost``, exit status 5) instead of finishing on an empty queue.
* A Redis worker renews its leases on a timer (:class:`~focuscrawl.frontier.outage.LeaseRenewal`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from focuscrawl.crawlstop import FRONTIER_LOST_EXIT, STORAGE_FAULT_EXIT, stop_crawl
from focuscrawl.faults import StorageFault, as_fault
from focuscrawl.frontier.outage import FrontierOutage, LeaseRenewal
from focuscrawl.frontier.redis_health import FrontierLost, FrontierUnavailable

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
T = TypeVar("T")


class FrontierGuard:
    def __init__(self, crawler: Crawler, frontier: Any, on_back: Callable[[], None]) -> None:
        self.crawler = crawler
        self.frontier = frontier
        self.fault: StorageFault | FrontierLost | None = None
        redis_like = hasattr(frontier, "resume") and hasattr(frontier, "nonblocking")
        self.outage = (
            FrontierOutage(
                frontier,
                crawler.stats,
                on_back,
                give_up_after=float(getattr(frontier, "retry_timeout", 0.0)),
                on_give_up=lambda: stop_crawl(crawler, "redis_unavailable"),
            )
            if redis_like
            else None
        )
        renew = hasattr(frontier, "renew_leases")
        self.renewal = LeaseRenewal(frontier, float(frontier.lease)) if renew else None

    def start(self) -> None:
        if self.outage is not None:
            self.frontier.nonblocking = True
        if self.renewal is not None:
            self.renewal.start()

    def stop(self) -> None:
        if self.outage is not None:
            self.outage.close()
        if self.renewal is not None:
            self.renewal.stop()

    @property
    def paused(self) -> bool:
        """Redis away or full: hand out nothing, keep what comes."""
        return self.outage is not None and self.outage.paused

    @property
    def stopped(self) -> bool:
        """A storage fault stopped the crawl: the frontier takes no more writes."""
        return self.fault is not None

    def call(self, fn: Callable[..., T], *args: Any, default: T) -> T:
        """``fn(*args)``, or ``default`` after a fault (the crawl pauses or stops)."""
        try:
            result = fn(*args)
        except FrontierUnavailable as exc:
            self.unavailable(exc)
            return default
        except FrontierLost as exc:
            self.lost(exc)
            return default
        except OSError as exc:
            fault = as_fault(f"frontier journal in JOBDIR {self._jobdir()}", exc)
            if fault is None:
                raise
            self.storage_fault(fault)
            return default
        if getattr(self.frontier, "refused", False):  # a batch of links came back OOM
            self.unavailable(FrontierUnavailable("Redis is full (maxmemory)", "oom"))
        return result

    def unavailable(self, exc: FrontierUnavailable) -> None:
        if self.outage is None:
            raise exc
        self.outage.begin(exc)

    def lost(self, exc: FrontierLost) -> None:
        """Redis lost the frontier: one line, the crawl stops (exit status 5), nothing more is
        written to the empty Redis (it would start a different crawl)."""
        if self.fault is not None:
            return
        self.fault = exc
        self.crawler.stats.inc_value("focuscrawl/frontier/lost")
        logger.error("%s", exc)
        stop_crawl(self.crawler, "redis_lost", FRONTIER_LOST_EXIT)

    def storage_fault(self, fault: StorageFault) -> None:
        if self.fault is not None:
            return
        self.fault = fault
        self.crawler.stats.inc_value("focuscrawl/frontier/storage_error")
        logger.error("%s", fault)
        stop_crawl(self.crawler, fault.reason, STORAGE_FAULT_EXIT)

    def _jobdir(self) -> str:
        return str(self.crawler.settings.get("JOBDIR") or "")
