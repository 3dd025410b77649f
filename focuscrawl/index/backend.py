"""The page index behind one small interface, and the factory that picks its backend by URL.

``FOCUSCRAWL_INDEX_URL`` (or ``--index``) is either a SQLite path (the embedded default, one
machine: :class:`~focuscrawl.index.store.PageIndex`) or a ``postgresql://`` (``postgres://``)
URL (one index for a whole cluster: :class:`~focuscrawl.index.pgstore.PostgresIndex`). Both
are plain blocking stores with the same contract (:class:`IndexStore`); the crawl's pipeline,
``search``, ``serve``, ``export-es`` and ``status`` only ever talk to that contract.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from focuscrawl.credentials import redact_url
from focuscrawl.index.errors import READ_ERRORS, WRITE_ERRORS, IndexStoreError, IndexUnavailable

if TYPE_CHECKING:
    from focuscrawl.index.rank import RankWeights
    from focuscrawl.index.store import SearchResult

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
__all__ = [
    "READ_ERRORS",
    "WRITE_ERRORS",
    "IndexStore",
    "IndexStoreError",
    "IndexUnavailable",
    "QueuedWrites",
    "describe",
    "is_postgres",
    "open_index",
]


class IndexStore(Protocol):
    """What the pipeline, the commands and the web UI need of a page index."""

    has_diff: bool
    #: hostile input cut down or cleaned on the way in (``nul_stripped``, ``text_capped``, …)
    counts: Counter[str]

    def close(self) -> None: ...
    def commit(self) -> None: ...
    def begin(self) -> None: ...
    def rollback(self) -> None: ...
    def savepoint(self) -> None: ...
    def release(self) -> None: ...
    def rollback_to(self) -> None: ...
    def upsert(self, url: str, title: str, text: str, **fields: Any) -> bool: ...
    def remove(self, url: str) -> bool: ...
    def set_authority(self, authority: Mapping[str, float]) -> int: ...
    def set_relevance(self, relevance: Mapping[str, float]) -> int: ...
    def optimize(self) -> None: ...
    def begin_crawl(self) -> int: ...
    def end_crawl(self, crawl_id: int, counts: Mapping[str, int]) -> None: ...
    def record_crawl(
        self, started: float, finished: float | None, counts: Mapping[str, int]
    ) -> int: ...
    def crawls(self, limit: int = 10) -> list[dict[str, Any]]: ...
    def __len__(self) -> int: ...
    def __contains__(self, url: object) -> bool: ...
    def pages(self) -> Iterator[dict[str, Any]]: ...
    def last_changes(self, limit: int = 200) -> tuple[int, list[dict[str, Any]]]: ...
    def count_changes(self, crawl_id: int) -> int: ...
    def summary(self) -> dict[str, Any]: ...
    def search(
        self, query: str, limit: int = 10, weights: RankWeights | None = None
    ) -> SearchResult: ...


@runtime_checkable
class QueuedWrites(Protocol):
    """A store that sends a transaction's writes together with its commit (PostgreSQL: one
    pipeline, one round trip): the pipeline queues each item's write and learns its outcome
    from :meth:`flush` (True: new / removed, False: replaced / nothing to remove, or the
    error of a write the database refused, undone alone)."""

    def queue_upsert(self, url: str, title: str, text: str, **fields: Any) -> None: ...
    def queue_remove(self, url: str) -> None: ...
    def flush(self) -> list[bool | IndexStoreError]: ...


def is_postgres(location: str | Path) -> bool:
    return str(location).lower().startswith(POSTGRES_SCHEMES)


def describe(location: str | Path) -> str:
    """``location`` fit for a log line: a URL's password masked."""
    return redact_url(str(location)) if is_postgres(location) else str(location)


def open_index(
    location: str | Path,
    *,
    readonly: bool = False,
    busy_timeout: float | None = None,
    retry_timeout: float | None = None,
    pool_size: int | None = None,
    client_tsvector: bool = True,
) -> IndexStore:
    """The index at ``location`` (a SQLite path or a ``postgresql://`` URL); ``readonly``: for
    searching (a missing SQLite file is :class:`FileNotFoundError`, not created).

    ``busy_timeout``: seconds a SQLite write waits for another process's; ``retry_timeout``:
    seconds a PostgreSQL write waits for a lost server to come back (then
    :class:`IndexUnavailable`); ``pool_size``: the PostgreSQL readers' pool;
    ``client_tsvector``: a PostgreSQL writer builds the pages' tsvectors itself when it can
    (:mod:`focuscrawl.index.pgtsvector`)."""
    if is_postgres(location):
        from focuscrawl.index.pgstore import PostgresIndex

        kwargs: dict[str, Any] = {}
        if retry_timeout is not None:
            kwargs["retry_timeout"] = retry_timeout
        if pool_size is not None:
            kwargs["pool_size"] = pool_size
        return PostgresIndex.open(
            str(location), readonly=readonly, client_tsvector=client_tsvector, **kwargs
        )
    from focuscrawl.index.store import PageIndex

    if busy_timeout is None:
        return PageIndex.open(location, readonly=readonly)
    return PageIndex.open(location, readonly=readonly, busy_timeout=busy_timeout)
