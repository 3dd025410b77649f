"""The page index: SQLite FTS5 over the relevant pages of a crawl, updated page by page.

One ``pages`` row per URL (metadata, relevance, authority) and one ``pages_fts`` row with the same
rowid (title and text, ``porter unicode61`` tokens). Adding, replacing or removing a page touches
only that page's rows and postings, so an update costs the pages changed, not the index size.
The database runs in WAL mode: ``focuscrawl serve`` can read while a crawl writes, and crawls that
share one data directory take turns writing: each write transaction is short (see
:meth:`PageIndex.write`) and waits up to ``busy_timeout`` seconds for another's to end. Each page
carries its last significant change (the schema and its migration: :mod:`.schema`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuscrawl.index.query import Term, match_expression, parse_query
from focuscrawl.index.rank import RankWeights, combine
from focuscrawl.index.schema import (
    DIFF_COLUMNS,
    READABLE_SCHEMAS,
    SCHEMA,
    SCHEMA_VERSION,
    diff_json,
    migrate,
    parse_diff,
)

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = 1_000_000  # longer texts are cut before indexing
MAX_TITLE_CHARS = 4_096  # a hostile <title> of megabytes is cut too
HIT_START, HIT_END = "\ue000", "\ue001"  # snippet markers (private use: stripped from page text)
SNIPPET_TOKENS = 24
BUSY_TIMEOUT = 60.0  # seconds a write waits for another process's transaction to end


def locked_error(exc: BaseException) -> bool:
    """Whether a SQLite error says another connection held the lock past the timeout."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_STRIP = str.maketrans({HIT_START: " ", HIT_END: " ", "\x00": " "})


def clean_text(text: str, counts: Counter[str]) -> str:
    """``text`` without NUL bytes and snippet markers (each becomes a space); NULs counted
    (``nul_stripped``: PostgreSQL's text refuses them, SQLite's FTS5 stops a column at one)."""
    if "\x00" in text:
        counts["nul_stripped"] += 1
    elif HIT_START not in text and HIT_END not in text:
        return text  # nothing to strip (str.translate is slow on non-ASCII text)
    return text.translate(_STRIP)


def cap_text(text: str, counts: Counter[str]) -> str:
    """``text`` cut to :data:`MAX_TEXT_CHARS` (``text_capped`` counted when it was longer)."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    counts["text_capped"] += 1
    return text[:MAX_TEXT_CHARS]


def cap_title(title: str, counts: Counter[str]) -> str:
    """``title`` cut to :data:`MAX_TITLE_CHARS` (``title_capped`` counted)."""
    if len(title) <= MAX_TITLE_CHARS:
        return title
    counts["title_capped"] += 1
    return title[:MAX_TITLE_CHARS]


@dataclass(frozen=True, slots=True)
class Hit:
    url: str
    title: str
    snippet: str  # page text with HIT_START / HIT_END around matched words
    relevance: float
    authority: float
    bm25: float  # FTS5 bm25(): negative, lower is a better text match
    score: float  # combined score (rank.combine), higher is better
    fetched_at: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    hits: list[Hit]
    mode: str  # "and", or "or" when no page held every term


class IndexBusy(RuntimeError):
    """Another process held the index's write lock longer than the busy timeout."""


