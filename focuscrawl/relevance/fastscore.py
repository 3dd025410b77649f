"""The crawl's one-page-at-a-time scoring path: the same features in numpy (no Scrapy).

:func:`focuscrawl.relevance.features.page_terms` tokenises a page word by word in Python
(``split``, ``strip``, three tests and a dict update per occurrence: ~3,000 words on a 20 KB
page, ~1.7 ms of CPU). A linear model only needs, per vocabulary term, its weighted count; a
word that is not a vocabulary term counts for nothing. So:

* the page's texts are joined per field weight (:func:`field_groups`: title, headings, text /
  link / noise blocks, anchors — one string per distinct weight), lower-cased by ``str.lower``
  and turned into an array of code points;
* a table lookup classifies every code point as white space (``str.split``'s definition),
  ``WORD_EDGES`` (punctuation, digits, quotes) or other; the words are the white-space runs with
  ``WORD_EDGES`` characters removed from both ends, as ``fast_tokens`` does;
* each word is hashed (a 64-bit polynomial hash from prefix sums, wrapping in ``uint64``,
  mixed with the length) and looked up among the sorted hashes of the vocabulary terms.
  ``fast_tokens``' other rules (stop words, one-letter words, a first character that is not a
  letter) only ever drop words that cannot be vocabulary terms, so they need no test here;
* sublinear TF, IDF, L2 norm and the dot product with the weight vector follow in numpy.

The result equals ``LinearTermScorer.decision(page_terms(page))`` up to the order of
floating-point sums (the tests check 1e-9), unless a page word that is not a vocabulary term
has the same 64-bit hash as one that is (about 60,000 × 3,000 / 2⁶⁴ ≈ 10⁻¹¹ per page).
A vocabulary whose own hashes collide, or a page that cannot be encoded as code points,
is scored by the slow path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from focuscrawl.blocks.model import Page
from focuscrawl.text import WORD_EDGES

#: Pages longer than this many code points (after joining) go to the slow path.
MAX_CODEPOINTS = 1 << 20  # the hash powers cost 16 bytes per code point of the longest page

_LIMIT = 0x3001  # every white-space and WORD_EDGES code point is below this
_CLASS = np.zeros(_LIMIT + 1, np.uint8)  # 0 word character, 1 white space, 2 stripped at ends
_CLASS[[c for c in range(_LIMIT) if chr(c).isspace()]] = 1
_CLASS[[ord(c) for c in WORD_EDGES]] = 2

_BASE = 1_000_003
_P = np.uint64(_BASE)
_P_INV = np.uint64(pow(_BASE, -1, 1 << 64))
_MIX = np.uint64(0x9E3779B97F4A7C15)


class _Powers:
    """``P**i`` and ``P**-i`` modulo 2⁶⁴ for i < n, grown on demand."""

    def __init__(self) -> None:
        self.pow = np.ones(1, np.uint64)
        self.inv = np.ones(1, np.uint64)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.pow) < n:
            m = max(n, 2 * len(self.pow), 1 << 16)
            one = np.ones(1, np.uint64)
            pw = np.concatenate([one, np.cumprod(np.full(m - 1, _P, np.uint64))])
            inv = np.concatenate([one, np.cumprod(np.full(m - 1, _P_INV, np.uint64))])
            self.pow, self.inv = pw, inv  # published together: readers see one generation
        return self.pow, self.inv


_POWERS = _Powers()


def codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def word_spans(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the words of code points ``a``: white-space runs without the
    ``WORD_EDGES`` characters at their ends (runs of ``WORD_EDGES`` only are no word)."""
    cls = _CLASS.take(np.minimum(a, _LIMIT))
    space = cls == 1
    run_start = ~space
    run_start[1:] &= space[:-1]
    run_id = np.cumsum(run_start)
    keep = np.flatnonzero(cls == 0)
    if not len(keep):
        return keep, keep
    rid = run_id.take(keep)
    change = np.flatnonzero(rid[1:] != rid[:-1])
    starts = np.concatenate([keep[:1], keep.take(change + 1)])
    ends = np.concatenate([keep.take(change), keep[-1:]]) + 1
    return starts, ends


