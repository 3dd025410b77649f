"""The page index's SQLite schema, its versions and migrations, and the stored form of a
page's last change.

Schema 1: ``pages`` (URL, title, relevance, authority, depth, fetch and index times, change),
``pages_fts`` (FTS5, same rowid), ``crawls``. Schema 2 adds to ``pages`` the last significant
change of the page: ``change_diff`` (JSON of :meth:`focuscrawl.change.classify.Change.to_dict`),
``changed_at`` (the fetch time of the version that showed it) and ``changed_in`` (the crawl's
id). An index of schema 1 is migrated in place when opened for writing (three ``ALTER TABLE …
ADD COLUMN``: nothing rewritten) and read as it is when opened read-only.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: the last significant change of each page (change_diff, changed_at, …)
READABLE_SCHEMAS = frozenset({1, 2})  # an index of schema 1 is read as is, migrated when written

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    relevance REAL NOT NULL DEFAULT 0,
    authority REAL NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0,
    fetched_at REAL NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL DEFAULT 0,
    change TEXT NOT NULL DEFAULT '',
    change_diff TEXT NOT NULL DEFAULT '',
    changed_at REAL NOT NULL DEFAULT 0,
    changed_in INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(
    title, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS crawls (
    id INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    finished REAL,
    counts TEXT NOT NULL DEFAULT '{}'
);
"""

# schema 1 → 2: what a page's last significant change was (Change.to_dict() as JSON), when (the
# fetch time of the version that showed it) and in which crawl (crawls.id)
_MIGRATE_1_2 = (
    "ALTER TABLE pages ADD COLUMN change_diff TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN changed_at REAL NOT NULL DEFAULT 0",
    "ALTER TABLE pages ADD COLUMN changed_in INTEGER NOT NULL DEFAULT 0",
)
DIFF_COLUMNS = ("change_diff", "changed_at", "changed_in")
MAX_DIFF_CHARS = 64_000  # a diff is bounded by Change (20 fragments of 200 characters …)


def diff_json(diff: Mapping[str, Any]) -> str:
    """The stored form of a change's diff: JSON, cut to :data:`MAX_DIFF_CHARS` (fragments
    dropped from the end, never a broken JSON text). Lists and strings are clipped first
    (:class:`~focuscrawl.change.classify.Change` keeps 20 fragments of 200 characters; a diff
    from elsewhere may not), so the work stays linear."""
    out = {str(k): _clip(v) for k, v in diff.items()}
    text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    for name in ("moved", "items_removed", "items_added", "removed", "added"):
        while len(text) > MAX_DIFF_CHARS and out.get(name):
            out[name] = list(out[name])[:-1]
            text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= MAX_DIFF_CHARS else json.dumps({"status": "significant"})


MAX_LIST, MAX_STRING = 100, 2_000  # per list of a stored diff, per string in it


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_STRING]
    if isinstance(value, (list, tuple)):
        return [_clip(v) for v in value[:MAX_LIST]]
    if isinstance(value, Mapping):
        return {str(k)[:MAX_STRING]: _clip(v) for k, v in list(value.items())[:MAX_LIST]}
    return (
        value if isinstance(value, (int, float, bool)) or value is None else str(value)[:MAX_STRING]
    )


def parse_diff(text: str | None) -> dict[str, Any]:
    """A stored diff read back ({} when none, or unreadable)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def migrate(conn: sqlite3.Connection) -> None:
    """Bring an index of an older schema to :data:`SCHEMA_VERSION`, in one transaction (another
    process opening the same index at the same time waits, then finds it done)."""
    if _schema_of(conn) != SCHEMA_VERSION:
        _migrate_1_2(conn)
    columns = {r[1] for r in conn.execute("PRAGMA table_info(pages)")}
    if "changed_in" in columns:  # else not an index we know: _check_schema says so
        # the changes page reads the pages of one crawl's changes
        conn.execute("CREATE INDEX IF NOT EXISTS pages_changed_in ON pages(changed_in)")
        conn.commit()


def _migrate_1_2(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _schema_of(conn) == 1:
            columns = {r[1] for r in conn.execute("PRAGMA table_info(pages)")}
            for sql, column in zip(_MIGRATE_1_2, DIFF_COLUMNS, strict=True):
                if column not in columns:
                    conn.execute(sql)
            conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
            logger.info("index: schema 1 migrated to 2 (pages carry their last change)")
        conn.commit()
    except BaseException:
        conn.rollback()
        raise


def _schema_of(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    try:
        return int(row[0]) if row is not None else None
    except ValueError:
        return None
