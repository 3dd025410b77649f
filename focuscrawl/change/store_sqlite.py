"""The embedded change store: one SQLite file in the crawl's data directory.

Schema (``PRAGMA user_version`` = 2)::

    pages(url TEXT PRIMARY KEY, fp TEXT, history TEXT, features TEXT)

``fp`` is the compact fingerprint JSON (:meth:`Fingerprints.to_dict`), ``history`` the compact
visit list of :mod:`focuscrawl.change.store`, ``features`` a JSON object. Version 1 (the first
release) had no ``features`` column: it is upgraded in place on open. A file from a newer
version, or a SQLite file that is not a change store, is refused with a clear error.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.change.record import (
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

logger = logging.getLogger(__name__)

_CREATE = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,
    fp TEXT NOT NULL DEFAULT '',
    history TEXT NOT NULL DEFAULT '',
    features TEXT NOT NULL DEFAULT '{}'
)
"""


BUSY_TIMEOUT = 60.0  # seconds a write waits for another process's (a crawl sharing the dir)


class SqliteChangeStore:
    def __init__(
        self, path: str, max_history: int = DEFAULT_MAX_HISTORY, busy_timeout: float = BUSY_TIMEOUT
    ) -> None:
        self.path = path
        self.max_history = max_history
        self.busy_timeout = busy_timeout
        self._db: sqlite3.Connection | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        if self._db is not None:
            return
        try:
            if self.path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.OperationalError as exc:  # locked past the timeout, disk, permissions
            raise StoreError(f"{self.path}: cannot open the change store ({exc})") from exc
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the change store ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a SQLite change store ({exc})") from exc
        if version > SCHEMA_VERSION:
            db.close()
            raise StoreError(
                f"{self.path}: change store schema {version} was written by a newer focuscrawl "
                f"(this one reads up to {SCHEMA_VERSION})"
            )
        if version == 0 and tables:
            db.close()
            raise StoreError(f"{self.path}: an SQLite file that is not a change store ({tables})")
        try:
            if version == 1:
                logger.info(
                    "upgrading change store %s from schema 1 to %d", self.path, SCHEMA_VERSION
                )
                db.execute("ALTER TABLE pages ADD COLUMN features TEXT NOT NULL DEFAULT '{}'")
            db.execute(_CREATE)
            if version != SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL: no corruption on a crash, at most the last commits lost on power
            # loss; a fsync per recorded visit would bound the crawl by the disk
            db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:  # another crawl's lock past the timeout, disk, permissions
            db.close()
            raise StoreError(f"{self.path}: cannot open the change store ({exc})") from exc
        self._db = db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("the change store is not open: call open() first")
        return self._db

    # --- the ChangeStore interface ------------------------------------------------------------
    def _row_to_record(self, url: str, fp: str, history: str, features: str) -> PageRecord:
        try:
            feats = json.loads(features or "{}")
            fps = parse_fingerprints(fp)
        except ValueError as exc:
            logger.warning("change store: unreadable record for %s skipped: %s", url, exc)
            feats, fps = {}, None
        return PageRecord(
            url, fps, decode_history(history), feats if isinstance(feats, dict) else {}
        )

    def get(self, url: str) -> PageRecord | None:
        row = self.db.execute(
            "SELECT url, fp, history, features FROM pages WHERE url = ?", (url,)
        ).fetchone()
        return self._row_to_record(*row) if row else None

    def record(
        self,
        url: str,
        fingerprints: Fingerprints | None,
        status: str,
        fetched_at: float,
        features: Mapping[str, Any] | None = None,
    ) -> PageRecord:
        visit = encode_visit(fetched_at, status)
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute(
                "SELECT fp, history, features FROM pages WHERE url = ?", (url,)
            ).fetchone()
            fp, history, feats = row if row else ("", "", "{}")
            history = append_history(history, visit, self.max_history)
            if fingerprints is not None and keeps_fingerprints(status):
                fp = dump_fingerprints(fingerprints)
            if features:
                merged = json.loads(feats or "{}")
                merged.update(features)
                feats = json.dumps(merged, separators=(",", ":"))
            db.execute(
                "INSERT OR REPLACE INTO pages (url, fp, history, features) VALUES (?, ?, ?, ?)",
                (url, fp, history, feats),
            )
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:  # SQLite rolls back by itself on some errors (a full disk)
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):  # locked past the timeout, disk full, read-only
                raise StoreError(f"{self.path}: cannot record the visit of {url}: {exc}") from exc
            raise
        return self._row_to_record(url, fp, history, feats)

    def records(self) -> Iterator[PageRecord]:
        for row in self.db.execute("SELECT url, fp, history, features FROM pages"):
            yield self._row_to_record(*row)

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pages").fetchone()[0])

    def due(self, now: float, budget: int = 0, policy: str = "change-rate", **kw: Any) -> list[str]:
        """The URLs to revisit now, best first (see :func:`focuscrawl.change.policy.due`)."""
        from focuscrawl.change.policy import due

        return due(self.records(), now, budget, policy, **kw)