def span_hashes(a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """64-bit hash of each span ``a[start:end]`` (independent of where the span is)."""
    pw, inv = _POWERS.get(len(a) + 1)
    prefix = np.zeros(len(a) + 1, np.uint64)
    np.cumsum(a.astype(np.uint64) * pw[: len(a)], out=prefix[1:])
    h = (prefix.take(ends) - prefix.take(starts)) * inv.take(starts)
    h ^= (ends - starts).astype(np.uint64) * _MIX
    return h


def field_groups(page: Page, weights: Mapping[str, float]) -> list[tuple[float, str]]:
    """The page's texts joined per field weight, weighed as ``page_terms`` weighs them."""
    groups: dict[float, list[str]] = {}

    def add(text: str, weight: float) -> None:
        if weight > 0 and text:
            groups.setdefault(weight, []).append(text)

    add(page.title, weights.get("title", 0.0))
    heading = weights.get("heading", 0.0)
    for h in page.headings:
        add(h, heading)
    for block in page.blocks:
        add(block.text, weights.get(block.kind, 0.0))
    anchor = weights.get("anchor", 0.0)
    if anchor > 0:
        for link in page.links:
            if not link.noise:
                add(link.anchor, anchor)
    return [(w, "\n".join(texts)) for w, texts in groups.items()]


class FastLinearScorer:
    """``w · tfidf(page) + b`` of a partitioned page (see the module docstring).

    :meth:`decision_page` returns ``None`` when the page must take the slow path."""

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        idf: np.ndarray,
        weights: np.ndarray,
        intercept: float,
        field_weights: Mapping[str, float],
    ) -> None:
        self.idf = np.asarray(idf, dtype=float)
        self.widf = np.asarray(weights, dtype=float) * self.idf
        self.intercept = float(intercept)
        self.field_weights = dict(field_weights)
        terms = list(vocabulary)
        self.hashes = np.zeros(0, np.uint64)
        self.columns = np.zeros(0, np.int64)
        #: False when two vocabulary terms share a hash: every page takes the slow path
        self.usable = False
        if terms:
            cols = np.fromiter((vocabulary[t] for t in terms), np.int64, len(terms))
            lengths = np.fromiter(map(len, terms), np.int64, len(terms))
            starts = np.zeros(len(terms), np.int64)
            np.cumsum(lengths[:-1] + 1, out=starts[1:])
            h = span_hashes(codepoints("\n".join(terms)), starts, starts + lengths)
            order = np.argsort(h)
            self.hashes = h[order]
            self.columns = cols[order]
            self.usable = bool(np.all(self.hashes[1:] != self.hashes[:-1]))

    def decision_page(self, page: Page) -> float | None:
        """The linear decision value; ``-inf`` when no vocabulary term occurs; ``None`` when
        the page needs the slow path."""
        if not self.usable:
            return None
        groups = field_groups(page, self.field_weights)
        if not groups:
            return -math.inf
        texts = [t.lower() for _, t in groups]
        try:
            a = codepoints("\n".join(texts))
        except UnicodeEncodeError:
            return None
        if len(a) > MAX_CODEPOINTS:
            return None
        starts, ends = word_spans(a)
        if not len(starts):
            return -math.inf
        h = span_hashes(a, starts, ends)
        group_ends = np.cumsum([len(t) + 1 for t in texts])
        weight = np.array([w for w, _ in groups]).take(
            np.searchsorted(group_ends, starts, side="right")
        )
        distinct, where = np.unique(h, return_inverse=True)
        tf = np.bincount(where.ravel(), weights=weight, minlength=len(distinct))
        pos = np.searchsorted(self.hashes, distinct)
        pos[pos == len(self.hashes)] = 0
        found = self.hashes.take(pos) == distinct
        if not found.any():
            return -math.inf
        cols = self.columns.take(pos[found])
        tf = tf[found]
        big = tf >= 1.0
        tf[big] = 1.0 + np.log(tf[big])
        x = tf * self.idf.take(cols)
        sq = float(x @ x)
        if not sq:
            return -math.inf
        return float(tf @ self.widf.take(cols)) / math.sqrt(sq) + self.intercept
