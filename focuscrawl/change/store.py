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

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from focuscrawl.change.classify import STATUSES
from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.credentials import with_env_password

#: the layout both backends write; a store written by a NEWER version is refused
SCHEMA_VERSION = 2
DEFAULT_MAX_HISTORY = 64

_CODE = {"new": "n", "unchanged": "u", "insignificant": "i", "significant": "s", "deleted": "d"}
_STATUS = {v: k for k, v in _CODE.items()}


class StoreError(RuntimeError):
    """The change store cannot be used: wrong schema, lost data, unreachable server."""


def encode_visit(fetched_at: float, status: str) -> str:
    if status not in _CODE:
        raise ValueError(f"unknown change status {status!r}; expected one of {STATUSES}")
    return f"{fetched_at:.3f} {_CODE[status]}"


def decode_history(text: str) -> list[tuple[float, str]]:
    """Visits from the compact form; malformed entries are skipped (never a crash)."""
    visits: list[tuple[float, str]] = []
    for entry in (text or "").split(";"):
        parts = entry.split()
        if len(parts) == 2 and parts[1] in _STATUS:
            try:
                visits.append((float(parts[0]), _STATUS[parts[1]]))
            except ValueError:
                continue
    return visits


def append_history(text: str, visit: str, max_history: int) -> str:
    entries = [e for e in (text or "").split(";") if e]
    entries.append(visit)
    return ";".join(entries[-max_history:])


@dataclass(slots=True)
class PageRecord:
    url: str
    fingerprints: Fingerprints | None = None  # of the latest version with a body
    history: list[tuple[float, str]] = field(default_factory=list)  # (fetched_at, status)
    features: dict[str, Any] = field(default_factory=dict)  # for clustering: depth, size, …

    @property
    def last_fetched(self) -> float:
        return self.history[-1][0] if self.history else 0.0

    @property
    def status(self) -> str:
        return self.history[-1][1] if self.history else ""

    @property
    def last_changed(self) -> float:
        for t, s in reversed(self.history):
            if s in ("new", "significant", "deleted"):
                return t
        return 0.0

    @property
    def deleted(self) -> bool:
        return self.status == "deleted"


def parse_fingerprints(text: str | bytes | None) -> Fingerprints | None:
    if not text:
        return None
    return Fingerprints.from_dict(json.loads(text))


def dump_fingerprints(fp: Fingerprints | None) -> str:
    return json.dumps(fp.to_dict(), separators=(",", ":")) if fp is not None else ""


def keeps_fingerprints(status: str) -> bool:
    """Whether a visit of this status carries a body whose fingerprints replace the stored."""
    return status not in ("unchanged", "deleted")


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
        return RedisChangeStore(url, prefix=prefix, max_history=max_history)
    if kind not in ("auto", "sqlite"):
        raise StoreError(f"unknown FOCUSCRAWL_CHANGE_STORE {kind!r}: auto, sqlite or redis")
    base = data_dir or str(settings.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data")
    busy = float(settings.get("FOCUSCRAWL_DB_BUSY_TIMEOUT") or 60.0)
    return SqliteChangeStore(
        os.path.join(base, "change.sqlite3"), max_history=max_history, busy_timeout=busy
    )