class PageIndex:
    """An FTS5 page index in one SQLite file (or ``":memory:"``)."""

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn = conn
        self.path = path
        self.has_diff = True  # the pages carry their last change (schema 2); set on open
        self.counts: Counter[str] = Counter()  # hostile input cleaned on the way in

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        readonly: bool = False,
        cache_mb: int = 64,
        busy_timeout: float = BUSY_TIMEOUT,
    ) -> PageIndex:
        """Open (``readonly=False``: create if missing) the index; ValueError if not an index,
        :class:`IndexBusy` when another process kept it locked past ``busy_timeout`` seconds,
        ``sqlite3.OperationalError`` / ``OSError`` when the disk refuses (see
        :func:`focuscrawl.faults.storage_fault`)."""
        path = str(path)
        if readonly:
            if not Path(path).is_file():
                raise FileNotFoundError(f"no index at {path}")
            uri = Path(path).resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=busy_timeout)
        else:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, check_same_thread=False, timeout=busy_timeout)
        try:
            if not readonly:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(SCHEMA)
                conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)",
                    (str(SCHEMA_VERSION),),
                )
                conn.commit()
                migrate(conn)
            conn.execute(f"PRAGMA cache_size = {-1024 * int(cache_mb)}")  # KiB when negative
            index = cls(conn, path)
            index._check_schema()
        except (sqlite3.DatabaseError, ValueError) as exc:
            conn.close()
            if isinstance(exc, ValueError):
                raise
            if locked_error(exc):
                raise IndexBusy(
                    f"{path} is locked by another process (waited {busy_timeout:.0f}s): {exc}"
                ) from exc
            if isinstance(exc, sqlite3.OperationalError):  # disk full, read-only, I/O
                raise
            raise ValueError(f"{path} is not a focuscrawl index: {exc}") from exc
        return index

    def _check_schema(self) -> None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.OperationalError:
            raise  # locked, I/O: not a verdict on the file
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{self.path} is not a focuscrawl index: {exc}") from exc
        try:
            version = int(row[0]) if row is not None else None
        except ValueError:
            version = None
        if version not in READABLE_SCHEMAS:
            raise ValueError(
                f"{self.path}: index schema {row and row[0]}, expected {SCHEMA_VERSION}"
            )
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(pages)")}
        self.has_diff = set(DIFF_COLUMNS) <= columns

    def close(self) -> None:
        self.conn.close()

    def commit(self) -> None:
        self.conn.commit()

    def begin(self) -> None:
        """Start a write transaction now (``BEGIN IMMEDIATE``), unless one is open: its reads
        and writes are one unit, and another process's write waits for its commit (a read that
        turned into a write could otherwise fail at once with "database is locked")."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")

    def rollback(self) -> None:
        """Undo the open transaction (SQLite may have rolled it back itself on a full disk)."""
        if self.conn.in_transaction:
            self.conn.rollback()

    def savepoint(self) -> None:
        """Mark the open transaction: :meth:`rollback_to` undoes what came after (one item)."""
        self.conn.execute("SAVEPOINT item")

    def release(self) -> None:
        self.conn.execute("RELEASE item")

    def rollback_to(self) -> None:
        self.conn.execute("ROLLBACK TO item")
        self.conn.execute("RELEASE item")

    def __enter__(self) -> PageIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.commit()
        self.close()

    # --- updates ----------------------------------------------------------------------------

    def upsert(
        self,
        url: str,
        title: str,
        text: str,
        *,
        relevance: float = 0.0,
        depth: int = 0,
        fetched_at: float = 0.0,
        change: str = "",
        authority: float | None = None,
        diff: Mapping[str, Any] | None = None,
        changed_at: float = 0.0,
        crawl_id: int = 0,
    ) -> bool:
        """Add or replace the page at ``url``; True when it was new to the index.

        ``diff`` (:meth:`focuscrawl.change.classify.Change.to_dict`), given with a significant
        change, becomes the page's last change, seen at ``changed_at`` in crawl ``crawl_id``;
        without it the page keeps the last change it had. Not committed: call :meth:`begin`
        first when another process may write the index."""
        title, body = (
            clean_text(cap_title(title or "", self.counts), self.counts),
            clean_text(cap_text(text or "", self.counts), self.counts),
        )
        now = time.time()
        row = self.conn.execute("SELECT id, authority FROM pages WHERE url = ?", (url,)).fetchone()
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO pages(url, title, relevance, authority, depth, fetched_at, indexed_at, change)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (url, title, relevance, authority or 0.0, depth, fetched_at, now, change),
            )
            rowid = cur.lastrowid
        else:
            rowid = row[0]
            self.conn.execute(
                "UPDATE pages SET title = ?, relevance = ?, authority = ?, depth = ?,"
                " fetched_at = ?, indexed_at = ?, change = ? WHERE id = ?",
                (
                    title,
                    relevance,
                    row[1] if authority is None else authority,
                    depth,
                    fetched_at,
                    now,
                    change,
                    rowid,
                ),
            )
            self.conn.execute("DELETE FROM pages_fts WHERE rowid = ?", (rowid,))
        if diff:
            self.conn.execute(
                "UPDATE pages SET change_diff = ?, changed_at = ?, changed_in = ? WHERE id = ?",
                (diff_json(diff), changed_at or fetched_at or now, crawl_id, rowid),
            )
        self.conn.execute(
            "INSERT INTO pages_fts(rowid, title, body) VALUES (?, ?, ?)", (rowid, title, body)
        )
        return row is None

    def remove(self, url: str) -> bool:
        """Remove the page at ``url``; True when it was in the index."""
        row = self.conn.execute("SELECT id FROM pages WHERE url = ?", (url,)).fetchone()
        if row is None:
            return False
        self.conn.execute("DELETE FROM pages_fts WHERE rowid = ?", (row[0],))
        self.conn.execute("DELETE FROM pages WHERE id = ?", (row[0],))
        return True

    def set_authority(self, authority: Mapping[str, float]) -> int:
        """Set the link authority of the URLs given (others keep theirs); pages updated."""
        cur = self.conn.executemany(
            "UPDATE pages SET authority = ? WHERE url = ?", ((a, u) for u, a in authority.items())
        )
        return cur.rowcount

    def set_relevance(self, relevance: Mapping[str, float]) -> int:
        """Set the topical relevance of the URLs given (a re-scored topic); pages updated."""
        cur = self.conn.executemany(
            "UPDATE pages SET relevance = ? WHERE url = ?", ((r, u) for u, r in relevance.items())
        )
        return cur.rowcount

    def optimize(self) -> None:
        """Merge FTS5 segments into one (faster queries; costs a pass over the whole index)."""
        self.conn.execute("INSERT INTO pages_fts(pages_fts) VALUES ('optimize')")
        self.conn.commit()

    # --- crawl bookkeeping (for the dashboard) ------------------------------------------------

    def begin_crawl(self) -> int:
        self.begin()
        cur = self.conn.execute("INSERT INTO crawls(started) VALUES (?)", (time.time(),))
        self.conn.commit()
        return int(cur.lastrowid or 0)

    def end_crawl(self, crawl_id: int, counts: Mapping[str, int]) -> None:
        self.begin()
        self.conn.execute(
            "UPDATE crawls SET finished = ?, counts = ? WHERE id = ?",
            (time.time(), json.dumps(dict(counts), sort_keys=True), crawl_id),
        )
        self.conn.commit()

    def record_crawl(
        self, started: float, finished: float | None, counts: Mapping[str, int]
    ) -> int:
        """Add a finished crawl's record (a copied index); its new id. Not committed."""
        cur = self.conn.execute(
            "INSERT INTO crawls(started, finished, counts) VALUES (?, ?, ?)",
            (started, finished, json.dumps(dict(counts), sort_keys=True)),
        )
        return int(cur.lastrowid or 0)

    def crawls(self, limit: int = 10) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT id, started, finished, counts FROM crawls ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [
            {"id": r[0], "started": r[1], "finished": r[2], "counts": json.loads(r[3] or "{}")}
            for r in rows
        ]

    # --- reading ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])

    def __contains__(self, url: object) -> bool:
        return self.conn.execute("SELECT 1 FROM pages WHERE url = ?", (url,)).fetchone() is not None

    def pages(self) -> Iterator[dict[str, Any]]:
        """Every indexed page with its text, in index order (for exports)."""
        cur = self.conn.execute(
            "SELECT p.url, p.title, f.body, p.relevance, p.authority, p.depth, p.fetched_at,"
            f" p.indexed_at, p.change, {self._diff_select('p.')} FROM pages p"
            " JOIN pages_fts f ON f.rowid = p.id ORDER BY p.id"
        )
        keys = (
            "url",
            "title",
            "text",
            "relevance",
            "authority",
            "depth",
            "fetched_at",
            "indexed_at",
            "change",
        )
        for row in cur:
            page = dict(zip(keys, row[:-3], strict=True))
            page["change_diff"] = parse_diff(row[-3])
            page["changed_at"] = row[-2]
            page["changed_in"] = row[-1]
            yield page

    def _diff_select(self, prefix: str = "") -> str:
        if self.has_diff:
            return ", ".join(prefix + c for c in DIFF_COLUMNS)
        return "'', 0, 0"  # an index of schema 1, opened read-only

    def last_changes(self, limit: int = 200) -> tuple[int, list[dict[str, Any]]]:
        """The significant changes of the last crawl that indexed any: (crawl id, pages newest
        change first, each with ``url``, ``title``, ``changed_at``, ``change_diff``) — at most
        ``limit`` pages; (0, []) when no crawl recorded a change."""
        if not self.has_diff:
            return 0, []
        row = self.conn.execute("SELECT max(changed_in) FROM pages").fetchone()
        crawl_id = int(row[0] or 0) if row else 0
        if not crawl_id:
            return 0, []
        cur = self.conn.execute(
            "SELECT url, title, changed_at, change_diff FROM pages"
            " WHERE changed_in = ? AND change_diff != '' ORDER BY changed_at DESC, id LIMIT ?",
            (crawl_id, max(1, int(limit))),
        )
        return crawl_id, [
            {"url": u, "title": t, "changed_at": at, "change_diff": parse_diff(d)}
            for u, t, at, d in cur
        ]

    def count_changes(self, crawl_id: int) -> int:
        """Pages whose last significant change was seen in crawl ``crawl_id``."""
        if not self.has_diff:
            return 0
        row = self.conn.execute(
            "SELECT count(*) FROM pages WHERE changed_in = ? AND change_diff != ''", (crawl_id,)
        ).fetchone()
        return int(row[0])

    def summary(self) -> dict[str, Any]:
        """Counts and freshness figures for the dashboard."""
        n, rel, oldest, newest, mean_fetched = self.conn.execute(
            "SELECT count(*), avg(relevance), min(fetched_at), max(fetched_at), avg(fetched_at)"
            " FROM pages"
        ).fetchone()
        return {
            "pages": n,
            "mean_relevance": rel,
            "oldest_fetch": oldest,
            "newest_fetch": newest,
            "mean_fetch": mean_fetched,
        }

    def candidates(
        self, terms: list[Term], mode: str, k: int, title_weight: float, scan_cap: int = 0
    ) -> list[tuple[int, float]]:
        """Top ``k`` (rowid, bm25) text matches for ``terms``, best first.

        FTS5 computes ``bm25()`` for every matching row (a few microseconds each). When more than
        ``scan_cap`` rows match (0: no cap), BM25 is computed only for the ``scan_cap`` most
        recently indexed matches, plus the best ``k`` pages whose title matches (scored on the
        title): latency stays bounded for unspecific queries, at the cost of exactness among
        thousands of weak matches.
        """
        expr = match_expression(terms, mode)
        sql = (
            "SELECT rowid, bm25(pages_fts, ?, 1.0) AS b FROM pages_fts WHERE pages_fts MATCH ?"
            " {where} ORDER BY b LIMIT ?"
        )
        boundary = None
        if scan_cap > 0:
            boundary = self.conn.execute(
                "SELECT rowid FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rowid DESC"
                " LIMIT 1 OFFSET ?",
                (expr, scan_cap),
            ).fetchone()
        if boundary is None:
            return self.conn.execute(sql.format(where=""), (title_weight, expr, k)).fetchall()
        recent = self.conn.execute(
            sql.format(where="AND rowid > ?"), (title_weight, expr, boundary[0], k)
        ).fetchall()
        # title matches anywhere in the index, scored on the title alone (FTS5 evaluates rowid
        # constraints on a MATCH slowly, so their full-text score is not looked up)
        titled = self.conn.execute(
            sql.format(where=""), (title_weight, f"{{title}} : ({expr})", k)
        ).fetchall()
        best: dict[int, float] = {}
        for rowid, b in recent + titled:
            best[rowid] = min(b, best.get(rowid, b))
        return sorted(best.items(), key=lambda c: c[1])[:k]

    def search(
        self, query: str, limit: int = 10, weights: RankWeights | None = None
    ) -> SearchResult:
        """Ranked hits for a user query; :class:`~focuscrawl.index.query.QueryError` on bad input."""
        weights = weights or RankWeights()
        limit = max(1, min(int(limit), 1000))
        terms = parse_query(query)
        k = max(weights.candidates, limit)
        mode = "and"
        cands = self.candidates(terms, mode, k, weights.title, weights.scan_cap)
        if not cands and len(terms) > 1:
            mode = "or"
            cands = self.candidates(terms, mode, k, weights.title, weights.scan_cap)
        if not cands:
            return SearchResult(query, [], mode)
        ids = [c[0] for c in cands]
        marks = ",".join("?" * len(ids))
        meta = {
            r[0]: r[1:]
            for r in self.conn.execute(
                f"SELECT id, url, title, relevance, authority, fetched_at FROM pages WHERE id IN ({marks})",
                ids,
            )
        }
        cands = [c for c in cands if c[0] in meta]
        scores = combine(
            [c[1] for c in cands],
            [meta[c[0]][2] for c in cands],
            [meta[c[0]][3] for c in cands],
            weights,
        )
        ranked = sorted(zip(scores, cands, strict=True), key=lambda sc: -sc[0])[:limit]
        top_ids = [c[0] for _, c in ranked]
        snippets = self._snippets(terms, mode, top_ids)
        hits = []
        for score, (rowid, bm25) in ranked:
            url, title, relevance, authority, fetched_at = meta[rowid]
            hits.append(
                Hit(
                    url,
                    title,
                    snippets.get(rowid, ""),
                    relevance,
                    authority,
                    bm25,
                    score,
                    fetched_at,
                )
            )
        return SearchResult(query, hits, mode)

    def _snippets(self, terms: list[Term], mode: str, ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT rowid, snippet(pages_fts, 1, ?, ?, '…', {SNIPPET_TOKENS}) FROM pages_fts"
            f" WHERE pages_fts MATCH ? AND rowid IN ({marks})",
            (HIT_START, HIT_END, match_expression(terms, mode), *ids),
        ).fetchall()
        return {r[0]: r[1] for r in rows}
