"""How a search result's score is made: BM25 combined with topical relevance and link authority.

FTS5's ``bm25()`` is unbounded (and negative: lower is better). Among the candidates of one query
we turn it into ``b = bm25 / best_bm25`` in [0, 1] (1 for the best text match), then

    score = (1 - relevance - authority) * b + relevance * page_relevance + authority * page_authority

with the page's topical relevance in [0, 1] (the crawl's relevance model) and its authority in
[0, 1] (PageRank over the crawled link graph, divided by its largest value). Because only the
top ``candidates`` BM25 matches are re-ranked, a relevant page with no text match never appears.
The default weights come from the Wikispeedia nDCG@10 study (docs/index.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RankWeights:
    relevance: float = 0.5  # weight of the page's topical relevance (Wikispeedia study)
    authority: float = 0.0  # weight of the page's link authority
    title: float = 3.0  # BM25 column weight of the title against the body (1.0)
    candidates: int = 100  # BM25 matches re-ranked per query
    scan_cap: int = 2000  # BM25 over at most this many recent matches + title matches; 0: all

    def __post_init__(self) -> None:
        if not (
            self.relevance >= 0.0
            and self.authority >= 0.0
            and self.relevance + self.authority <= 1.0
        ):
            raise ValueError("relevance and authority weights must be >= 0 and sum to at most 1")
        if self.candidates < 1:
            raise ValueError("candidates must be at least 1")


BM25_ONLY = RankWeights(relevance=0.0, authority=0.0)


def combine(
    bm25: Sequence[float],
    relevance: Sequence[float],
    authority: Sequence[float],
    weights: RankWeights,
) -> list[float]:
    """Combined scores for candidates given FTS5 ``bm25()`` values (negative, lower is better)."""
    if not bm25:
        return []
    best = max(-b for b in bm25)
    best = best if best > 0 else 1.0
    w_text = 1.0 - weights.relevance - weights.authority
    return [
        w_text * (-b / best)
        + weights.relevance * min(max(r, 0.0), 1.0)
        + weights.authority * min(max(a, 0.0), 1.0)
        for b, r, a in zip(bm25, relevance, authority, strict=True)
    ]
