"""Field-weighted TF-IDF features of a partitioned page (no Scrapy).

A page becomes a bag of terms where each occurrence counts by *where* it occurs (title,
headings, anchor text, text / link / noise blocks; weights in :mod:`focuscrawl.relevance.rules`).
The same function feeds training (a sparse matrix through :class:`FieldTfidfVectorizer`) and the
crawl's one-page-at-a-time scoring (:class:`LinearTermScorer`), so both see identical features.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from focuscrawl.blocks.model import Page
from focuscrawl.relevance import rules
from focuscrawl.text import fast_tokens

TermCounts = dict[str, float]


def _add(counts: TermCounts, text: str, weight: float) -> None:
    if weight <= 0 or not text:
        return
    for w in fast_tokens(text):
        counts[w] = counts.get(w, 0.0) + weight


def page_terms(page: Page, weights: Mapping[str, float] = rules.FIELD_WEIGHTS) -> TermCounts:
    """Weighted term counts of a page: each occurrence counts by its field's weight."""
    counts: TermCounts = {}
    _add(counts, page.title, weights.get("title", 0.0))
    for heading in page.headings:
        _add(counts, heading, weights.get("heading", 0.0))
    for block in page.blocks:
        _add(counts, block.text, weights.get(block.kind, 0.0))
    anchor = weights.get("anchor", 0.0)
    if anchor > 0:
        for link in page.links:
            if not link.noise:
                _add(counts, link.anchor, anchor)
    return counts


def text_terms(text: str, weights: Mapping[str, float] = rules.FIELD_WEIGHTS) -> TermCounts:
    """Term counts of a short text (anchor, link context, block), weighted as body text."""
    counts: TermCounts = {}
    _add(counts, text, weights.get("text", 1.0))
    return counts


def sublinear(count: float) -> float:
    """1 + log(count) for counts ≥ 1, linear below (field weights make counts fractional)."""
    return 1.0 + math.log(count) if count >= 1.0 else count


class FieldTfidfVectorizer(TransformerMixin, BaseEstimator):
    """Term-count dicts → L2-normalised sublinear TF-IDF rows (a scikit-learn transformer).

    ``vocabulary_`` maps term → column and ``idf_`` holds the smooth IDF per column, as in
    scikit-learn's ``TfidfVectorizer``; both are saved in a model file.
    """

    def __init__(self, min_df: int = rules.MIN_DF, max_features: int = rules.MAX_FEATURES):
        self.min_df = min_df
        self.max_features = max_features

    def fit(self, docs: Sequence[TermCounts], y: object = None) -> FieldTfidfVectorizer:
        df: dict[str, int] = {}
        for doc in docs:
            for term in doc:
                df[term] = df.get(term, 0) + 1
        min_df = self.min_df if len(docs) >= 2 * self.min_df else 1
        kept = [t for t, n in df.items() if n >= min_df]
        kept.sort(key=lambda t: (-df[t], t))
        kept = sorted(kept[: self.max_features])
        self.vocabulary_ = {t: i for i, t in enumerate(kept)}
        n = len(docs)
        self.idf_ = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in kept])
        return self

    def transform(self, docs: Iterable[TermCounts]) -> sp.csr_matrix:
        vocab = self.vocabulary_
        idf = self.idf_
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for doc in docs:
            cols = []
            vals = []
            for term, count in doc.items():
                j = vocab.get(term)
                if j is not None and count > 0:
                    cols.append(j)
                    vals.append(sublinear(count) * idf[j])
            norm = math.sqrt(sum(v * v for v in vals)) or 1.0
            indices.extend(cols)
            data.extend(v / norm for v in vals)
            indptr.append(len(indices))
        shape = (len(indptr) - 1, len(vocab))
        return sp.csr_matrix(
            (np.array(data), np.array(indices, dtype=np.int64), indptr), shape=shape
        )


class LinearTermScorer:
    """``w · tfidf(doc) + b`` for one document at a time, without building a matrix.

    ``weights`` and ``idf`` are indexed like ``vocabulary``; terms outside the vocabulary are
    ignored, exactly as :meth:`FieldTfidfVectorizer.transform` ignores them. A document with
    no vocabulary term at all gets ``-inf`` (scores 0) rather than the bare intercept.
    """

    def __init__(
        self, vocabulary: Mapping[str, int], idf: np.ndarray, weights: np.ndarray, intercept: float
    ) -> None:
        self.intercept = float(intercept)
        # term → column, and per column idf and weight * idf as Python lists (list indexing is
        # fast; a second term → tuple dict would double what a retrained model costs to unpickle)
        self._columns = vocabulary
        self._idf: list[float] = np.asarray(idf, dtype=float).tolist()
        self._widf: list[float] = (np.asarray(weights, dtype=float) * idf).tolist()

    def decision(self, doc: TermCounts) -> float:
        columns = self._columns
        idf = self._idf
        widf = self._widf
        dot = 0.0
        sq = 0.0
        for term, count in doc.items():
            j = columns.get(term)
            if j is None or count <= 0:
                continue
            tf = 1.0 + math.log(count) if count >= 1.0 else count
            x = tf * idf[j]
            sq += x * x
            dot += tf * widf[j]
        if not sq:
            return -math.inf  # no known term (empty, foreign-language page): no evidence
        return dot / math.sqrt(sq) + self.intercept
