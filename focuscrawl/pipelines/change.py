"""``ChangeDetectionPipeline``: every item gets its change status; a recrawl passes on only news.

For each item it takes the version's fingerprints (``item.fingerprints``, filled from the
response by :class:`~focuscrawl.middlewares.conditional_get.ChangeFingerprintMiddleware`; when
empty, computed from the item's title and text as a fallback), compares them with the stored
version, sets ``item.change`` to ``new``, ``unchanged``, ``insignificant``, ``significant`` or
``deleted`` (an item with status 404/410: a tombstone) and records the visit in the change store.
When something changed, ``item.change_diff`` says what (fragments added, removed and moved, content
links added and removed, block kinds: :meth:`focuscrawl.change.classify.Change.to_dict`).

In recrawl mode (``spider.mode == "recrawl"``) only ``new`` and ``significant`` items and the
``deleted`` tombstones go on to the index and the export; the others are dropped with
``DropItem`` — or, with ``FOCUSCRAWL_CHANGE_DROP = False``, passed on with their status (the index
pipeline ignores them). Stats: ``focuscrawl/change/<status>``, ``focuscrawl/change/dropped``,
``focuscrawl/change/store_error``. A store that fails (Redis lost or unreachable) closes the
spider with the reason ``change_store_error``: history is never lost silently, and the items it
could not take are held back (:class:`~focuscrawl.crawlstop.HeldItem`: their pages are not
acknowledged, so a resumed crawl fetches them again); a full disk or a
read-only data directory closes it with ``storage_full`` / ``storage_error`` (one line). A Redis
store away or full is waited for (:mod:`focuscrawl.pipelines.store_wait`).

With the index after it (:mod:`focuscrawl.pipelines.settle`), the visit is recorded once the item
is through the index (its update committed), so a killed crawl never leaves a version in the
change store that the index lacks; a visit that cannot be recorded then holds its page back
(``focuscrawl.signals.item_held``: not acknowledged, fetched again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from itemadapter import ItemAdapter
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured

from focuscrawl import defaults
from focuscrawl.change.classify import GONE, Change, classify
from focuscrawl.change.content import content_of_text, noise_rules
from focuscrawl.change.fingerprint import Fingerprints, Thresholds, index_hash
from focuscrawl.change.simhash import simhash64
from focuscrawl.change.store import ChangeStore, StoreError, open_store
from focuscrawl.change.store_sqlite import SqliteChangeStore
from focuscrawl.change.terms import document_index
from focuscrawl.change.watch import ignore_rules, price_checked, watch_rules_of
from focuscrawl.crawlstop import STORAGE_FAULT_EXIT, HeldItem, engine_stopping, stop_crawl
from focuscrawl.credentials import RedisAuthError, first_report
from focuscrawl.faults import as_fault
from focuscrawl.pipelines.change_writer import ChangeWriter, QueuedVisit
from focuscrawl.pipelines.settle import Answer, ItemSettlement, durable_pipeline_after
from focuscrawl.pipelines.store_wait import StoreWait, transient_store_error
from focuscrawl.pipelines.visit_writes import VisitWrites
from focuscrawl.signals import item_held, item_write_pending
from focuscrawl.topic import WatchRule

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

PASSED_IN_RECRAWL = frozenset({"new", "significant", "deleted"})
UNTRUSTED_VALIDATORS = "untrusted_validators"  # a feature of the stored record


def lying_validators(old: Fingerprints, new: Fingerprints) -> bool:
    """The body changed but the server kept the same ETag (or Last-Modified, with no ETag)."""
    if new.body_hash == old.body_hash:
        return False
    if new.etag and new.etag == old.etag:
        return True
    return not new.etag and bool(new.last_modified) and new.last_modified == old.last_modified


def thresholds_from(settings: Any) -> Thresholds:
    return Thresholds(
        min_terms=defaults.read(settings, "FOCUSCRAWL_CHANGE_MIN_TERMS"),
        min_fraction=defaults.read(settings, "FOCUSCRAWL_CHANGE_MIN_FRACTION"),
        mask_dates=defaults.read(settings, "FOCUSCRAWL_CHANGE_MASK_DATES"),
        simhash_bits=defaults.read(settings, "FOCUSCRAWL_CHANGE_SIMHASH_BITS"),
        min_block_weight=defaults.read(settings, "FOCUSCRAWL_CHANGE_MIN_BLOCK_WEIGHT"),
        noise=noise_rules(defaults.read(settings, "FOCUSCRAWL_CHANGE_NOISE")),
    )


def fingerprints_of_item(adapter: ItemAdapter, thresholds: Thresholds) -> Fingerprints:
    """``item.fingerprints`` if the crawl filled it, else what the item's fields give."""
    data = adapter.get("fingerprints") or {}
    if data:
        return Fingerprints.from_dict(data)
    headers = {k.lower(): v for k, v in (adapter.get("headers") or {}).items()}
    texts = [str(adapter.get("title") or ""), str(adapter.get("text") or "")]
    index = document_index([t for t in texts if t], mask_dates=thresholds.mask_dates)
    text_hash = index_hash(index)
    fp = Fingerprints(
        size=sum(len(t.encode()) for t in texts),
        body_hash=text_hash,  # no body here: the text stands in for it
        text_hash=text_hash,
        simhash=simhash64(index),
        etag=headers.get("etag", ""),
        last_modified=headers.get("last-modified", ""),
        doc_index=index,
    )
    url = str(adapter.get("url") or "")
    mask = thresholds.mask_dates
    fp.set_content(content_of_text(*texts, mask_dates=mask, url=url, noise=thresholds.noise))
    return fp


