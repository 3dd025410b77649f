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

_classes: np.ndarray | None = None
_lock = threading.Lock()


def classes() -> np.ndarray:
    """The class of every code point (built once, ~0.3 s, on first use)."""
    global _classes
    if _classes is None:
        with _lock:
            if _classes is None:
                every = "".join(map(chr, range(0x110000)))
                table = np.zeros(0x110000, np.uint8)
                for m in re.finditer(r"\w+", every):
                    table[m.start() : m.end()] = WORD
                for m in re.finditer(r"[^\W\d_]+", every):
                    table[m.start() : m.end()] = LETTER
                for c in "'’-":
                    table[ord(c)] = JOINER
                _classes = table
    return _classes


def token_spans(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the ``_WORD`` matches in code points ``a``."""
    cls = classes().take(a)
    sep = cls == SEPARATOR
    run_start = ~sep
    run_start[1:] &= sep[:-1]
    run_id = np.cumsum(run_start)
    letters = np.flatnonzero(cls == LETTER)
    if not len(letters):
        return letters, letters
    wordish = np.flatnonzero((cls == LETTER) | (cls == WORD))
    lrid = run_id.take(letters)
    first = np.concatenate([[True], lrid[1:] != lrid[:-1]])
    starts = letters[first]
    runs = lrid[first]  # the runs holding a letter, ascending
    wrid = run_id.take(wordish)
    last = np.concatenate([wrid[1:] != wrid[:-1], [True]])
    ends_all = wordish[last]
    pos = np.searchsorted(wrid[last], runs)
    ends = ends_all.take(pos) + 1
    return starts, ends


def _hash_strings(terms: list[str]) -> np.ndarray:
    if not terms:
        return np.zeros(0, np.uint64)
    lengths = np.fromiter(map(len, terms), np.int64, len(terms))
    starts = np.zeros(len(terms), np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    return span_hashes(codepoints("\n".join(terms)), starts, starts + lengths)


_STOP_HASHES = np.sort(_hash_strings(sorted(STOPWORDS)))


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


def page_terms(main: str, title: str, title_weight: float, intern) -> PageTerms | None:  # noqa: ANN001
    """Tokenise ``main`` and ``title`` (already lower-cased) and map the distinct terms to
    indices with ``intern(hashes, first_starts, first_ends, text)`` (which adds new terms);
    ``None`` when the text cannot take this path."""
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
        return PageTerms(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool))
    h = span_hashes(a, starts, ends)
    pos = np.searchsorted(_STOP_HASHES, h)
    pos[pos == len(_STOP_HASHES)] = 0
    keep = _STOP_HASHES.take(pos) != h
    if not keep.all():
        starts, ends, h = starts[keep], ends[keep], h[keep]
        if not len(starts):
            return PageTerms(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool))
    in_main = starts < len(main)
    weight = np.where(in_main, 1.0, float(title_weight))
    distinct, first, where = np.unique(h, return_index=True, return_inverse=True)
    where = where.ravel()
    counts = np.bincount(where, weights=weight, minlength=len(distinct))
    main_mask = np.bincount(where, weights=in_main, minlength=len(distinct)) > 0
    index = intern(distinct, starts.take(first), ends.take(first), text)
    if index is None:
        return None
    return PageTerms(index, counts, main_mask)
