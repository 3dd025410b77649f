"""The rows of the PostgreSQL index: text made fit for PostgreSQL (counted), the upsert's SQL
and parameters, a write's outcome (used by :mod:`focuscrawl.index.pgstore`)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from focuscrawl.index import pgschema, pgtsvector
from focuscrawl.index.pgsearch import fold_accents
from focuscrawl.index.schema import diff_json
from focuscrawl.index.store import cap_text, cap_title, clean_text

MAX_FTS_BYTES = 250_000  # UTF-8 bytes of text in a page's tsvector (a tsvector is <= 1 MB)
CFG = pgschema.CONFIG


def clean_pg(text: str, counts: Counter[str]) -> str:
    """``text`` that PostgreSQL takes: no NUL (cleaned by the caller), no lone surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        counts["surrogates_replaced"] += 1
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_url(url: str, counts: Counter[str]) -> str:
    if "\x00" in url:  # PostgreSQL text cannot hold it; %00 is what a URL would say
        counts["nul_stripped"] += 1
        url = url.replace("\x00", "%00")
    return clean_pg(url, counts)


def upsert_statement(
    counts: Counter[str],
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
    client_tsv: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The upsert's SQL and parameters (text cleaned, capped and counted); ``client_tsv``: the
    tsvectors built here (:mod:`.pgtsvector`) when the text allows, else by the server."""
    title = clean_pg(clean_text(cap_title(title or "", counts), counts), counts)
    body = clean_pg(clean_text(cap_text(text or "", counts), counts), counts)
    fts = body
    if len(body) * 4 > MAX_FTS_BYTES:  # may be over: measure in bytes
        raw = body.encode("utf-8")
        if len(raw) > MAX_FTS_BYTES:
            fts = raw[:MAX_FTS_BYTES].decode("utf-8", "ignore")
            counts["fts_capped"] += 1
    fts, fts_title = fold_accents(fts), fold_accents(title)
    now = time.time()
    params = {
        "url": clean_url(url, counts),
        "title": title,
        "body": body,
        "fts": fts,
        "fts_title": fts_title,
        "relevance": float(relevance),
        "authority": float(authority or 0.0),
        "keep_authority": authority is None,
        "depth": int(depth),
        "fetched_at": float(fetched_at),
        "now": now,
        "change": clean_pg(change.replace("\x00", ""), counts),
        "has_diff": bool(diff),
        "diff": diff_json(diff) if diff else "",
        "changed_at": float(changed_at or fetched_at or now) if diff else 0.0,
        "crawl_id": int(crawl_id) if diff else 0,
    }
    vectors = pgtsvector.page_vectors(fts_title, fts) if client_tsv else None
    if vectors is not None:
        params["tsv"], params["title_tsv"] = vectors
        del params["fts"], params["fts_title"]
        return UPSERT_CLIENT_TSV, params
    if client_tsv:
        counts["fts_server_parsed"] += 1
    sql = UPSERT
    for name, same in (("fts", body), ("fts_title", title)):
        if params[name] is same:  # one parameter sent once
            sql = sql.replace(f"%({name})s", "%(body)s" if name == "fts" else "%(title)s")
            del params[name]
    return sql, params


def outcome(cur: Any) -> bool:
    """A write's outcome from its cursor: the upsert's ``xmax = 0`` (new), a removal's count."""
    if cur.description is not None:
        return bool(cur.fetchone()[0])
    return bool(cur.rowcount > 0)


REMOVE = "DELETE FROM focuscrawl_pages WHERE url = %s"

PAGE_KEYS = (
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

_INSERT = """
INSERT INTO focuscrawl_pages AS p (url, title, body, relevance, authority, depth, fetched_at,
    indexed_at, change, change_diff, changed_at, changed_in, tsv, title_tsv)
SELECT %(url)s, %(title)s, %(body)s, %(relevance)s, %(authority)s, %(depth)s, %(fetched_at)s,
    %(now)s, %(change)s, %(diff)s, %(changed_at)s, %(crawl_id)s,
"""
_ON_CONFLICT = """
ON CONFLICT (url) DO UPDATE SET
    title = EXCLUDED.title, body = EXCLUDED.body, relevance = EXCLUDED.relevance,
    authority = CASE WHEN %(keep_authority)s THEN p.authority ELSE EXCLUDED.authority END,
    depth = EXCLUDED.depth, fetched_at = EXCLUDED.fetched_at, indexed_at = EXCLUDED.indexed_at,
    change = EXCLUDED.change,
    change_diff = CASE WHEN %(has_diff)s THEN EXCLUDED.change_diff ELSE p.change_diff END,
    changed_at = CASE WHEN %(has_diff)s THEN EXCLUDED.changed_at ELSE p.changed_at END,
    changed_in = CASE WHEN %(has_diff)s THEN EXCLUDED.changed_in ELSE p.changed_in END,
    tsv = EXCLUDED.tsv, title_tsv = EXCLUDED.title_tsv
RETURNING (xmax = 0)
"""

#: the tsvectors made by the server from the (accent-folded) title and text
UPSERT = (
    _INSERT
    + f"""    setweight(t.v, 'A') || setweight(to_tsvector('{CFG}', %(fts)s), 'D'), t.v
FROM (SELECT to_tsvector('{CFG}', %(fts_title)s) AS v) t"""
    + _ON_CONFLICT
)

#: the tsvectors made by the client (binary parameters of type tsvector: :mod:`.pgtsvector`)
UPSERT_CLIENT_TSV = _INSERT + "    %(tsv)s, %(title_tsv)s" + _ON_CONFLICT
