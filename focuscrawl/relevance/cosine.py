"""TF-IDF cosine of a text to a topic profile: the baseline relevance model.

The profile is the topic's keywords (weighted up) plus the text of its seed and example pages.
Inverse document frequencies are learned from the pages the crawl has seen, so common words of
the crawled web fade as the crawl goes on.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np

from focuscrawl.blocks.model import Page
from focuscrawl.relevance.fastcosine import PageTerms, TermTable, _hash_strings
from focuscrawl.relevance.fastcosine import page_terms as _fast_page_terms
from focuscrawl.text import _WORD, STOPWORDS, tokens

KEYWORD_WEIGHT = 5.0  # a keyword counts as this many occurrences in the profile
TITLE_WEIGHT = 3  # title words count as this many occurrences in a page vector


def token_counts(text: str) -> Counter[str]:
    """``Counter(tokens(text))``, with the stop-word and length tests run once per distinct
    word instead of once per occurrence (the regex and the counting run in C)."""
    counts = Counter(_WORD.findall(text.lower()))
    for w in [w for w in counts if len(w) < 2 or w in STOPWORDS]:
        del counts[w]
    return counts


class DocumentFrequencies:
    """Document frequencies; IDF values are cached and refreshed as the collection grows
    by ``refresh`` (a fraction), so scoring a text costs a dict lookup per term.

    Terms live in a table that only grows (term → index, with the 64-bit hashes of
    :mod:`focuscrawl.relevance.fastcosine` for the numpy page path); document frequencies and
    cached IDF values are arrays by index, shared by the pure and the numpy path. A term's
    cached IDF is computed from its document frequency when it is first looked up after a
    refresh, whichever path looks it up."""

    def __init__(self, refresh: float = 0.05) -> None:
        self.n_docs = 0
        self.refresh = refresh
        self._cache: dict[str, float] = {}  # the pure path's view of the cached IDF values
        self._cache_docs = 0
        self.index: dict[str, int] = {}
        self.terms: list[str] = []
        self._df = np.zeros(1024, np.int64)
        self._idf = np.full(1024, np.nan)  # cached IDF by index, NaN when not cached
        self.table = TermTable()
        self._hashed = 0  # terms[:_hashed] are in the table
        for term in sorted(STOPWORDS):  # indices below len(STOPWORDS): the numpy path drops them
            self._intern(term)

    def __setstate__(self, state: dict) -> None:
        if "df" in state:  # pickled before the term table: rebuild it
            df: Counter[str] = state.pop("df")
            cache = state.pop("_cache", {})
            self.__init__(state.get("refresh", 0.05))  # type: ignore[misc]
            self.__dict__.update(state)
            for term, count in df.items():
                self._df[self._intern(term)] = count
            for term, value in cache.items():
                self._idf[self._intern(term)] = value
                self._cache[term] = value
        else:
            self.__dict__.update(state)

    @property
    def df(self) -> Counter[str]:
        """Document frequency of every term seen (a copy)."""
        df = self._df
        return Counter({t: int(df[i]) for t, i in self.index.items() if df[i]})

    def _grow(self, n: int) -> None:
        if n > len(self._df):
            size = max(n, 2 * len(self._df))
            df = np.zeros(size, np.int64)
            df[: len(self._df)] = self._df
            idf = np.full(size, np.nan)
            idf[: len(self._idf)] = self._idf
            self._df, self._idf = df, idf

    def _intern(self, term: str) -> int:
        i = self.index.get(term)
        if i is None:
            i = self.index[term] = len(self.terms)
            self.terms.append(term)
            self._grow(i + 1)
        return i

    def _counted(self) -> None:
        self.n_docs += 1
        if self.n_docs > self._cache_docs * (1 + self.refresh) + 1:
            self._cache.clear()
            self._idf[: len(self.terms)] = np.nan
            self._cache_docs = self.n_docs

    def add(self, terms: Iterable[str]) -> None:
        intern = self._intern
        idx = [intern(t) for t in set(terms)]
        if idx:
            self._df[idx] += 1
        self._counted()

    def add_indices(self, index: np.ndarray) -> None:
        """``add`` of distinct terms given by index (the numpy path's observe)."""
        self._df[index] += 1
        self._counted()

    @property
    def version(self) -> int:
        """Changes whenever cached IDF values may change."""
        return self._cache_docs

    def idf(self, term: str) -> float:
        value = self._cache.get(term)
        if value is None:
            i = self._intern(term)
            value = float(self._idf[i])
            if value != value:
                n = self._cache_docs
                value = math.log((n + 1) / (min(int(self._df[i]), n) + 1)) + 1.0
                self._idf[i] = value
            self._cache[term] = value
        return value

    def idf_of(self, index: np.ndarray) -> np.ndarray:
        """The cached IDF of the terms ``index`` (caching the missing ones)."""
        values = self._idf.take(index)
        missing = np.isnan(values)
        if missing.any():
            n = self._cache_docs
            i = index[missing]
            v = np.log((n + 1) / (np.minimum(self._df.take(i), n) + 1.0)) + 1.0
            self._idf[i] = v
            values[missing] = v
        return values

    def intern_hashes(
        self, hashes: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: str
    ) -> np.ndarray | None:
        """The index of each distinct term hash, adding new terms (``text[start:end]``);
        ``None`` when the hash table cannot be trusted (the pure path must run)."""
        table = self.table
        if self._hashed < len(self.terms):  # terms that came by the pure path
            added = self.terms[self._hashed :]
            h = _hash_strings(added)
            if len(np.unique(h)) != len(h) or (table.find(h) >= 0).any():
                table.usable = False
            else:
                table.add(h, np.arange(self._hashed, len(self.terms), dtype=np.int64))
            self._hashed = len(self.terms)
        if not table.usable:
            return None
        index = table.find(hashes)
        new = np.flatnonzero(index < 0)
        if len(new):
            base = len(self.terms)
            words = [
                text[s:e] for s, e in zip(starts[new].tolist(), ends[new].tolist(), strict=True)
            ]
            for k, w in enumerate(words):
                self.index[w] = base + k
            self.terms.extend(words)
            self._grow(len(self.terms))
            ids = np.arange(base, len(self.terms), dtype=np.int64)
            table.add(hashes[new], ids)
            index[new] = ids
            self._hashed = len(self.terms)
        return index


class CosineModel:
    """TF-IDF cosine to the topic profile. ``threshold`` decides ``relevant``."""

    def __init__(
        self,
        keywords: Iterable[str] = (),
        texts: Iterable[str] = (),
        threshold: float = 0.25,
        learn_idf: bool = True,
    ) -> None:
        self.threshold = threshold
        self.learn_idf = learn_idf
        self.dfs = DocumentFrequencies()
        profile: Counter[str] = Counter()
        for text in texts:
            terms = tokens(text)
            self.dfs.add(terms)
            total = len(terms) or 1
            for term, count in Counter(terms).items():
                profile[term] += 10.0 * count / total  # each seed text counts for 10 occurrences
        for keyword in keywords:
            for term in tokens(keyword):
                profile[term] += KEYWORD_WEIGHT
        self.profile: dict[str, float] = dict(profile)
        #: score pages with :mod:`focuscrawl.relevance.fastcosine` (False: the pure path)
        self.fast = True
        self._profile_cache: tuple | None = None
        self._text_cache: dict[str, float] = {}
        # the main-text counts of the last page scored: observe() of that page reuses them
        self._last: tuple[Page, Counter[str]] | None = None
        self._fast_last: tuple[Page, DocumentFrequencies, PageTerms | None] | None = None

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("fast", True)
        self._profile_cache = None
        self._fast_last = None

    def add_text(self, text: str) -> None:
        """Add a seed or example page's text to the profile (each text weighs 10 occurrences)."""
        terms = tokens(text)
        if not terms:
            return
        self.dfs.add(terms)
        total = len(terms)
        for term, count in Counter(terms).items():
            self.profile[term] = self.profile.get(term, 0.0) + 10.0 * count / total
        self._profile_cache = None

    def _weighted(self) -> tuple:
        # the profile's IDF weights change only as the document count grows: cache per count
        dfs = self.dfs
        cache = self._profile_cache
        if cache is None or cache[0] != dfs.version or cache[1] is not dfs:
            vec = {t: w * dfs.idf(t) for t, w in self.profile.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            dense = np.zeros(len(dfs.terms))  # by term index, for the numpy path
            if vec:
                idx = np.fromiter((dfs.index[t] for t in vec), np.int64, len(vec))
                dense[idx] = np.fromiter(vec.values(), float, len(vec))
            cache = self._profile_cache = (dfs.version, dfs, vec, norm, dense)
            self._text_cache.clear()
        return cache

    def _weighted_profile(self) -> tuple[dict[str, float], float]:
        cache = self._weighted()
        return cache[2], cache[3]

    def score_counts(self, counts: Counter[str]) -> float:
        if not counts or not self.profile:
            return 0.0
        profile, pnorm = self._weighted_profile()
        dfs = self.dfs
        cache = dfs._cache
        get_profile = profile.get
        log = math.log
        dot = 0.0
        sq = 0.0
        for term, count in counts.items():
            idf = cache.get(term)
            if idf is None:
                idf = dfs.idf(term)
            w = idf if count == 1 else (1.0 + log(count)) * idf
            sq += w * w
            p = get_profile(term)
            if p is not None:
                dot += w * p
        return dot / (math.sqrt(sq) * pnorm) if sq else 0.0

    def score_text(self, text: str) -> float:
        # anchors and contexts repeat across pages (navigation, templates): cache per IDF version
        self._weighted_profile()
        value = self._text_cache.get(text)
        if value is None:
            if len(self._text_cache) > 200_000:
                self._text_cache.clear()
            value = self._text_cache[text] = self.score_counts(Counter(tokens(text)))
        return value

    def _main_counts(self, page: Page) -> Counter[str]:
        last = self._last
        if last is not None and last[0] is page:
            return last[1]
        counts = token_counts(page.main_text or page.text)
        self._last = (page, counts)
        return counts

    def page_counts(self, page: Page) -> Counter[str]:
        counts = self._main_counts(page).copy()
        for term in tokens(page.title):
            counts[term] += TITLE_WEIGHT
        return counts

    def _page_terms(self, page: Page) -> PageTerms | None:
        """The numpy path's terms of ``page`` (``None``: take the pure path)."""
        last = self._fast_last
        dfs = self.dfs
        if last is not None and last[0] is page and last[1] is dfs:
            return last[2]
        terms = None
        if self.fast:
            terms = _fast_page_terms(
                (page.main_text or page.text).lower(),
                page.title.lower(),
                TITLE_WEIGHT,
                dfs.intern_hashes,
            )
        self._fast_last = (page, dfs, terms)
        return terms

    def score_page(self, page: Page) -> float:
        terms = self._page_terms(page)
        if terms is None:
            return self.score_page_counts(page)
        if not len(terms.index) or not self.profile:
            return 0.0
        _, _, _, pnorm, dense = self._weighted()
        index = terms.index
        counts = terms.counts
        w = self.dfs.idf_of(index)
        many = counts != 1.0
        if many.any():
            w[many] *= 1.0 + np.log(counts[many])
        sq = float(w @ w)
        inside = index < len(dense)
        dot = float(w[inside] @ dense.take(index[inside]))
        return dot / (math.sqrt(sq) * pnorm) if sq else 0.0

    def score_page_counts(self, page: Page) -> float:
        """``score_page`` by the pure path (token counts and dicts)."""
        return self.score_counts(self.page_counts(page))

    def main_terms(self, page: Page) -> list[str]:
        """The distinct terms of the page's main text."""
        terms = self._page_terms(page)
        if terms is None:
            return list(self._main_counts(page))
        all_terms = self.dfs.terms
        return [all_terms[i] for i in terms.index[terms.main].tolist()]

    def top_terms(self, page: Page, n: int) -> list[str] | None:
        """The page's ``n`` most frequent terms (title words ×``TITLE_WEIGHT``; ties to the rarer
        term in the crawl's documents), from the terms
        ``score_page`` already found (no second tokenisation); ``None`` on the pure path."""
        terms = self._page_terms(page)
        if terms is None:
            return None
        index, counts = terms.index, terms.counts
        if len(index) > n:
            # ties (most of a page's terms occur once or twice) go to the terms in fewer
            # documents of the crawl: the page's own words, not the common ones
            index = index[np.lexsort((self.dfs._df[index], -counts))[:n]]
        all_terms = self.dfs.terms
        return [all_terms[i] for i in index.tolist()]

    def observe(self, page: Page, relevance: float) -> None:
        if self.learn_idf:
            terms = self._page_terms(page)
            if terms is None:
                self.dfs.add(self._main_counts(page))
            else:
                self.dfs.add_indices(terms.index[terms.main])
