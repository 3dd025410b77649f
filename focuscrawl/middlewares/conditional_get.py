"""Conditional GETs from the change store, and the fingerprints of each fetched version.

``ConditionalGetMiddleware`` (downloader middleware):

- ``process_request`` adds ``If-None-Match`` (stored ETag) and ``If-Modified-Since`` (stored
  Last-Modified) for a URL the store knows, unless the request already has them or sets
  ``meta["focuscrawl_no_conditional"]``, or every ``FOCUSCRAWL_CHANGE_VALIDATE_EVERY``-th visit
  of a page (a full GET that catches a server whose validators lie), or once the pipeline saw
  the page change under the same ETag / Last-Modified (``untrusted_validators``);
- ``process_response``: a 304 to such a request is the ``unchanged`` visit — recorded in the store
  at once (no body was downloaded, nothing for the spider to parse; Scrapy's HttpError middleware
  then drops the response), counted as ``focuscrawl/change/unchanged`` and
  ``focuscrawl/change/not_modified_bytes_saved``; a 2xx response whose ``Page`` the partition
  middleware left in ``meta["focuscrawl_page"]`` gets its fingerprints in
  ``meta["focuscrawl_fingerprints"]`` (a dict, :meth:`Fingerprints.to_dict`).

Register it BELOW the partition middleware (e.g. 80 when partition is at 90): responses go
through downloader middlewares in decreasing order, so it then sees the parsed page.

``ChangeFingerprintMiddleware`` (spider middleware) copies ``meta["focuscrawl_fingerprints"]``
into the ``fingerprints`` field of the items a response yields, for the change pipeline.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter, is_item
from scrapy import signals
from scrapy.exceptions import CloseSpider, NotConfigured

from focuscrawl import defaults
from focuscrawl.change.fingerprint import fingerprint
from focuscrawl.change.store import ChangeStore, StoreError, open_store
from focuscrawl.change.watch import ignore_rules, rule_for, watch_rules_of, watched_content
from focuscrawl.credentials import RedisAuthError, first_report
from focuscrawl.meta import (
    CONDITIONAL_SENT_META,
    FINGERPRINTS_META,
    NO_CONDITIONAL_META,
    PAGE_META,
)
from focuscrawl.pipelines.change import UNTRUSTED_VALIDATORS, thresholds_from
from focuscrawl.pipelines.store_wait import transient_store_error
from focuscrawl.topic import WatchRule

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class ConditionalGetMiddleware:
    def __init__(self, crawler: Crawler, *, conditional: bool = True) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.stats = crawler.stats
        self.conditional = conditional
        self.thresholds = thresholds_from(crawler.settings)
        self.validate_every = defaults.read(crawler.settings, "FOCUSCRAWL_CHANGE_VALIDATE_EVERY")
        self.store: ChangeStore | None = None
        self.watch: tuple[WatchRule, ...] = ()  # the topic's watch rules, when the spider opens

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ConditionalGetMiddleware:
        if not defaults.read(crawler.settings, "FOCUSCRAWL_CHANGE_ENABLED"):
            raise NotConfigured("FOCUSCRAWL_CHANGE_ENABLED is off")
        mw = cls(crawler, conditional=defaults.read(crawler.settings, "FOCUSCRAWL_CONDITIONAL_GET"))
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_opened(self, spider: Spider | None = None) -> None:
        # the topic file's watch rules: their ignore patterns are noise, a selector limits
        # what is compared on the pages it matches (focuscrawl.change.watch)
        self.watch = watch_rules_of(spider or getattr(self.crawler, "spider", None))
        if self.watch:
            noise = self.thresholds.noise + ignore_rules(self.watch)
            self.thresholds = dataclasses.replace(self.thresholds, noise=noise)
        if self.conditional:
            store = open_store(self.settings)
            try:
                store.open()
            except StoreError as exc:  # e.g. Redis refused the password: one line, then stop
                logger.log(*first_report(str(exc)))
                auth = isinstance(exc.__cause__, RedisAuthError)
                raise CloseSpider("redis_auth" if auth else "change_store") from None
            self.store = store

    def spider_closed(self, spider: Spider | None = None) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            try:
                store.close()  # the last user of a Redis store writes its queued visits here
            except StoreError as exc:  # Redis away: visits of pages the index already has
                self._inc("store_error")
                logger.error("change store: closing failed: %s", exc)

    def _inc(self, what: str, n: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"focuscrawl/change/{what}", n)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self.store is None or request.meta.get(NO_CONDITIONAL_META):
            return None
        if b"If-None-Match" in request.headers or b"If-Modified-Since" in request.headers:
            return None
        try:
            record = self.store.get(request.url)
        except StoreError as exc:  # a plain GET still works: log, count, go on
            logger.warning("conditional GET skipped for %s: %s", request.url, exc)
            self._inc("store_error")
            return None
        fp = record.fingerprints if record is not None and not record.deleted else None
        if fp is None or not (fp.etag or fp.last_modified):
            return None
        if record.features.get(UNTRUSTED_VALIDATORS):  # type: ignore[union-attr]
            self._inc("untrusted_validators")
            return None
        if self.validate_every and len(record.history) % self.validate_every == 0:  # type: ignore[union-attr]
            self._inc("validation_fetches")  # a full GET now and then: catches lying servers
            return None
        if fp.etag:
            request.headers[b"If-None-Match"] = fp.etag
        if fp.last_modified:
            request.headers[b"If-Modified-Since"] = fp.last_modified
        request.meta[CONDITIONAL_SENT_META] = fp.size
        self._inc("conditional_requests")
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if response.status == 304 and CONDITIONAL_SENT_META in request.meta:
            self._record_not_modified(request)
        elif 200 <= response.status < 300 and request.meta.get(PAGE_META) is not None:
            headers = {
                k.decode("latin-1"): v.decode("latin-1")
                for k, v in (
                    (b"ETag", response.headers.get(b"ETag")),
                    (b"Last-Modified", response.headers.get(b"Last-Modified")),
                )
                if v
            }
            fp = fingerprint(
                request.meta[PAGE_META], response.body, headers, thresholds=self.thresholds
            )
            rule = rule_for(self.watch, response.url) if self.watch else None
            if rule is not None and rule.selector:
                mask = self.thresholds.mask_dates
                noise = self.thresholds.noise
                fp.set_content(
                    watched_content(response.body, response.url, rule, mask_dates=mask, noise=noise)
                )
                self._inc("watch/selected")
            request.meta[FINGERPRINTS_META] = fp.to_dict()
        return response

    def _record_not_modified(self, request: Request) -> None:
        self._inc("unchanged")
        self._inc("not_modified_bytes_saved", int(request.meta.get(CONDITIONAL_SENT_META) or 0))
        if self.store is None:
            return
        try:
            self.store.record(request.url, None, "unchanged", time.time())
        except StoreError as exc:
            self._inc("store_error")
            logger.error("change store failed recording a 304 of %s: %s", request.url, exc)
            if transient_store_error(exc):  # Redis away or full: a visit of history, no more
                return
            if self.crawler.engine is not None:
                self.crawler.engine.close_spider(self.crawler.spider, "change_store_error")


class ChangeFingerprintMiddleware:
    """Spider middleware: put the response's fingerprints on the items it yields."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangeFingerprintMiddleware:
        if not defaults.read(crawler.settings, "FOCUSCRAWL_CHANGE_ENABLED"):
            raise NotConfigured("FOCUSCRAWL_CHANGE_ENABLED is off")
        return cls()

    @staticmethod
    def _fill(response: Response, obj: Any) -> Any:
        fps = response.meta.get(FINGERPRINTS_META)
        if fps and is_item(obj):
            adapter = ItemAdapter(obj)
            if "fingerprints" in adapter.field_names() and not adapter.get("fingerprints"):
                adapter["fingerprints"] = dict(fps)
        return obj

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        for obj in result:
            yield self._fill(response, obj)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for obj in result:
            yield self._fill(response, obj)
