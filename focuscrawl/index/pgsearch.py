"""Search on the PostgreSQL index: user terms to tsqueries, BM25's idf, ranked candidates,
snippets (the ranking is described in :mod:`focuscrawl.index.pgstore` and docs/index.md)."""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Callable
from typing import Any

from focuscrawl.index import pgschema
from focuscrawl.index.query import Term, parse_query
from focuscrawl.index.rank import RankWeights, combine
from focuscrawl.index.store import HIT_END, HIT_START, SNIPPET_TOKENS, Hit, SearchResult

CFG = pgschema.CONFIG
SNIPPET_CHARS = 20_000  # text ts_headline reads for a snippet
DF_CAP = 5_000  # document frequencies are counted up to this (the GIN index), for the idf
OR_CAP_SHARE = 0.25  # of scan_cap, for an OR fallback's matches
STATS_TTL = 60.0  # seconds the planner's common-lexeme statistics are reused
_common_cache: dict[str, tuple[float, dict[str, float], float]] = {}


def scan_cap(weights: RankWeights, mode: str) -> int | None:
    """Matches ranked per query (None: all): ``weights.scan_cap``, a share of it
    (:data:`OR_CAP_SHARE`) for the OR fallback, whose matches are many and weak."""
    if weights.scan_cap <= 0:
        return None
    if mode == "or":
        return max(weights.candidates, int(weights.scan_cap * OR_CAP_SHARE))
    return weights.scan_cap


