"""TF-IDF cosine of a text to a topic profile: the baseline relevance model.

The profile is the topic's keywords (weighted up) plus the text of its seed and example pages.
Inverse document frequencies are learned from the pages the crawl has seen, so common words of
the crawled web fade as the crawl goes on.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from focuscrawl.blocks.model import Page
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
    by ``refresh`` (a fraction), so scoring a text costs a dict lookup per term."""

    def __init__(self, refresh: float = 0.05) -> None:
        self.n_docs = 0
        self.df: Counter[str] = Counter()
        self.refresh = refresh
        self._cache: dict[str, float] = {}
        self._cache_docs = 0

    def add(self, terms: Iterable[str]) -> None:
        self.n_docs += 1
        self.df.update(set(terms))
        if self.n_docs > self._cache_docs * (1 + self.refresh) + 1:
            self._cache.clear()
            self._cache_docs = self.n_docs

    @property
    def version(self) -> int:
        """Changes whenever cached IDF values may change."""
        return self._cache_docs

    def idf(self, term: str) -> float:
        value = self._cache.get(term)
        if value is None:
            n = self._cache_docs
            value = math.log((n + 1) / (min(self.df.get(term, 0), n) + 1)) + 1.0
            self._cache[term] = value
        return value


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
        self._profile_cache: tuple[int, dict[str, float], float] | None = None
        self._text_cache: dict[str, float] = {}
        # the main-text counts of the last page scored: observe() of that page reuses them
        self._last: tuple[Page, Counter[str]] | None = None

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

    def _weighted_profile(self) -> tuple[dict[str, float], float]:
        # the profile's IDF weights change only as the document count grows: cache per count
        if self._profile_cache is None or self._profile_cache[0] != self.dfs.version:
            vec = {t: w * self.dfs.idf(t) for t, w in self.profile.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            self._profile_cache = (self.dfs.version, vec, norm)
            self._text_cache.clear()
        return self._profile_cache[1], self._profile_cache[2]

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

    def score_page(self, page: Page) -> float:
        return self.score_counts(self.page_counts(page))

    def observe(self, page: Page, relevance: float) -> None:
        if self.learn_idf:
            self.dfs.add(self._main_counts(page))
