"""A durable outbox of change notifications: SQLite in the data directory, no Scrapy.

Each notification has a key (its page and version: :func:`notification_key`); adding a key the
outbox has seen is a no-op, so a change is queued once however often it is reported, and a
delivered one is never sent again. Undelivered notifications survive the process: the next crawl
(or the same one, after a back-off) sends them. The file is bounded: at most ``max_pending``
waiting (past it new ones are refused and counted by the caller) and ``max_delivered`` delivered
keys remembered (the oldest forgotten first).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

MAX_PENDING = 100_000
MAX_DELIVERED = 100_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    key TEXT PRIMARY KEY,
    payload TEXT NOT NULL,
    created REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL DEFAULT 0,
    delivered REAL
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (delivered, next_at);
"""


def notification_key(url: str, version: str) -> str:
    """The key of one change: the page's URL and its new version (a content hash)."""
    return hashlib.sha256(f"{url}\n{version}".encode()).hexdigest()[:32]


class Outbox:
    def __init__(
        self, path: str | Path, max_pending: int = MAX_PENDING, max_delivered: int = MAX_DELIVERED
    ) -> None:
        self.path = Path(path)
        self.max_pending = max_pending
        self.max_delivered = max_delivered
        self.conn: sqlite3.Connection | None = None

    def open(self) -> Outbox:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(SCHEMA)
        return self

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _db(self) -> sqlite3.Connection:
        assert self.conn is not None, "open() the outbox first"
        return self.conn

    def add(self, key: str, payload: dict[str, Any], now: float | None = None) -> str:
        """``added``, ``known`` (queued or delivered before: not again) or ``full``."""
        db = self._db()
        if db.execute("SELECT 1 FROM outbox WHERE key = ?", (key,)).fetchone():
            return "known"
        if self.pending() >= self.max_pending:
            return "full"
        with db:
            db.execute(
                "INSERT OR IGNORE INTO outbox (key, payload, created) VALUES (?, ?, ?)",
                (key, json.dumps(payload, ensure_ascii=False), time.time() if now is None else now),
            )
        return "added"

    def due(self, now: float, limit: int = 20) -> list[tuple[str, str, int]]:
        """Up to ``limit`` undelivered (key, payload JSON, attempts) due by ``now``, oldest first."""
        return (
            self._db()
            .execute(
                "SELECT key, payload, attempts FROM outbox WHERE delivered IS NULL AND next_at <= ?"
                " ORDER BY created, key LIMIT ?",
                (now, limit),
            )
            .fetchall()
        )

    def next_due(self) -> float | None:
        row = (
            self._db().execute("SELECT min(next_at) FROM outbox WHERE delivered IS NULL").fetchone()
        )
        return None if row is None or row[0] is None else float(row[0])

    def pending(self) -> int:
        return int(
            self._db().execute("SELECT count(*) FROM outbox WHERE delivered IS NULL").fetchone()[0]
        )

    def delivered(self, key: str, now: float) -> None:
        db = self._db()
        with db:
            db.execute("UPDATE outbox SET delivered = ? WHERE key = ?", (now, key))
            db.execute(
                "DELETE FROM outbox WHERE key IN (SELECT key FROM outbox WHERE delivered IS NOT"
                " NULL ORDER BY delivered DESC LIMIT -1 OFFSET ?)",
                (self.max_delivered,),
            )

    def failed(self, key: str, next_at: float) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_at = ? WHERE key = ?",
                (next_at, key),
            )

    def retry_now(self) -> None:
        """A new crawl tries what is waiting at once (not after the last crawl's back-off)."""
        with self._db() as db:
            db.execute("UPDATE outbox SET next_at = 0 WHERE delivered IS NULL")
