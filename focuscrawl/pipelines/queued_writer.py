"""The index writer thread for a store that sends a batch's writes with its commit (PostgreSQL:
:class:`~focuscrawl.index.backend.QueuedWrites`).

:class:`QueuedIndexWriter` is :class:`~focuscrawl.pipelines.index_writer.IndexWriter` (a
thread of its own, a bounded queue, answers on the reactor only after the commit) whose batch is
queued by its updates and sent by one :meth:`~focuscrawl.index.backend.QueuedWrites.flush`: the
round trip, the server's work on the batch and the ``COMMIT``'s flush to disk no longer hold the
reactor, and a lost server's retries wait in this thread. An update returns what it queued
(``"upsert"`` or ``"remove"``); its answer is what the write did (:func:`write_outcome`), or
the error of a write the database refused (that item alone). No write turns: PostgreSQL's
writers take their turns in the database (row locks).
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer

from focuscrawl.faults import StorageFault
from focuscrawl.index.backend import QueuedWrites
from focuscrawl.index.errors import IndexStoreError
from focuscrawl.pipelines.index_writer import IndexWriter


def write_outcome(kind: str, outcome: bool) -> str | None:
    """What a queued write did, as the pipeline counts it (None: nothing)."""
    if kind == "upsert":
        return "added" if outcome else "replaced"
    return "removed" if outcome else None


class QueuedIndexWriter(IndexWriter):
    #: what fails a whole batch (and every later one): the server lost past the retry timeout,
    #: or a failure of the commit itself
    FAULTS: tuple[type[BaseException], ...] = (StorageFault, IndexStoreError, OSError)

    def _transaction(self, batch: list[tuple[Any, defer.Deferred[Any]]]) -> list[Any]:
        index = self.index
        assert isinstance(index, QueuedWrites)
        results: list[tuple[defer.Deferred[Any], Any, bool]] = []
        queued: list[int] = []  # positions in results of the updates that queued a write
        for update, answer in batch:
            try:
                kind = update(index)
            except Exception as exc:  # noqa: BLE001 (this item's own bug: its Deferred fails)
                results.append((answer, exc, False))
                continue
            queued.append(len(results))
            results.append((answer, kind, True))
        outcomes = index.flush()
        for n, outcome in zip(queued, outcomes, strict=True):
            answer, kind, _ = results[n]
            if isinstance(outcome, Exception):  # refused by the database: this item alone
                results[n] = (answer, outcome, False)
            else:
                results[n] = (answer, write_outcome(kind, outcome), True)
        return results