class PostgresSearch:
    """One search's queries, sent through ``run(sql, params)`` (the store's retrying execute)."""

    def __init__(self, run: Callable[..., Any], url: str) -> None:
        self._run = run
        self.url = url  # the statistics cache's key

    def _term_queries(self, terms: list[Term]) -> list[str]:
        """Each term as tsquery text (words are letters and digits only: quoted, never syntax)."""
        parts, params = [], []
        terms = [Term(tuple(fold_accents(w) for w in t.words), t.prefix) for t in terms]
        for t in terms:
            if t.prefix:
                parts.append(f"to_tsquery('{CFG}', %s)::text")
                params.append(t.words[0] + ":*")
            else:
                parts.append(f"websearch_to_tsquery('{CFG}', %s)::text")
                params.append('"' + " ".join(t.words) + '"')
        row = self._run("SELECT " + ", ".join(parts), params).fetchone()
        return list(dict.fromkeys(q for q in row if q))

    def _common_terms(self) -> tuple[dict[str, float], float]:
        """The planner's most common lexemes of ``tsv`` with the share of pages holding each,
        and the smallest such share (statistics of the last ANALYZE; autovacuum keeps them
        fresh). Cached per URL for :data:`STATS_TTL` seconds."""
        now = time.monotonic()
        cached = _common_cache.get(self.url)
        if cached is not None and now - cached[0] < STATS_TTL:
            return cached[1], cached[2]
        row = self._run(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
            " WHERE tablename = 'focuscrawl_pages' AND attname = 'tsv'"
            " AND schemaname = current_schema()"
        ).fetchone()
        common: dict[str, float] = {}
        floor = 1.0
        if row is not None and row[0] and row[1]:
            lexemes, freqs = row[0], row[1]
            common = dict(zip(lexemes, freqs[: len(lexemes)], strict=True))
            floor = min(common.values()) if common else 1.0
        _common_cache[self.url] = (now, common, floor)
        return common, floor

    def _idf(self, queries: list[str]) -> list[float]:
        """BM25's idf of each term query. A lexeme among the planner's most common ones has its
        document frequency from there; any other term is rarer than the rarest of those, and is
        counted through the GIN index up to that many pages (at most :data:`DF_CAP`)."""
        common, floor = self._common_terms()
        n_row = self._run(_PAGE_COUNT).fetchone()
        n = max(float(n_row[0]), 1.0)
        known: dict[int, float] = {}
        for i, q in enumerate(queries):
            lexeme = _single_lexeme(q)
            if lexeme is not None and lexeme in common:
                known[i] = common[lexeme] * n
        rest = [i for i in range(len(queries)) if i not in known]
        if rest:
            cap = int(min(DF_CAP, max(100.0, floor * n + 1)))
            counts = ", ".join(
                "(SELECT count(*) FROM (SELECT 1 FROM focuscrawl_pages WHERE tsv @@ %s::tsquery"
                " LIMIT %s) s)"
                for _ in rest
            )
            params: list[Any] = []
            for i in rest:
                params += [queries[i], cap]
            row = self._run("SELECT " + counts, params).fetchone()
            known.update(zip(rest, (float(x) for x in row), strict=True))
        return [_bm25_idf(n, known[i]) for i in range(len(queries))]

    def candidates(
        self, queries: list[str], idf: list[float], mode: str, k: int, weights: RankWeights
    ) -> list[tuple[int, float, tuple[Any, ...]]]:
        """Top ``k`` (id, -rank, (url, title, relevance, authority, fetched_at)), best first.

        Ranks are computed for at most :func:`scan_cap` matches plus ``k`` whose title
        matches (as on SQLite: bounded latency for unspecific queries)."""
        joiner = " & " if mode == "and" else " | "
        match = joiner.join(f"({q})" for q in queries)
        body_weight = 1.0 / max(weights.title, 1.0)
        w = f"'{{{body_weight:.6f}, 0, 0, 1}}'::float4[]"
        rank = " + ".join(f"%s::float8 * ts_rank({w}, p.tsv, %s::tsquery, 1)" for _ in queries)
        rank_params: list[Any] = []
        for q, f in zip(queries, idf, strict=True):
            rank_params += [f, q]
        cap = scan_cap(weights, mode)
        columns = f"id, -({rank}) AS b, url, title, relevance, authority, fetched_at"
        # ranks computed in the capped scans (ts_rank only for the rows kept), no second read
        sql = (
            f"(SELECT {columns} FROM focuscrawl_pages p WHERE tsv @@ %s::tsquery LIMIT %s)"
            f" UNION (SELECT {columns} FROM focuscrawl_pages p WHERE title_tsv @@ %s::tsquery"
            " LIMIT %s) ORDER BY b, id LIMIT %s"
        )
        params = [*rank_params, match, cap, *rank_params, match, k, k]
        rows = self._run(sql, params).fetchall()
        return [(r[0], float(r[1]), tuple(r[2:])) for r in rows]

    def search(
        self, query: str, limit: int = 10, weights: RankWeights | None = None
    ) -> SearchResult:
        """Ranked hits for a user query; :class:`~focuscrawl.index.query.QueryError` on bad input."""
        weights = weights or RankWeights()
        limit = max(1, min(int(limit), 1000))
        terms = parse_query(query)
        queries = self._term_queries(terms)
        mode = "and"
        if not queries:
            return SearchResult(query, [], mode)
        idf = self._idf(queries)
        k = max(weights.candidates, limit)
        cands = self.candidates(queries, idf, mode, k, weights)
        if not cands and len(queries) > 1:
            mode = "or"
            cands = self.candidates(queries, idf, mode, k, weights)
        if not cands:
            return SearchResult(query, [], mode)
        scores = combine(
            [c[1] for c in cands], [c[2][2] for c in cands], [c[2][3] for c in cands], weights
        )
        ranked = sorted(zip(scores, cands, strict=True), key=lambda sc: -sc[0])[:limit]
        joiner = " & " if mode == "and" else " | "
        snippets = self._snippets(joiner.join(f"({q})" for q in queries), [c[0] for _, c in ranked])
        hits = [
            Hit(url, title, snippets.get(pid, ""), rel, auth, b, score, fetched)
            for score, (pid, b, (url, title, rel, auth, fetched)) in ranked
        ]
        return SearchResult(query, hits, mode)

    def _snippets(self, match: str, ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        options = (
            f"StartSel={HIT_START}, StopSel={HIT_END}, MaxWords={SNIPPET_TOKENS}, MinWords=8,"
            ' ShortWord=0, MaxFragments=1, FragmentDelimiter=" … "'
        )
        rows = self._run(
            f"SELECT id, ts_headline('{CFG}', left(body, %s), %s::tsquery, %s)"
            " FROM focuscrawl_pages WHERE id = ANY(%s)",
            (SNIPPET_CHARS, match, options, ids),
        ).fetchall()
        return {r[0]: r[1] for r in rows}


#: the number of pages as the planner estimates it (rows per page of the last ANALYZE times
#: the table's pages now: no scan), counted only while the table was never analyzed
_PAGE_COUNT = (
    "SELECT CASE WHEN c.relpages > 0 AND c.reltuples > 0"
    " THEN (c.reltuples / c.relpages * (pg_relation_size(c.oid)"
    " / current_setting('block_size')::int))::bigint"
    " ELSE (SELECT count(*) FROM focuscrawl_pages) END"
    " FROM pg_class c WHERE c.oid = 'focuscrawl_pages'::regclass"
)

_LEXEME = re.compile(r"^'((?:[^']|'')*)'$")


def _single_lexeme(query: str) -> str | None:
    """The lexeme of a one-word tsquery text (``'eagl'``), else None."""
    m = _LEXEME.match(query)
    return m.group(1).replace("''", "'") if m else None


def fold_accents(text: str) -> str:
    """``text`` without combining accents (``café`` → ``cafe``); ASCII text as it is (fast)."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    # each distinct mark removed at C speed (a page has few), not a test per character
    for mark in [ch for ch in set(decomposed) if unicodedata.combining(ch)]:
        decomposed = decomposed.replace(mark, "")
    return decomposed


def _bm25_idf(n: float, df: float) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
