"""The change store: per URL, the latest fingerprints and the visit history.

:class:`ChangeStore` is the interface; :mod:`~focuscrawl.change.store_sqlite` (embedded default,
one file in the crawl's data directory) and :mod:`~focuscrawl.change.store_redis` (when a Redis
URL is set) implement it, and ``tests/test_change_store.py`` runs one contract suite on both.

A visit is ``(fetched_at, status)``; the history keeps the last ``max_history`` visits in a compact
text form (``"1714000000.0 s"`` entries joined by ``;``) that both backends share. ``record`` is
one atomic read-modify-write: the history grows by one visit and the fingerprints are replaced
unless the visit brought no body (``unchanged`` via 304, ``deleted``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.change.record import (  # re-exported: the store's public names
    DEFAULT_MAX_HISTORY,
    SCHEMA_VERSION,
    PageRecord,
    StoreError,
    append_history,
    decode_history,
    dump_fingerprints,
    encode_visit,
    keeps_fingerprints,
    parse_fingerprints,
)
from focuscrawl.credentials import with_env_password

__all__ = [
    "DEFAULT_MAX_HISTORY",
    "SCHEMA_VERSION",
    "ChangeStore",
    "PageRecord",
    "StoreError",
    "append_history",
    "decode_history",
    "dump_fingerprints",
    "encode_visit",
    "keeps_fingerprints",
    "open_store",
    "parse_fingerprints",
]


@runtime_checkable
class ChangeStore(Protocol):
    """Where the change pipeline and the recrawl policy keep page versions."""

    def open(self) -> None:
        """Connect / create the schema. Raises :class:`StoreError` when unusable."""
        ...

    def close(self) -> None: ...

    def get(self, url: str) -> PageRecord | None: ...

    def record(
        self,
        url: str,
        fingerprints: Fingerprints | None,
        status: str,
        fetched_at: float,
        features: Mapping[str, Any] | None = None,
    ) -> PageRecord:
        """Append the visit and (unless 304/deleted) replace the fingerprints, atomically."""
        ...

    def records(self) -> Iterator[PageRecord]:
        """Every stored page (any order)."""
        ...

    def __len__(self) -> int: ...

    def due(self, now: float, budget: int = 0, policy: str = "change-rate", **kw: Any) -> list[str]:
        """The URLs a recrawl cycle revisits now, best first, at most ``budget`` (0: all)."""
        ...


def open_store(settings: Mapping[str, Any], data_dir: str | None = None) -> ChangeStore:
    """The store the settings choose (not yet opened): Redis when a Redis URL is set.

    ``FOCUSCRAWL_CHANGE_STORE`` = ``auto`` (default) | ``sqlite`` | ``redis``.
    """
    from focuscrawl.change.store_redis import RedisChangeStore
    from focuscrawl.change.store_sqlite import SqliteChangeStore

    kind = str(settings.get("FOCUSCRAWL_CHANGE_STORE") or "auto")
    url = settings.get("FOCUSCRAWL_REDIS_URL") or settings.get("REDIS_URL") or ""
    url = url or os.environ.get("FOCUSCRAWL_REDIS_URL") or os.environ.get("REDIS_URL") or ""
    url = with_env_password(url)
    max_history = int(settings.get("FOCUSCRAWL_CHANGE_MAX_HISTORY") or DEFAULT_MAX_HISTORY)
    if kind == "redis" or (kind == "auto" and url):
        if not url:
            raise StoreError(
                "FOCUSCRAWL_CHANGE_STORE=redis needs FOCUSCRAWL_REDIS_URL or REDIS_URL"
            )
        prefix = str(settings.get("FOCUSCRAWL_CHANGE_REDIS_PREFIX") or "fc:chg")
        cluster = str(settings.get("FOCUSCRAWL_REDIS_CLUSTER") or "").lower() in ("1", "true")
        return RedisChangeStore(url, prefix=prefix, max_history=max_history, cluster=cluster)
    if kind not in ("auto", "sqlite"):
        raise StoreError(f"unknown FOCUSCRAWL_CHANGE_STORE {kind!r}: auto, sqlite or redis")
    base = data_dir or str(settings.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data")
    busy = float(settings.get("FOCUSCRAWL_DB_BUSY_TIMEOUT") or 60.0)
    return SqliteChangeStore(
        os.path.join(base, "change.sqlite3"), max_history=max_history, busy_timeout=busy
    )
