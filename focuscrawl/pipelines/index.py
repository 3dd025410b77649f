"""``IndexPipeline``: keeps the page index in step with the crawl, after change detection.

=========================  ============================================================
``item["change"]``         what the index does
=========================  ============================================================
``new``, ``significant``,  relevant page: added or replaced; irrelevant page: removed if
``""`` (no detection)      it was indexed (it left the topic), otherwise nothing
``deleted``                removed
``unchanged``,             nothing (no database access)
``insignificant``
=========================  ============================================================

A ``significant`` item's ``change_diff`` (what changed) is stored with the page as its last
change, with its fetch time and this crawl's id (``focuscrawl serve``'s changes page, the export).

Durability. An item that changes the index is answered (its Deferred fires) only once its update
is committed: updates are grouped in one short write transaction, committed after
``FOCUSCRAWL_INDEX_COMMIT_EVERY`` updates or ``FOCUSCRAWL_INDEX_COMMIT_DELAY`` seconds, whichever
comes first. The change pipeline records a page's version in the change store only after the
item is through (see :mod:`focuscrawl.pipelines.settle`), and the frontier acknowledges the page
only then (:mod:`focuscrawl.middlewares.ack`). So after a SIGKILL at any point the change store
never holds a version the index lacks: a page whose update was not committed is fetched again
(not acknowledged) and is new or changed to the change store, so it reaches the index.

A full disk or a read-only data directory closes the spider (reason ``storage_full`` /
``storage_error``) with one error line; the items of the failed transaction fail with
:class:`~focuscrawl.faults.StorageFault`, so their pages are not acknowledged (fetched again
by the resumed crawl). Another crawl writing the same index (one data directory shared) is
waited for (``FOCUSCRAWL_DB_BUSY_TIMEOUT``).

On PostgreSQL (a store of :class:`~focuscrawl.index.backend.QueuedWrites`) an item's write is
queued, not sent: the batch goes to the server with its ``COMMIT`` in one round trip, and each
item is answered and counted from its write's outcome (a write the server refused fails that
item alone, the others are committed).

Off the reactor (``FOCUSCRAWL_INDEX_WRITER_THREAD``, on by default): the updates are
applied by :class:`~focuscrawl.pipelines.index_writer.IndexWriter` in a thread of its own, in
short write transactions taken in fair turns with the other crawls writing the same index
(:class:`~focuscrawl.index.turns.WriteTurns`); the answers (and so the acks) still come only
after the commit, and while ``FOCUSCRAWL_INDEX_PENDING_MAX`` pages are unacknowledged (responses
held in the scraper, and pages whose visit waits for the change store's writer thread) the
engine takes no new request (a lagging writer must not let the crawl run ahead with pages
unacknowledged: see docs/faults.md). A pipeline built directly (``IndexPipeline(path)``) writes
inline, as above.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import CloseSpider, NotConfigured
from twisted.internet import defer

from focuscrawl import defaults
from focuscrawl.crawlstop import STORAGE_FAULT_EXIT, HeldItem, started_engine, stop_crawl
from focuscrawl.faults import StorageFault, as_fault
from focuscrawl.index.backend import (
    READ_ERRORS,
    WRITE_ERRORS,
    IndexStore,
    QueuedWrites,
    describe,
    is_postgres,
    open_index,
)
from focuscrawl.index.errors import IndexStoreError
from focuscrawl.index.store import BUSY_TIMEOUT, IndexBusy, locked_error
from focuscrawl.index.turns import TurnTimeout, WriteTurns
from focuscrawl.pipelines.index_writer import IndexWriter
from focuscrawl.pipelines.queued_writer import QueuedIndexWriter, write_outcome
from focuscrawl.pipelines.settle import Answer
from focuscrawl.signals import item_write_pending

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.interfaces import IDelayedCall

logger = logging.getLogger(__name__)

INDEXED_CHANGES = frozenset({"new", "significant", ""})
UNTOUCHED_CHANGES = frozenset({"unchanged", "insignificant"})


def index_path(settings: Any) -> str:
    """``FOCUSCRAWL_INDEX_URL`` (a SQLite path or a ``postgresql://`` URL), else
    ``FOCUSCRAWL_INDEX_PATH``, else ``index.sqlite`` in ``FOCUSCRAWL_DATA_DIR``."""
    explicit = settings.get("FOCUSCRAWL_INDEX_URL") or settings.get("FOCUSCRAWL_INDEX_PATH") or ""
    if explicit:
        return str(explicit)
    return str(Path(settings.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data") / "index.sqlite")


class IndexPipeline:
    #: items are answered once their update is committed (see focuscrawl.pipelines.settle)
    DURABLE_ANSWER = True

    @staticmethod
    def enabled(settings: Any) -> bool:
        return bool(defaults.read(settings, "FOCUSCRAWL_INDEX_ENABLED"))

    def __init__(
        self,
        path: str,
        commit_every: int = 64,
        stats: StatsCollector | None = None,
        *,
        commit_delay: float = 0.1,
        busy_timeout: float = BUSY_TIMEOUT,
        crawler: Crawler | None = None,
        retry_timeout: float | None = None,
        client_tsvector: bool = True,
        writer_thread: bool = False,
        queue_size: int = 1024,
        pending_max: int = 0,
    ) -> None:
        self.location = path  # a SQLite path or a PostgreSQL URL (with its credentials)
        self.path = describe(path)  # what log lines and messages show
        self.retry_timeout = retry_timeout
        self.client_tsvector = client_tsvector
        self.commit_every = max(1, commit_every)
        self.commit_delay = commit_delay
        self.busy_timeout = busy_timeout
        self.stats = stats
        self.crawler = crawler
        self.index: IndexStore | None = None
        self.crawl_id = 0
        self.counts: Counter[str] = Counter()
        # items updated in the open transaction, answered at its commit
        self._waiting: list[tuple[defer.Deferred[Any], Any]] = []
        # a store of QueuedWrites: each waiting item's write ("upsert", "remove"), sent at commit
        self._queued: list[str] = []
        self._timer: IDelayedCall | None = None
        self.failed: StorageFault | None = None
        # FOCUSCRAWL_INDEX_WRITER_THREAD: updates applied off the reactor (IndexWriter)
        # the writer thread's fair turns serve SQLite (one file shared by processes); PostgreSQL
        # takes its writers' turns itself (row locks): its thread sends the queued batches
        self.writer_thread = writer_thread
        self.queue_size = queue_size
        # items submitted to the writer thread and not answered yet: their pages are not
        # acknowledged; at pending_max the engine takes no new request until one is answered
        self.pending_max = pending_max
        self.pending = 0
        # visits the change store's writer thread has queued (signal item_write_pending with
        # thread=True): their pages are not acknowledged either, so they count in the bound
        self.visits = 0
        self.paused = False
        self._check: IDelayedCall | None = None
        self.writer: IndexWriter | None = None
        self.turns: WriteTurns | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IndexPipeline:
        settings = crawler.settings
        if not cls.enabled(settings):
            raise NotConfigured("FOCUSCRAWL_INDEX_ENABLED is off")
        pipe = cls(
            index_path(settings),
            commit_every=defaults.read(settings, "FOCUSCRAWL_INDEX_COMMIT_EVERY"),
            stats=crawler.stats,
            commit_delay=defaults.read(settings, "FOCUSCRAWL_INDEX_COMMIT_DELAY"),
            busy_timeout=defaults.read(settings, "FOCUSCRAWL_DB_BUSY_TIMEOUT"),
            crawler=crawler,
            retry_timeout=defaults.read(settings, "FOCUSCRAWL_INDEX_RETRY_TIMEOUT"),
            client_tsvector=defaults.read(settings, "FOCUSCRAWL_INDEX_CLIENT_TSVECTOR"),
            writer_thread=defaults.read(settings, "FOCUSCRAWL_INDEX_WRITER_THREAD"),
            queue_size=defaults.read(settings, "FOCUSCRAWL_INDEX_QUEUE_SIZE"),
            pending_max=defaults.read(settings, "FOCUSCRAWL_INDEX_PENDING_MAX")
            or max(1, settings.getint("CONCURRENT_REQUESTS") // 2),
        )
        crawler.signals.connect(pipe._visit_pending, item_write_pending)
        return pipe

    def open_spider(self, spider: Spider | None = None) -> None:
        if self.writer_thread and not is_postgres(self.location):
            self.turns = WriteTurns.beside(self.location, self.busy_timeout)
        try:
            self.index = open_index(
                self.location,
                busy_timeout=self.busy_timeout,
                retry_timeout=self.retry_timeout,
                client_tsvector=self.client_tsvector,
            )
            self.crawl_id = self._in_turn(self.index.begin_crawl)
        except (IndexBusy, TurnTimeout, *READ_ERRORS, *WRITE_ERRORS) as exc:
            if self.turns is not None:
                self.turns.close()
                self.turns = None
            if self.index is not None:
                self.index.close()
                self.index = None
            fault = as_fault(f"index {self.path}", exc)
            logger.error("%s", fault if fault is not None else f"index {self.path}: {exc}")
            if self.stats is not None and fault is not None:
                self.stats.set_value("focuscrawl/exit_status", STORAGE_FAULT_EXIT)
            raise CloseSpider(fault.reason if fault is not None else "index_error") from None
        if self.writer_thread:
            writer = QueuedIndexWriter if isinstance(self.index, QueuedWrites) else IndexWriter
            self.writer = writer(
                self.index,  # type: ignore[arg-type]
                self.turns,
                # a batch is full at the bound: no wait for more that cannot come
                commit_every=min(self.commit_every, self.pending_max or self.commit_every),
                commit_delay=self.commit_delay,
                queue_size=self.queue_size,
                on_fault=self._writer_fault,
            )
            self.writer.start()
        logger.info("index: %s (%d pages)", self.path, len(self.index))

    def _in_turn(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` inside a write turn (at open and close only: on the reactor thread)."""
        if self.turns is None:
            return fn(*args)
        self.turns.take()
        try:
            return fn(*args)
        finally:
            self.turns.release()

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.index is None:
            return
        if self.paused:
            self._resume()
        if self.writer is not None:
            self.writer.close()
            self._writer_stats(self.writer)
            if self.writer.failure is not None and self.failed is None:
                self.failed = StorageFault(str(self.writer.failure))
            self.writer = None
        self.commit()
        try:
            if self.failed is None:
                self._in_turn(self.index.end_crawl, self.crawl_id, self.counts)
                self.index.commit()
        except (*WRITE_ERRORS, TurnTimeout) as exc:
            logger.error("index: the crawl's counts were not recorded: %s", exc)
        if self.failed is None:
            try:
                n = len(self.index)
                logger.info("index: %d pages after this crawl (%s)", n, dict(self.counts))
            except (*READ_ERRORS, *WRITE_ERRORS) as exc:
                logger.error("index: not readable at the end of the crawl: %s", exc)
        self.index.close()
        self.index = None
        if self.turns is not None:
            self.turns.close()
            self.turns = None

    def _writer_stats(self, writer: IndexWriter) -> None:
        if self.stats is None:
            return
        self.stats.set_value("focuscrawl/index/batches", writer.batches)
        self.stats.set_value("focuscrawl/index/queue_full", writer.overflowed)
        wait_ms = round(writer.longest_turn_wait * 1000, 1)
        self.stats.set_value("focuscrawl/index/turn_wait_max_ms", wait_ms)

    def _writer_fault(self, exc: BaseException) -> BaseException:
        """The writer thread's batch failed on the storage: stop the crawl (once)."""
        fault = as_fault(f"index {self.path}", exc) or self._other_fault(exc)
        if self.failed is None:
            self.failed = fault
            self._count("storage_error")
            logger.error("%s", fault)
            stop_crawl(self.crawler, fault.reason, STORAGE_FAULT_EXIT)
        return HeldItem(self.failed)

    def _submit(self, adapter: ItemAdapter, url: str, change: str, item: Any) -> Any:
        assert self.writer is not None

        def done(what: str | None) -> Any:
            if what is not None:
                self._count(what)
            if self.index is not None and self.index.counts:
                self._count_cleaned()
            return item

        if isinstance(self.index, QueuedWrites):
            answer = self.writer.submit(
                lambda index: self._queue_write(index, adapter, url, change)
            )
            answer.addErrback(self._count_refused)
        else:
            answer = self.writer.submit(lambda index: self._apply(adapter, url, change))
        self._submitted()
        answer.addBoth(self._answered)
        return Answer(answer.addCallback(done))

    # --- back-pressure on the engine (writer thread) ---------------------------------------
    # The inline commit holds the reactor while it writes, so the crawl fetches nothing more
    # meanwhile; the writer thread does not, and without a bound the crawl ran ahead of a
    # lagging writer (a loaded machine, another crawl's write turn) by up to the queue's 1,024
    # items: pages fetched and not acknowledged, fetched again after a kill (docs/faults.md).
    # So while pending_max responses are held in the scraper (waiting to be parsed, or for
    # their items, the index write among them) the engine takes no new request: a kill leaves
    # at most those and the CONCURRENT_REQUESTS downloading unacknowledged.
    RESUME_CHECK = 0.05  # seconds between checks while paused (responses finish after answers)

    # The change store's writer thread (FOCUSCRAWL_CHANGE_WRITER_THREAD) records a page's visit
    # after its item left the scraper: a page waiting for that write is unacknowledged too, and
    # without counting it the crawl ran ahead of a lagging change writer (a killed crawl fetched
    # 32 pages again for one kill, 2x the bound: docs/faults.md).
    def _held(self) -> int:
        """Pages not acknowledged: responses in the scraper, not finished, and pages whose
        visit waits for the change store's writer thread."""
        slot = getattr(getattr(started_engine(self.crawler), "scraper", None), "slot", None)
        if slot is None:
            return self.pending + self.visits
        return max(self.pending, len(slot.queue) + len(slot.active)) + self.visits

    def _visit_pending(self, deferred: Any, thread: bool = False, **kw: Any) -> None:
        if not thread:  # the Redis store's write-behind: bounded by its delay, not counted
            return
        self.visits += 1

        def written(result: Any) -> Any:
            self.visits -= 1
            self._maybe_resume(leaving=0)  # its response left the scraper already
            return result

        deferred.addBoth(written)
        self._maybe_pause()

    def _submitted(self) -> None:
        self.pending += 1
        self._maybe_pause()

    def _maybe_pause(self) -> None:
        if self.paused or not self.pending_max or self._held() < self.pending_max:
            return
        engine = started_engine(self.crawler)
        if engine is None:
            return
        self.paused = True
        engine.pause()
        if self.writer is not None:  # nothing more comes until it answers: no wait for more
            self.writer.flush()
        if self.stats is not None:
            self.stats.inc_value("focuscrawl/index/writer_waits")
        self._check_later()

    def _answered(self, result: Any) -> Any:
        self.pending -= 1
        self._maybe_resume()
        return result

    def _maybe_resume(self, leaving: int = 1) -> None:
        if not self.paused:
            return
        if self._held() - leaving < self.pending_max:  # - 1: the answered item's response
            self._resume()
        else:
            self._check_later()

    def _check_later(self) -> None:
        if self._check is not None and self._check.active():
            return
        from twisted.internet import reactor

        self._check = reactor.callLater(self.RESUME_CHECK, self._maybe_resume)  # type: ignore[attr-defined]

    def _resume(self) -> None:
        self.paused = False
        if self._check is not None and self._check.active():
            self._check.cancel()
        self._check = None
        engine = started_engine(self.crawler)
        if engine is None:
            return
        engine.unpause()
        slot = getattr(engine, "_slot", None)
        if slot is not None:
            slot.nextcall.schedule()  # take requests now, not at the next heartbeat

    def _count_refused(self, failure: Any) -> Any:
        if failure.check(IndexStoreError):
            self._count("refused")
        return failure

    def _count_cleaned(self) -> None:
        """Hostile input the index cut down or cleaned (NUL bytes, huge texts), into the stats."""
        assert self.index is not None
        cleaned, self.index.counts = self.index.counts, type(self.index.counts)()
        for what, n in cleaned.items():
            self.counts[f"cleaned/{what}"] += n
            if self.stats is not None:
                self.stats.inc_value(f"focuscrawl/index/cleaned/{what}", n)

    def _count(self, what: str) -> None:
        self.counts[what] += 1
        if self.stats is not None:
            self.stats.inc_value(f"focuscrawl/index/{what}")

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        assert self.index is not None, "open_spider was not called"
        adapter = ItemAdapter(item)
        url = adapter.get("url")
        change = adapter.get("change") or ""
        self._count(f"change/{change or 'none'}")
        if not url:
            self._count("skipped/no_url")
            logger.warning("index: item without url skipped")
            return item
        if change in UNTOUCHED_CHANGES:
            return item
        if change not in INDEXED_CHANGES and change != "deleted":
            self._count("skipped/unknown_change")
            logger.warning("index: unknown change %r for %s, skipped", change, url)
            return item
        if self.failed is not None:
            raise HeldItem(self.failed)
        if self.writer is not None:
            return self._submit(adapter, url, change, item)
        if isinstance(self.index, QueuedWrites):
            return self._queue(self.index, adapter, url, change, item)
        try:
            self.index.begin()
            self.index.savepoint()
            what = self._apply(adapter, url, change)
            self.index.release()
        except WRITE_ERRORS as exc:
            fault = as_fault(f"index {self.path}", exc)
            if fault is None and not isinstance(exc, sqlite3.OperationalError):
                # this item's own problem (a bug, a constraint): undo it alone, go on
                self.index.rollback_to()
                raise
            self._fail(fault or self._other_fault(exc))
            raise HeldItem(self.failed) from exc  # type: ignore[arg-type]
        if self.index.counts:
            self._count_cleaned()
        if what is None:
            return item
        self._count(what)
        return self._wait_for_commit(item)

    def _wait_for_commit(self, item: Any) -> Answer:
        answer: defer.Deferred[Any] = defer.Deferred()
        self._waiting.append((answer, item))
        if len(self._waiting) >= self.commit_every:
            self.commit()
        elif self._timer is None:
            from twisted.internet import reactor

            self._timer = reactor.callLater(self.commit_delay, self.commit)  # type: ignore[attr-defined]
        return Answer(answer)

    def _queue(
        self, index: QueuedWrites, adapter: ItemAdapter, url: str, change: str, item: Any
    ) -> Answer:
        """The item's write queued, sent with the commit (PostgreSQL: the batch in one round
        trip); answered and counted once committed (a write the database refused fails its
        item alone)."""
        self._queued.append(self._queue_write(index, adapter, url, change))
        if self.index is not None and self.index.counts:
            self._count_cleaned()
        return self._wait_for_commit(item)

    def _queue_write(self, index: QueuedWrites, adapter: ItemAdapter, url: str, change: str) -> str:
        """Queue the item's write (sent with the commit); which: "upsert" or "remove"."""
        if change == "deleted" or not adapter.get("relevant"):
            index.queue_remove(url)
            return "remove"
        page_url, title, text, fields = self._page(adapter, url, change)
        index.queue_upsert(page_url, title, text, **fields)
        return "upsert"

    def _apply(self, adapter: ItemAdapter, url: str, change: str) -> str | None:
        """The index update of one item (in the open transaction): what was done, or None."""
        assert self.index is not None
        if change == "deleted":
            return "removed" if self.index.remove(url) else None
        if not adapter.get("relevant"):
            return "removed" if self.index.remove(url) else None  # it left the topic
        page_url, title, text, fields = self._page(adapter, url, change)
        added = self.index.upsert(page_url, title, text, **fields)
        return "added" if added else "replaced"

    def _page(
        self, adapter: ItemAdapter, url: str, change: str
    ) -> tuple[str, str, str, dict[str, Any]]:
        """The upsert's arguments for an item."""
        fields = {
            "relevance": float(adapter.get("relevance") or 0.0),
            "depth": int(adapter.get("depth") or 0),
            "fetched_at": float(adapter.get("fetched_at") or 0.0),
            "change": change,
            **self._last_change(adapter, change),
        }
        return url, str(adapter.get("title") or ""), str(adapter.get("text") or ""), fields

    def _last_change(self, adapter: ItemAdapter, change: str) -> dict[str, Any]:
        """A significant change's diff (``item.change_diff``) for the page's row: the changes
        page of ``focuscrawl serve`` and the export read it."""
        diff = adapter.get("change_diff") if change == "significant" else None
        if not isinstance(diff, dict) or not diff:
            return {}
        return {"diff": diff, "crawl_id": self.crawl_id}

    def commit(self) -> None:
        """Commit the open transaction and answer the items it holds."""
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()
            self._timer = None
        waiting, self._waiting = self._waiting, []
        queued, self._queued = self._queued, []
        if self.index is None or self.failed is not None:
            self._answer(waiting)
            return
        outcomes: list[Any] = []
        try:
            if queued:
                assert isinstance(self.index, QueuedWrites)
                outcomes = self.index.flush()
            else:
                self.index.commit()
        except WRITE_ERRORS as exc:
            self._fail(as_fault(f"index {self.path}", exc) or self._other_fault(exc))
        self._answer(waiting, queued, outcomes)

    def _other_fault(self, exc: BaseException) -> StorageFault:
        if isinstance(exc, TurnTimeout):
            return StorageFault(f"index {self.path}: {exc}; stopping the crawl (resumable)")
        if locked_error(exc):
            return StorageFault(
                f"index {self.path}: locked by another process for more than "
                f"{self.busy_timeout:g}s ({exc}); stopping the crawl (resumable)"
            )
        return StorageFault(f"index {self.path}: {exc}; stopping the crawl (resumable)")

    def _answer(
        self,
        waiting: list[tuple[defer.Deferred[Any], Any]],
        queued: list[str] | None = None,
        outcomes: list[Any] | None = None,
    ) -> None:
        """Answer the committed items (``queued``: their writes, ``outcomes``: what each did)."""
        for n, (answer, item) in enumerate(waiting):
            if self.failed is not None:
                answer.errback(HeldItem(self.failed))
                continue
            if queued and outcomes:
                outcome = outcomes[n]
                if isinstance(outcome, Exception):  # refused by the database: this item alone
                    self._count("refused")
                    answer.errback(outcome)
                    continue
                what = write_outcome(queued[n], outcome)
                if what is not None:
                    self._count(what)
            answer.callback(item)

    def _fail(self, fault: StorageFault) -> None:
        """The index cannot be written: undo the open transaction, stop the crawl (once)."""
        assert self.index is not None
        try:
            self.index.rollback()
        except sqlite3.Error as exc:
            logger.debug("index: rollback after a failed write: %s", exc)
        waiting, self._waiting = self._waiting, []
        self._queued = []
        if self.failed is None:
            self.failed = fault
            self._count("storage_error")
            logger.error("%s", fault)
            stop_crawl(self.crawler, fault.reason, STORAGE_FAULT_EXIT)
        self._answer(waiting)