def features_of(adapter: ItemAdapter, fp: Fingerprints) -> dict[str, Any]:
    """What the cluster policy groups pages by (besides their change history)."""
    url = str(adapter.get("url") or "")
    path = urlsplit(url).path
    return {
        "depth": len([p for p in path.split("/") if p]),
        "size": fp.size,
        "links": fp.n_links,
        "relevance": round(float(adapter.get("relevance") or 0.0), 3),
    }


def set_change_diff(adapter: ItemAdapter, change: Change) -> None:
    """``item.change_diff``: what changed (fragments, items, block kinds), when anything did."""
    detail = change.to_dict()
    if len(detail) > 1:
        with contextlib.suppress(KeyError):  # an item class of another project: no such field
            adapter["change_diff"] = detail


class ChangeDetectionPipeline:
    def __init__(
        self,
        settings: Any,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
        *,
        thresholds: Thresholds = Thresholds(),  # noqa: B008 (frozen dataclass)
        drop: bool = True,
    ) -> None:
        self.settings = settings
        self.stats = stats
        self.crawler = crawler
        self.thresholds = thresholds
        self.drop = drop
        self.store: ChangeStore | None = None
        self.failed = False
        # set by from_crawler when the index follows: visits are recorded once items settle
        self.settlement: ItemSettlement | None = None
        # items kept while a Redis store is away or full (see focuscrawl.pipelines.store_wait)
        self.wait: StoreWait | None = None
        self.watch: tuple[WatchRule, ...] = ()  # the topic's watch rules, when the spider opens
        # a store that writes behind (Redis): pages wait for their visit's write
        self.visits: VisitWrites | None = None
        # the SQLite store: visits recorded by a thread of their own (ChangeWriter)
        self.writer: ChangeWriter | None = None
        self._queued: dict[str, QueuedVisit] = {}  # url → its visit's write, still queued

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangeDetectionPipeline:
        s = crawler.settings
        if not defaults.read(s, "FOCUSCRAWL_CHANGE_ENABLED"):
            raise NotConfigured("FOCUSCRAWL_CHANGE_ENABLED is off")
        pipe = cls(
            s,
            crawler.stats,
            crawler,
            thresholds=thresholds_from(s),
            drop=defaults.read(s, "FOCUSCRAWL_CHANGE_DROP"),
        )
        if durable_pipeline_after(crawler, cls):
            pipe.settlement = ItemSettlement(crawler)
        pipe.wait = StoreWait(
            lambda item: pipe.process_item(item, None),
            give_up_after=defaults.read(s, "FOCUSCRAWL_REDIS_RETRY_TIMEOUT"),
            on_give_up=lambda exc: pipe._store_failed(StoreError(str(exc))),
            stopping=lambda: engine_stopping(crawler),
        )
        return pipe

    def open_spider(self, spider: Spider | None = None) -> None:
        store = open_store(self.settings)
        try:
            store.open()
        except StoreError as exc:  # e.g. Redis refused the password: one line, then stop
            auth = isinstance(exc.__cause__, RedisAuthError)
            fault = as_fault(f"change store ({exc})", exc.__cause__ or exc)
            logger.log(*first_report(str(fault) if fault is not None else str(exc)))
            reason = fault.reason if fault is not None else "change_store"
            if fault is not None and self.stats is not None:
                self.stats.set_value("focuscrawl/exit_status", STORAGE_FAULT_EXIT)
            raise CloseSpider("redis_auth" if auth else reason) from None
        self.store = store
        if VisitWrites.writes_behind(store):
            self.visits = VisitWrites(
                self.crawler,
                store,
                delay=defaults.read(self.settings, "FOCUSCRAWL_CHANGE_WRITE_DELAY"),
                on_error=self._store_failed,
            )
        threaded = defaults.read(self.settings, "FOCUSCRAWL_CHANGE_WRITER_THREAD")
        if threaded and isinstance(store, SqliteChangeStore) and store.path != ":memory:":
            self.writer = ChangeWriter(store, on_fault=self._writer_fault)
            self.writer.start()
        logger.info("change store: %s (%d pages)", type(self.store).__name__, len(self.store))
        self.watch = watch_rules_of(spider or getattr(self.crawler, "spider", None))
        if self.watch:  # the topic's ignore patterns are noise here too (item-text fallback)
            noise = self.thresholds.noise + ignore_rules(self.watch)
            self.thresholds = dataclasses.replace(self.thresholds, noise=noise)

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.wait is not None:
            self.wait.close()
        if self.visits is not None:
            self.visits.close()
            self.visits = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.store is not None:
            store, self.store = self.store, None
            try:
                store.close()  # the Redis store writes its queued visits here
            except StoreError as exc:
                self._inc("store_error")
                logger.error("change store: closing failed: %s", exc)

    def _inc(self, what: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"focuscrawl/change/{what}")

    def _recrawl(self, spider: Spider | None) -> bool:
        if spider is None and self.crawler is not None:
            spider = getattr(self.crawler, "spider", None)
        return getattr(spider, "mode", "crawl") == "recrawl"

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        assert self.store is not None, "open_spider was not called"
        adapter = ItemAdapter(item)
        url = str(adapter.get("url") or "")
        if not url:
            self._inc("skipped/no_url")
            return item
        if self.failed:
            # not processed: held back (its page not acknowledged), fetched again when resumed
            raise HeldItem(StoreError("change store failed earlier in this crawl"))
        if self.wait is not None and self.wait.waiting and not self.wait.retrying:
            return self.wait.hold(item)  # behind the items waiting for the store, in order
        prior = self._queued.get(url)
        if prior is not None:  # a visit of this URL is still queued: read after its write
            return Answer(prior.then(lambda: self.process_item(item, spider)))
        status_code = int(adapter.get("status") or 200)
        fetched_at = float(adapter.get("fetched_at") or 0.0)
        try:
            old = self.store.get(url)
            base = old.fingerprints if old is not None and not old.deleted else None
            if status_code in GONE:
                status = "deleted"
                fp = None
            else:
                try:
                    fp = fingerprints_of_item(adapter, self.thresholds)
                except ValueError as exc:
                    logger.warning("change: bad fingerprints on %s (%s); recomputed", url, exc)
                    self._inc("skipped/bad_fingerprints")
                    adapter["fingerprints"] = {}
                    fp = fingerprints_of_item(adapter, self.thresholds)
                change = classify(base, fp, url, self.thresholds)
                status = price_checked(self.watch, url, change.status, base, fp, self._inc)
                if status != change.status:  # a watched price that did not move as asked
                    change = dataclasses.replace(change, status=status)
                adapter["fingerprints"] = fp.to_dict()
                set_change_diff(adapter, change)
            lying = base is not None and fp is not None and lying_validators(base, fp)
            if status == "deleted" and (old is None or old.deleted):
                pass  # never seen, or already a tombstone: nothing to record again
            else:
                features = features_of(adapter, fp) if fp is not None else None
                if lying and features is not None:
                    # the server kept its ETag / Last-Modified for a new body: conditional
                    # GETs would hide changes, so the middleware stops sending them here
                    features[UNTRUSTED_VALIDATORS] = True
                    self._inc("lying_validators")
                    logger.info("change: %s changed under the same ETag/Last-Modified", url)
                self._record(item, url, fp, status, fetched_at, features)
        except StoreError as exc:
            if self.wait is not None and transient_store_error(exc) and not self.failed:
                if self.wait.retrying:
                    raise  # still away: the wait tries again later
                return self.wait.hold(item, exc)
            self._store_failed(exc)
            fault = as_fault("change store", exc.__cause__ or exc)
            raise HeldItem(fault or StoreError(f"change store error: {exc}")) from exc
        adapter["change"] = status
        self._inc(status)
        if self._recrawl(spider) and status not in PASSED_IN_RECRAWL:
            self._inc("dropped")
            if self.drop:
                raise DropItem(f"{status}: not sent to the index in a recrawl")
        return item

    def _record(self, item: Any, url: str, *visit: Any) -> None:
        """Record the visit now, or (the index follows) once the item has settled."""
        assert self.store is not None
        if self.writer is not None:
            if self.settlement is None:
                self._submit(item, url, visit)
            else:
                self.settlement.after(item, lambda: self._submit(item, url, visit))
            return
        if self.settlement is None:
            self.store.record(url, *visit)
            self._written(item, url)
            return
        store = self.store

        def record() -> None:
            try:
                if self.failed or self.store is not store:
                    raise StoreError("the change store failed earlier in this crawl")
                store.record(url, *visit)
                self._written(item, url)
            except StoreError as exc:
                if transient_store_error(exc):  # Redis away or full: the next item waits for it
                    self._inc("visit_deferred")
                    logger.debug("change: visit of %s waits in the store's queue: %s", url, exc)
                    queued = self.visits is not None and getattr(store, "is_queued", None)
                    if queued and queued(url):
                        self._written(item, url)  # its page waits for the queue's write
                    elif self.crawler is not None:  # not queued: its page is fetched again
                        self.crawler.signals.send_catch_log(item_held, item=item, spider=None)
                    return
                self._store_failed(exc)
                if self.crawler is not None:  # not recorded: its page must be fetched again
                    self.crawler.signals.send_catch_log(item_held, item=item, spider=None)

        self.settlement.after(item, record)

    def _submit(self, item: Any, url: str, visit: tuple[Any, ...]) -> None:
        """Hand the visit to the writer thread; the page waits for its write."""
        assert self.writer is not None
        written = self.writer.submit(lambda store: store.record(url, *visit))
        mark = self._queued[url] = QueuedVisit()

        def done(result: Any) -> Any:
            if self._queued.get(url) is mark:
                del self._queued[url]
            mark.fire()
            return result

        written.addBoth(done)
        if self.crawler is not None:
            self.crawler.signals.send_catch_log(
                item_write_pending, item=item, deferred=written, thread=True, spider=None
            )
        written.addErrback(lambda failure: None)  # told to the ack middleware (held back)

    def _writer_fault(self, exc: BaseException) -> BaseException:
        """The writer thread could not record visits (disk full, locked): stop the crawl."""
        error = exc if isinstance(exc, StoreError) else StoreError(f"change store: {exc}")
        self._store_failed(error)
        fault = as_fault("change store", error.__cause__ or error)
        return HeldItem(fault or error)

    def _written(self, item: Any, url: str) -> None:
        """The visit was recorded: its page waits for the write if the store queued it."""
        if self.visits is not None:
            self.visits.wait(item)

    def _store_failed(self, exc: StoreError) -> None:
        self._inc("store_error")
        if self.visits is not None:
            self.visits.fail(exc)  # queued visits not written: their pages are held back
        if self.failed:
            return
        self.failed = True
        fault = as_fault("change store", exc.__cause__ or exc)
        if fault is not None:
            logger.error("%s", fault)
        else:
            logger.error("change store failed, closing the spider: %s", exc)
        if fault is not None:
            stop_crawl(self.crawler, fault.reason, STORAGE_FAULT_EXIT)
        else:
            stop_crawl(self.crawler, "change_store_error")
