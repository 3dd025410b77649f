"""The cosine model's page path in numpy (no Scrapy): tokens as code-point spans, terms as hashes.

:class:`focuscrawl.relevance.cosine.CosineModel` tokenises with the regex ``_WORD`` of
:mod:`focuscrawl.text` (``[^\\W\\d_](?:[\\w'’-]*\\w)?`` on the lower-cased text), drops stop
words and one-letter words, and looks every distinct term up in dicts (~2 ms on a 20 KB page).
Here, with :mod:`focuscrawl.relevance.fastscore`'s code points and span hashes:

* every code point gets a class: *separator* (not ``\\w`` and not ``'’-``), *letter*
  (``[^\\W\\d_]``), *word* (``\\w`` but a digit or ``_``) or *joiner* (``'’-``). A maximal run of
  non-separators holds exactly one regex match when it holds a letter: from its first letter to
  its last letter-or-word character (the greedy ``[\\w'’-]*`` reaches the end of the run and
  backtracks to the last ``\\w``). So the tokens are those spans, found with array operations;
* tokens of one code point are dropped, and stop words by their hashes;
* each distinct token hash is looked up in the :class:`TermTable` of the model's
  :class:`~focuscrawl.relevance.cosine.DocumentFrequencies` — the term → index table that only
  grows, with per-index document frequencies and cached IDF values shared with the pure path
  (a term's first occurrence gets its string sliced from the text once, to join the table).

A page word that is not yet a term but has the hash of one (probability ~V·W/2⁶⁴) would count as
that term; two terms of the table with one hash switch the table to the pure path for good.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from focuscrawl.relevance.fastscore import MAX_CODEPOINTS, codepoints, span_hashes
from focuscrawl.text import STOPWORDS

SEPARATOR, LETTER, WORD, JOINER = 0, 1, 2, 3

_BMP = 0x10000
_tables: dict[int, np.ndarray] = {}
_lock = threading.Lock()


def classes(size: int = 0x110000) -> np.ndarray:
    """The class of every code point below ``size`` (``_BMP`` or all of Unicode), built from
    the regex itself on first use: ~20 ms for the BMP, ~0.3 s for all of Unicode (only pages
    with a character outside the BMP need that one)."""
    table = _tables.get(size)
    if table is None:
        with _lock:
            table = _tables.get(size)
            if table is None:
                every = "".join(map(chr, range(size)))
                table = np.zeros(size, np.uint8)
                for m in re.finditer(r"\w+", every):
                    table[m.start() : m.end()] = WORD
                for m in re.finditer(r"[^\W\d_]+", every):
                    table[m.start() : m.end()] = LETTER
                for c in "'’-":
                    table[ord(c)] = JOINER
                _tables[size] = table
    return table


def token_spans(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the ``_WORD`` matches in code points ``a``."""
    n = len(a)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cls = classes(_BMP if a.max() < _BMP else 0x110000).take(a)
    inside = cls != SEPARATOR
    edge = np.empty(n + 1, bool)  # a run starts or ends at i
    edge[0] = inside[0]
    edge[n] = inside[n - 1]
    np.not_equal(inside[1:], inside[:-1], out=edge[1:n])
    bounds = np.flatnonzero(edge)
    run_start, run_end = bounds[0::2], bounds[1::2]
    # most runs start with a letter and end with a letter or word character: only the
    # others are searched, among the letters (start) and letter-or-word characters (end)
    starts = run_start
    odd = np.flatnonzero(cls.take(run_start) != LETTER)
    if len(odd):
        letters = np.flatnonzero(cls == LETTER)
        pos = np.searchsorted(letters, run_start.take(odd))
        found = pos < len(letters)
        found[found] = letters.take(pos[found]) < run_end.take(odd[found])
        starts = run_start.copy()
        starts[odd[found]] = letters.take(pos[found])
        if not found.all():  # runs without a letter hold no token
            keep = np.ones(len(run_start), bool)
            keep[odd[~found]] = False
            starts, run_end = starts[keep], run_end[keep]
    ends = run_end
    odd = np.flatnonzero(cls.take(run_end - 1) == JOINER)
    if len(odd):
        wordish = np.flatnonzero((cls == LETTER) | (cls == WORD))
        ends = run_end.copy()
        ends[odd] = wordish.take(np.searchsorted(wordish, run_end.take(odd)) - 1) + 1
    return starts, ends


