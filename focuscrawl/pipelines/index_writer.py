"""The index written off the reactor: a thread of its own, a bounded queue, short fair turns.

:class:`IndexWriter` takes index updates from the reactor (``submit``: a function of the
:class:`~focuscrawl.index.store.PageIndex`, answered by a Deferred) and applies them in its
thread, in batches of at most ``commit_every`` updates gathered for at most ``commit_delay``
seconds, each batch one short write transaction inside a write turn
(:class:`~focuscrawl.index.turns.WriteTurns`: processes sharing the index take turns fairly).
Answers come back to the reactor (``deliver``, ``reactor.callFromThread``) only once the batch
is committed: the durability order of :mod:`focuscrawl.pipelines.index` is kept (a page is
acknowledged only after its update committed), and waiting for another process's turn, or for a
slow disk, never holds the reactor (lease renewals, fetches and parsing go on).

Back-pressure: at most ``queue_size`` updates wait for the thread; past that, updates wait on the
reactor side, in order, unanswered (``overflowed`` counts them): their items stay in Scrapy's
scraper slot, which stops taking responses when it holds too much (``SCRAPER_SLOT_MAX_ACTIVE_SIZE``).

An update that fails on its own (a bug, a constraint) is undone alone and its Deferred fails; a
storage fault (disk full, read-only, the turn or the lock held past the timeout) undoes the
batch, and it and every later update fail with what ``on_fault`` makes of it.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from twisted.internet import defer

from focuscrawl.faults import as_fault
from focuscrawl.index.store import PageIndex
from focuscrawl.index.turns import TurnTimeout, WriteTurns

logger = logging.getLogger(__name__)

Update = Callable[[PageIndex], Any]
_STOP = object()
_FLUSH = object()  # write the batch gathered so far now, without waiting for the delay


class IndexWriter:
    def __init__(
        self,
        index: PageIndex,
        turns: WriteTurns | None,
        *,
        commit_every: int = 64,
        commit_delay: float = 0.1,
        queue_size: int = 1024,
        deliver: Callable[[Callable[[], None]], None] | None = None,
        on_fault: Callable[[BaseException], BaseException] = lambda exc: exc,
    ) -> None:
        self.index = index
        self.turns = turns
        self.commit_every = max(1, commit_every)
        self.commit_delay = commit_delay
        self.on_fault = on_fault
        self._deliver = deliver
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, queue_size))
        self._overflow: deque[tuple[Update, defer.Deferred[Any]]] = deque()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None  # set on the reactor thread (on_fault's)
        self._broken = False  # set in the writer thread: later batches fail without writing
        self.overflowed = 0
        self.batches = 0
        self.longest_turn_wait = 0.0  # seconds

    def start(self) -> None:
        if self._deliver is None:
            from twisted.internet import reactor

            self._deliver = reactor.callFromThread  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._run, name="focuscrawl-index", daemon=True)
        self._thread.start()

    def submit(self, update: Update) -> defer.Deferred[Any]:
        """Queue ``update`` (reactor thread); its Deferred fires once its batch committed."""
        answer: defer.Deferred[Any] = defer.Deferred()
        if self.failure is not None:
            answer.errback(self.failure)
            return answer
        if self._overflow:
            self.overflowed += 1
            self._overflow.append((update, answer))
            return answer
        try:
            self._queue.put_nowait((update, answer))
        except queue.Full:
            self.overflowed += 1
            self._overflow.append((update, answer))
        return answer

    def flush(self) -> None:
        """Write what is queued without waiting for ``commit_delay`` (reactor thread): the
        crawl is paused for the writer, so no more updates come until it answers."""
        if self._thread is not None and not self._overflow:
            with contextlib.suppress(queue.Full):  # a full queue: full batches, no wait
                self._queue.put_nowait(_FLUSH)

    def close(self, timeout: float | None = None) -> None:
        """Write what is queued, stop the thread (the reactor's answers may follow)."""
        if self._thread is None:
            return
        while self._overflow:  # the thread drains the queue meanwhile
            self._queue.put(self._overflow.popleft())
        self._queue.put(_STOP)
        self._thread.join(timeout)
        self._thread = None

    # --- the writer thread ---------------------------------------------------------------
    def _opened(self) -> None:
        """The thread started (a subclass opens its own connection here)."""

    def _run(self) -> None:
        self._opened()
        try:
            self._loop()
        finally:
            self._finished()

    def _finished(self) -> None:
        """The thread ends (a subclass closes its own connection here)."""

    def _loop(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is _STOP:
                return
            if first is _FLUSH:  # nothing gathered: nothing to write
                continue
            batch = [first]
            deadline = time.monotonic() + self.commit_delay
            while len(batch) < self.commit_every:
                left = deadline - time.monotonic()
                try:
                    nxt = self._queue.get(timeout=left) if left > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                if nxt is _FLUSH:
                    break
                batch.append(nxt)
            self._write(batch)

    def _write(self, batch: list[tuple[Update, defer.Deferred[Any]]]) -> None:
        results: list[tuple[defer.Deferred[Any], Any, bool]] = []
        fault: BaseException | None = None
        if self._broken:
            self._send(batch, [], None, broken=True)
            return
        try:
            waited = self.turns.take() if self.turns is not None else 0.0
            self.longest_turn_wait = max(self.longest_turn_wait, waited)
            try:
                results = self._transaction(batch)
            finally:
                if self.turns is not None:
                    self.turns.release()
        except self.FAULTS as exc:
            fault = exc
            self._broken = True
            self._undo()
        self.batches += 1
        self._send(batch, results, fault)

    #: what fails a whole batch (and every later one): the storage's faults
    FAULTS: tuple[type[BaseException], ...] = (sqlite3.Error, OSError, TurnTimeout)

    def _transaction(self, batch: list[tuple[Update, defer.Deferred[Any]]]) -> list[Any]:
        """The batch as one write transaction (in the writer thread): each update's outcome."""
        results = self._apply(batch)
        self.index.commit()
        return results

    def _undo(self) -> None:
        try:
            self.index.rollback()
        except sqlite3.Error as again:
            logger.debug("index: rollback after a failed write: %s", again)

    def _apply(self, batch: list[tuple[Update, defer.Deferred[Any]]]) -> list[Any]:
        conn = self.index.conn
        self.index.begin()
        results = []
        for update, answer in batch:
            conn.execute("SAVEPOINT item")
            try:
                out = update(self.index)
            except (sqlite3.Error, OSError) as exc:
                if as_fault("index", exc) is not None or isinstance(exc, sqlite3.OperationalError):
                    raise  # the storage's fault, not this item's: the batch fails
                conn.execute("ROLLBACK TO item")
                conn.execute("RELEASE item")
                results.append((answer, exc, False))
                continue
            except Exception as exc:  # noqa: BLE001 (this item's own bug: its Deferred fails)
                conn.execute("ROLLBACK TO item")
                conn.execute("RELEASE item")
                results.append((answer, exc, False))
                continue
            conn.execute("RELEASE item")
            results.append((answer, out, True))
        return results

    def _send(self, batch: list[Any], results: list[Any], fault: BaseException | None,
              broken: bool = False) -> None:  # fmt: skip
        assert self._deliver is not None
        self._deliver(lambda: self._settle(batch, results, fault, broken))

    # --- back on the reactor thread ------------------------------------------------------
    def _settle(
        self, batch: list[Any], results: list[Any], fault: BaseException | None, broken: bool
    ) -> None:
        if fault is not None and self.failure is None:
            self.failure = self.on_fault(fault)
        if fault is not None or broken:
            error = self.failure or RuntimeError("the index failed")
            for _, answer in batch:
                answer.errback(error)
            self._fail_overflow(error)
            return
        for answer, out, ok in results:
            if ok:
                answer.callback(out)
            else:
                answer.errback(out)
        self._refill()

    def _refill(self) -> None:
        while self._overflow:
            try:
                self._queue.put_nowait(self._overflow[0])
            except queue.Full:
                return
            self._overflow.popleft()

    def _fail_overflow(self, error: BaseException) -> None:
        waiting, self._overflow = self._overflow, deque()
        for _, answer in waiting:
            answer.errback(error)
