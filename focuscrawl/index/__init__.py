"""Incremental inverted index of the harvest (SQLite FTS5) and its query side (no Scrapy)."""

from __future__ import annotations

from focuscrawl.index.query import QueryError, parse_query
from focuscrawl.index.rank import BM25_ONLY, RankWeights, combine
from focuscrawl.index.store import Hit, PageIndex, SearchResult

__all__ = [
    "BM25_ONLY",
    "Hit",
    "PageIndex",
    "QueryError",
    "RankWeights",
    "SearchResult",
    "combine",
    "parse_query",
]
