"""``FocusScheduler``: Scrapy's ``SCHEDULER`` over a focuscrawl frontier.

Scores are floats read from ``request.meta["focuscrawl"]["score"]`` (else the request's
integer priority). The frontier de-duplicates by request fingerprint, moves a URL up when it is
found again with a better score, and pops around hosts whose downloader slot is full, so one
host with many high scores neither starves the others nor stalls the crawl.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler

from focuscrawl.frontier.base import Frontier, PushResult, host_of
from focuscrawl.frontier.factory import build_frontier
from focuscrawl.frontier.requests import FP_META, decode, encode, score_of
from focuscrawl.frontier.urls import url_pattern
from focuscrawl.signals import request_done

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
BATCH = 64  # pushes sent in one round trip at most (batching frontiers)


class FocusScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        host_slots: int = 0,
        max_pages_per_host: int = 0,
        max_pages_per_pattern: int = 0,
    ) -> None:
        self.crawler = crawler
        self.max_pages_per_pattern = max_pages_per_pattern
        self._per_pattern: Counter[str] = Counter()
        self.stats = crawler.stats
        self.host_slots = host_slots
        self.max_pages_per_host = max_pages_per_host
        self.frontier: Frontier | None = None
        self.spider: Spider | None = None
        self._per_host: Counter[str] = Counter()
        self._live: dict[bytes, Request] = {}  # requests whose fields are not JSON-able
        # a frontier with push_many (Redis) gets new links in batches: sent, with the ack of
        # the page they came from, in one round trip; flushed before any pop, count or ack
        self._batch: list[tuple[Request, tuple[Any, ...]]] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusScheduler:
        s = crawler.settings
        sched = cls(
            crawler,
            host_slots=s.getint("FOCUSCRAWL_HOST_SLOTS")
            or s.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            max_pages_per_host=s.getint("FOCUSCRAWL_MAX_PAGES_PER_HOST"),
            max_pages_per_pattern=s.getint("FOCUSCRAWL_MAX_PAGES_PER_PATTERN"),
        )
        # acknowledged once its outcome is handled: the spider's output consumed
        # (FrontierAckMiddleware) or a final failure (the errback); a lease (Redis) expires
        # for a worker that died first
        crawler.signals.connect(sched._on_done, request_done)
        # a redirect or retry of a popped request replaces it: ack the parent as it is
        # scheduled (sent even when offsite filtering then drops the new request)
        crawler.signals.connect(sched._on_done, signals.request_scheduled)
        return sched

    # -- lifecycle ------------------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.frontier = build_frontier(self.crawler.settings, spider.name)
        self.frontier.open()
        if hasattr(self.frontier, "push_many"):
            self._batch = []
        if len(self.frontier):
            logger.info("Resuming crawl with %d queued URLs", len(self.frontier))

    def close(self, reason: str) -> None:
        if self.frontier is not None:
            self._flush()
            self.stats.set_value("focuscrawl/frontier/left", len(self.frontier))
            self.frontier.close()

    def has_pending_requests(self) -> bool:
        self._flush()
        return self.frontier is not None and len(self.frontier) > 0

    def __len__(self) -> int:
        self._flush()
        return len(self.frontier) if self.frontier is not None else 0

    # -- queue ----------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        assert self.frontier is not None and self.spider is not None
        parent_fp = request.meta.get(FP_META)
        if parent_fp:
            # a redirect or retry of a popped request: the new request replaces it
            self._flush()
            self.frontier.ack(bytes.fromhex(parent_fp))
        host = host_of(request.url)
        if self.max_pages_per_host and self._per_host[host] >= self.max_pages_per_host:
            self.stats.inc_value("focuscrawl/frontier/rejected/host_cap")
            return False
        pattern = url_pattern(request.url) if self.max_pages_per_pattern else ""
        if pattern and self._per_pattern[pattern] >= self.max_pages_per_pattern:
            self.stats.inc_value("focuscrawl/frontier/rejected/pattern_cap")
            return False
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request)
        score = score_of(request)
        try:
            data = encode(request, self.spider)
        except (TypeError, ValueError):
            # not JSON-able (a callback outside the spider, objects in meta): keep it live
            self._live[fingerprint] = request
            data = {"live": 1}
            self.stats.inc_value("focuscrawl/frontier/live_requests")
        item = (request.url, score, fingerprint, data, request.dont_filter)
        if self._batch is not None and not parent_fp:
            self._batch.append((request, item))
            if len(self._batch) >= BATCH:
                self._flush()
            return True  # its outcome (added, upgraded, duplicate) is counted at the flush
        if self._count(request, self.frontier.push(*item)):
            return True
        self._dropped(request)
        return False

    def _flush(self, ack: tuple[bytes, ...] = ()) -> None:
        """Send the batched pushes (then ``ack``) without waiting; their outcomes are counted
        when the frontier reads the reply (with its next pop or count: one round trip for both)."""
        if not self._batch and not ack:
            return
        assert self.frontier is not None
        batch, self._batch = self._batch or [], [] if self._batch is not None else None

        def counted(results: list[PushResult]) -> None:
            for (request, _), result in zip(batch, results, strict=True):
                if not self._count(request, result):
                    self._dropped(request)

        self.frontier.push_many([item for _, item in batch], ack=ack, on_results=counted)  # type: ignore[attr-defined]

    def _count(self, request: Request, result: PushResult) -> bool:
        if result is PushResult.ADDED:
            self._per_host[host_of(request.url)] += 1
            if self.max_pages_per_pattern:
                self._per_pattern[url_pattern(request.url)] += 1
            self.stats.inc_value("focuscrawl/frontier/enqueued")
            return True
        if result is PushResult.UPGRADED:
            self.stats.inc_value("focuscrawl/frontier/upgraded")
            return True
        self.stats.inc_value("focuscrawl/frontier/duplicate")
        if "redirect_urls" in request.meta:
            self.stats.inc_value("focuscrawl/skip/redirect_loop")
            logger.info(
                "Redirect loop or repeat: %s (via %s)",
                request.url,
                request.meta["redirect_urls"][-3:],
            )
        return False

    def _dropped(self, request: Request) -> None:
        """What the engine does when ``enqueue_request`` returns False, for a batched push."""
        self.crawler.signals.send_catch_log(
            signals.request_dropped, request=request, spider=self.spider
        )

    def next_request(self) -> Request | None:
        assert self.frontier is not None and self.spider is not None
        self._flush()
        entry = self.frontier.pop(self._busy)
        if entry is None:
            return None
        self.stats.inc_value("focuscrawl/frontier/dequeued")
        if entry.data.get("live"):
            request = self._live.pop(entry.fingerprint, None)
            if request is None:  # a live request from another process (journal or Redis)
                self.stats.inc_value("focuscrawl/frontier/lost_live")
                self.frontier.ack(entry.fingerprint)
                return self.next_request()
            request.meta[FP_META] = entry.fingerprint.hex()
            return request
        return decode(entry.url, entry.fingerprint, entry.data, self.spider)

    def _busy(self, host: str) -> bool:
        """A host is skipped while its downloader slot is full, or (cluster) while its shared
        slots across all workers are taken."""
        engine = self.crawler.engine
        if engine is None:
            return False
        slot = engine.downloader.slots.get(host)
        if slot is not None and len(slot.active) >= self.host_slots:
            return True
        gate = getattr(self.crawler, "focuscrawl_host_gate", None)
        if gate is None:
            return False
        try:
            return gate.busy(host)
        except Exception:  # Redis unreachable: the politeness middleware waits and retries
            return False

    def _on_done(self, request: Request, **kwargs: Any) -> None:
        fp = request.meta.get(FP_META)
        if fp and self.frontier is not None:
            if self._batch is not None:
                self._flush(ack=(bytes.fromhex(fp),))  # the page's links first, then its ack
            else:
                self.frontier.ack(bytes.fromhex(fp))
