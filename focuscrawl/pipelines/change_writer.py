"""Visits recorded in the SQLite change store off the reactor, in fair turns.

:class:`ChangeWriter` is the index writer's thread and queue
(:class:`~focuscrawl.pipelines.index_writer.IndexWriter`: bounded, back-pressure, answers on
the reactor after the write) for the embedded change store: the thread opens a connection of its
own to ``change.sqlite3`` and records each visit of a batch (``SqliteChangeStore.record``: one
short transaction each) inside one write turn (``change.sqlite3.turns``), so crawls sharing the
data directory take turns fairly and a wait never holds the reactor. The change pipeline hands
each visit's Deferred to the acknowledgement middleware (signal ``item_write_pending``): a page
is acknowledged only once its visit is written, and the index pipeline counts the page among the
unacknowledged ones its engine pause bounds (``FOCUSCRAWL_INDEX_PENDING_MAX``). Reads stay on the reactor's connection (WAL: a
reader never waits for a writer); a visit still queued is not seen by them for those few
milliseconds (a page is not fetched twice that fast).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from twisted.internet import defer

from focuscrawl.change.record import StoreError
from focuscrawl.change.store_sqlite import SqliteChangeStore
from focuscrawl.index.turns import TurnTimeout, WriteTurns
from focuscrawl.pipelines.index_writer import IndexWriter
from focuscrawl.pipelines.settle import Answer


class ChangeWriter(IndexWriter):
    FAULTS = (StoreError, sqlite3.Error, OSError, TurnTimeout)

    def __init__(self, store: SqliteChangeStore, **kw: Any) -> None:
        self.source = store
        turns = WriteTurns.beside(store.path, store.busy_timeout)
        # each visit is its own transaction: waiting to gather more saves no commit, and its
        # page waits unacknowledged meanwhile (counted in the engine's pause): write at once
        kw.setdefault("commit_delay", 0.0)
        super().__init__(None, turns, **kw)  # type: ignore[arg-type]  (opened in the thread)

    def _opened(self) -> None:
        own = SqliteChangeStore(self.source.path, self.source.max_history, self.source.busy_timeout)
        try:
            own.open()
        except StoreError as exc:  # the reactor's connection opened it: a fault, as a write's
            self._broken_by = exc
            self._broken = True
            return
        self.index = own  # type: ignore[assignment]  (the updates' target)

    def _write(self, batch: list[Any]) -> None:
        broken_by = getattr(self, "_broken_by", None)
        if broken_by is not None:  # the thread could not open its connection
            self._broken_by = None
            self._send(batch, [], broken_by)
            return
        super()._write(batch)

    def _transaction(self, batch: list[Any]) -> list[Any]:
        results = []
        for update, answer in batch:
            results.append((answer, update(self.index), True))  # a StoreError fails the batch
        return results

    def _undo(self) -> None:  # each visit is its own transaction: nothing open to undo
        pass

    def _finished(self) -> None:
        if isinstance(self.index, SqliteChangeStore):
            self.index.close()  # in the thread that opened it


class QueuedVisit:
    """A queued visit's write: what waits for it (the next item of the same URL) runs after."""

    __slots__ = ("fired", "waiters")

    def __init__(self) -> None:
        self.fired = False
        self.waiters: list[defer.Deferred[Any]] = []

    def then(self, fn: Any) -> defer.Deferred[Any]:
        waiter: defer.Deferred[Any] = defer.Deferred()
        waiter.addCallback(lambda _: answer_deferred(fn()))
        self.waiters.append(waiter)
        return waiter

    def fire(self) -> None:
        self.fired = True
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            waiter.callback(None)


def answer_deferred(result: Any) -> Any:
    """A pipeline's result inside a Deferred chain: an :class:`Answer` by its Deferred."""
    return result.deferred if isinstance(result, Answer) else result
