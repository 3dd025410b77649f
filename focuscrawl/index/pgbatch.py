"""Several queued upserts in one statement (used by :meth:`PostgresIndex.flush
<focuscrawl.index.pgstore.PostgresIndex.flush>`).

A batch of queued writes goes to the server as few statements as it can: each run of upserts
(:func:`focuscrawl.index.pgrows.upsert_statement`'s parameters) becomes one ``INSERT … SELECT
FROM unnest(arrays) … ON CONFLICT`` with a column per array, so the client encodes, and the
server binds, plans and starts, one statement for many pages (per page it was most of the
client's CPU after the tsvector, and a fifth of the server's). A run stops at a removal (kept
in its place: an upsert and a removal of one URL keep their order), at a URL already in the
run (``ON CONFLICT`` cannot touch a row twice in one statement), at an upsert that keeps the
page's authority where the run sets it (or the reverse: the flag is in the SQL), and at
:data:`MAX_ROWS`. Each page's outcome (new or replaced) comes back by URL. The statements are
the same writes as one per page, in one transaction: a write the server refuses fails its
statement, and the store then replays the batch a write at a time (one statement each) to
undo that write alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from focuscrawl.index import pgschema

CFG = pgschema.CONFIG
MAX_ROWS = 256  # pages in one statement (bounded: a page's text is up to MAX_TEXT_CHARS)

#: each array's name and type, in the order of the statement's parameters
COLUMNS = (
    ("url", "text"),
    ("title", "text"),
    ("body", "text"),
    ("relevance", "float8"),
    ("authority", "float8"),
    ("depth", "int4"),
    ("fetched_at", "float8"),
    ("now", "float8"),
    ("change", "text"),
    ("diff", "text"),
    ("changed_at", "float8"),
    ("crawl_id", "int8"),
    ("tsv", "tsvector"),  # NULL: the server builds it from fts_title and fts
    ("title_tsv", "tsvector"),
    ("fts", "text"),  # NULL: the body
    ("fts_title", "text"),  # NULL: the title
)


def _statement(keep_authority: bool) -> str:
    # the client's tsvectors are sent in the binary format only (pgtsvector.TsVectorDumper)
    arrays = ", ".join(f"%b::{kind}[]" for _, kind in COLUMNS)
    names = ", ".join(name for name, _ in COLUMNS)
    authority = "p.authority" if keep_authority else "EXCLUDED.authority"
    # a page's diff columns change only with a diff: upsert_statement sets changed_at (never
    # 0) exactly then (checked by batches: a page where it does not hold goes alone)
    return f"""
INSERT INTO focuscrawl_pages AS p (url, title, body, relevance, authority, depth, fetched_at,
    indexed_at, change, change_diff, changed_at, changed_in, tsv, title_tsv)
SELECT v.url, v.title, v.body, v.relevance, v.authority, v.depth, v.fetched_at, v.now,
    v.change, v.diff, v.changed_at, v.crawl_id,
    coalesce(v.tsv, setweight(to_tsvector('{CFG}', coalesce(v.fts_title, v.title)), 'A')
        || setweight(to_tsvector('{CFG}', coalesce(v.fts, v.body)), 'D')),
    coalesce(v.title_tsv, to_tsvector('{CFG}', coalesce(v.fts_title, v.title)))
FROM unnest({arrays}) AS v({names})
ON CONFLICT (url) DO UPDATE SET
    title = EXCLUDED.title, body = EXCLUDED.body, relevance = EXCLUDED.relevance,
    authority = {authority},
    depth = EXCLUDED.depth, fetched_at = EXCLUDED.fetched_at, indexed_at = EXCLUDED.indexed_at,
    change = EXCLUDED.change,
    change_diff = CASE WHEN EXCLUDED.changed_at <> 0 THEN EXCLUDED.change_diff ELSE p.change_diff END,
    changed_at = CASE WHEN EXCLUDED.changed_at <> 0 THEN EXCLUDED.changed_at ELSE p.changed_at END,
    changed_in = CASE WHEN EXCLUDED.changed_at <> 0 THEN EXCLUDED.changed_in ELSE p.changed_in END,
    tsv = EXCLUDED.tsv, title_tsv = EXCLUDED.title_tsv
RETURNING p.url, (p.xmax = 0)
"""


UPSERT_MANY = {keep: _statement(keep) for keep in (False, True)}


def _batchable(params: Any) -> bool:
    """An upsert whose parameters the batch statement reads alike."""
    return isinstance(params, dict) and params["has_diff"] == (params["changed_at"] != 0)


class Statement:
    """One statement of a batch: the SQL, its parameters, and the queued writes it makes
    (their indexes; ``urls``: each one's URL, for a statement of several pages)."""

    __slots__ = ("params", "sql", "urls", "writes")

    def __init__(self, sql: str, params: Any, writes: list[int], urls: list[str] | None) -> None:
        self.sql, self.params, self.writes, self.urls = sql, params, writes, urls

    def outcomes(self, cur: Any) -> list[bool]:
        """Each write's outcome from the statement's cursor (after the commit)."""
        if self.urls is None:
            from focuscrawl.index.pgrows import outcome

            return [outcome(cur)]
        new = dict(cur.fetchall())
        return [bool(new[url]) for url in self.urls]


def batches(queued: Sequence[tuple[str, Any]]) -> list[Statement]:
    """The queued writes (SQL, parameters) as statements, several pages' upserts in one."""
    out: list[Statement] = []
    run: list[int] = []
    urls: set[str] = set()
    keep = False

    def close() -> None:
        if len(run) == 1:
            out.append(Statement(*queued[run[0]], [run[0]], None))
        elif run:
            rows = [queued[i][1] for i in run]
            arrays = [[row.get(name) for row in rows] for name, _ in COLUMNS]
            out.append(Statement(UPSERT_MANY[keep], arrays, list(run), arrays[0]))
        run.clear()
        urls.clear()

    for i, (sql, params) in enumerate(queued):
        if not _batchable(params):
            close()
            out.append(Statement(sql, params, [i], None))
            continue
        if run and (
            params["url"] in urls or params["keep_authority"] != keep or len(run) >= MAX_ROWS
        ):
            close()
        keep = params["keep_authority"]
        run.append(i)
        urls.add(params["url"])
    close()
    return out