def _hash_strings(terms: list[str]) -> np.ndarray:
    if not terms:
        return np.zeros(0, np.uint64)
    lengths = np.fromiter(map(len, terms), np.int64, len(terms))
    starts = np.zeros(len(terms), np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    return span_hashes(codepoints("\n".join(terms)), starts, starts + lengths)


class TermTable:
    """Hash → term index, sorted arrays in two levels (a large main level and a small recent
    one merged into it now and then), so adding a page's new terms costs little."""

    MERGE = 4096

    def __init__(self) -> None:
        self.main_h = np.zeros(0, np.uint64)
        self.main_i = np.zeros(0, np.int64)
        self.new_h = np.zeros(0, np.uint64)
        self.new_i = np.zeros(0, np.int64)
        #: False once two different terms share a hash: the pure path only from then on
        self.usable = True

    def __len__(self) -> int:
        return len(self.main_h) + len(self.new_h)

    @staticmethod
    def _find(h: np.ndarray, i: np.ndarray, q: np.ndarray) -> np.ndarray:
        if not len(h):
            return np.full(len(q), -1, np.int64)
        pos = np.searchsorted(h, q)
        pos[pos == len(h)] = 0
        return np.where(h.take(pos) == q, i.take(pos), -1)

    def find(self, q: np.ndarray) -> np.ndarray:
        """The index of each hash of ``q``, -1 when absent."""
        out = self._find(self.main_h, self.main_i, q)
        if len(self.new_h):
            miss = out < 0
            if miss.any():
                out[miss] = self._find(self.new_h, self.new_i, q[miss])
        return out

    def add(self, hashes: np.ndarray, indices: np.ndarray) -> None:
        """Add hashes that are not in the table (distinct among themselves)."""
        if not len(hashes):
            return
        h = np.concatenate([self.new_h, hashes])
        i = np.concatenate([self.new_i, indices])
        order = np.argsort(h, kind="stable")
        self.new_h, self.new_i = h[order], i[order]
        if len(self.new_h) > max(self.MERGE, len(self.main_h) // 8):
            h = np.concatenate([self.main_h, self.new_h])
            i = np.concatenate([self.main_i, self.new_i])
            order = np.argsort(h, kind="stable")
            self.main_h, self.main_i = h[order], i[order]
            self.new_h = np.zeros(0, np.uint64)
            self.new_i = np.zeros(0, np.int64)


class PageTerms:
    """One page's distinct terms: term indices, weighted counts (title words ×
    ``title_weight``), and which of them occur in the main text."""

    __slots__ = ("counts", "index", "main")

    def __init__(self, index: np.ndarray, counts: np.ndarray, main: np.ndarray) -> None:
        self.index = index
        self.counts = counts
        self.main = main


def page_terms(main: str, title: str, title_weight: int, intern) -> PageTerms | None:  # noqa: ANN001
    """Tokenise ``main`` and ``title`` (already lower-cased) and map the distinct terms to
    indices with ``intern(hashes, starts, ends, text)`` (which adds new terms and returns
    ``None`` when the pure path must run); stop words are the indices below
    ``len(STOPWORDS)`` (the table holds them first) and are dropped here."""
    text = main + "\n" + title
    try:
        a = codepoints(text)
    except UnicodeEncodeError:  # pragma: no cover - surrogatepass encodes every str
        return None
    if len(a) > MAX_CODEPOINTS:
        return None
    starts, ends = token_spans(a)
    keep = ends - starts > 1
    if not keep.all():
        starts, ends = starts[keep], ends[keep]
    if not len(starts):
        return _EMPTY
    h = span_hashes(a, starts, ends)
    order = h.argsort()
    sh = h.take(order)
    first = np.empty(len(sh), bool)
    first[0] = True
    np.not_equal(sh[1:], sh[:-1], out=first[1:])
    distinct = sh[first]
    group = np.cumsum(first) - 1
    where = np.empty(len(h), np.int64)
    where[order] = group
    some = order[first]  # an occurrence of each distinct term
    index = intern(distinct, starts.take(some), ends.take(some), text)
    if index is None:
        return None
    k = int(np.searchsorted(starts, len(main)))  # the title's words come last
    counts = np.bincount(where, minlength=len(distinct)).astype(float)
    if k < len(where):
        counts += (title_weight - 1) * np.bincount(where[k:], minlength=len(distinct))
        in_main = np.bincount(where[:k], minlength=len(distinct)) > 0
    else:
        in_main = np.ones(len(distinct), bool)
    words = index >= len(STOPWORDS)
    if not words.all():
        index, counts, in_main = index[words], counts[words], in_main[words]
    return PageTerms(index, counts, in_main)


_EMPTY = PageTerms(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool))
