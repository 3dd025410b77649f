"""A topic profile that adapts during a crawl without drifting (no Scrapy).

:class:`AdaptiveCosineModel` is the TF-IDF cosine model whose profile learns from the pages it
judges relevant with confidence (self-adaptation): at least ``min_ratio`` × its (calibrated)
threshold and ``min_relevance``. The drift guard (on by default):

* a page feeds the profile only when it also contains ``min_original_terms`` of the original
  topic terms (new terms must co-occur with the topic);
* the original terms keep at least ``original_floor`` of their starting weight;
* the added weight holds at most ``max_new_share`` of the profile's weight, over at most
  ``max_new_terms`` terms, each seen on at least ``min_pages`` confident pages.

Terms are ranked by how many confident pages hold them times their IDF over every page the
crawl has seen, so words common everywhere do not enter; the best weighs ``new_scale`` × the
mean original term, the others in proportion, and with ``boost_original`` original terms gain
weight the same way (a word rare in the seeds but frequent on the topic's pages). Defaults and
their measurement: :mod:`focuscrawl.relevance.rules`, docs/relevance.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from focuscrawl.blocks.model import Page
from focuscrawl.relevance import rules
from focuscrawl.relevance.cosine import CosineModel


class AdaptiveCosineModel(CosineModel):
    def __init__(
        self,
        keywords: Iterable[str] = (),
        texts: Iterable[str] = (),
        threshold: float = 0.25,
        *,
        min_relevance: float = rules.ADAPT_MIN_RELEVANCE,
        min_ratio: float = rules.ADAPT_MIN_RATIO,
        guard: bool = True,
        min_original_terms: int = rules.ADAPT_MIN_ORIGINAL_TERMS,
        original_floor: float = rules.ADAPT_ORIGINAL_FLOOR,
        max_new_share: float = rules.ADAPT_MAX_NEW_SHARE,
        max_new_terms: int = rules.ADAPT_MAX_NEW_TERMS,
        min_pages: int = rules.ADAPT_MIN_PAGES,
        update_every: int = rules.ADAPT_UPDATE_EVERY,
        new_scale: float = rules.ADAPT_NEW_SCALE,
        boost_original: bool = rules.ADAPT_BOOST_ORIGINAL,
        adapt_judge: bool = rules.ADAPT_JUDGE,
    ) -> None:
        super().__init__(keywords, texts, threshold=threshold)
        self.original: dict[str, float] = dict(self.profile)
        self.min_relevance = min_relevance
        self.min_ratio = min_ratio
        self.guard = guard
        self.min_original_terms = min_original_terms
        self.original_floor = original_floor
        self.max_new_share = max_new_share if guard else 1e9
        self.max_new_terms = max_new_terms
        self.min_pages = min_pages
        self.update_every = update_every
        self.new_scale = new_scale
        self.boost_original = boost_original
        self.adapt_judge = adapt_judge
        self._original_cache: tuple | None = None  # the original profile's weighted cache
        self._judging = False
        self.confident_pages = 0
        # confident pages per candidate term, by the term index of ``self.dfs`` (one store:
        # the vectorised ranking reads it as is)
        self._counts = np.zeros(0)
        self.added: dict[str, float] = {}

    def add_text(self, text: str) -> None:
        """A seed or example page's text: part of the original topic, not an adaptation."""
        before = dict(self.profile)
        super().add_text(text)
        for term, weight in self.profile.items():
            gain = weight - before.get(term, 0.0)
            if gain:
                self.original[term] = self.original.get(term, 0.0) + gain
        self._original_cache = None

    def score_page(self, page: Page) -> float:
        """With ``adapt_judge`` off, pages are judged against the original profile (the added
        terms then only move the scores of anchors, link contexts and blocks: the link order)."""
        return self._judged_by_original(super().score_page, page)

    def score_page_counts(self, page: Page) -> float:
        return self._judged_by_original(super().score_page_counts, page)

    def _judged_by_original(self, score: Callable[[Page], float], page: Page) -> float:
        if self.adapt_judge or not self.added or self._judging:
            return score(page)
        profile, cache = self.profile, self._profile_cache
        self.profile, self._profile_cache = self.original, self._original_cache
        self._judging = True
        try:
            return score(page)
        finally:
            self._original_cache = self._profile_cache
            self.profile, self._profile_cache = profile, cache
            self._judging = False

    def confident(self, relevance: float) -> bool:
        """Whether a page scored ``relevance`` may feed the profile: at least
        ``min_relevance`` and at least ``min_ratio`` × the current threshold (page cosines of a
        topic sit far below 1 and vary by topic; the crawl calibrates the threshold to them)."""
        return relevance >= self.min_relevance and relevance >= self.min_ratio * self.threshold

    def observe(self, page: Page, relevance: float) -> None:
        super().observe(page, relevance)
        if self.confident(relevance):  # observe_terms ignores the page otherwise
            self.observe_terms(self.main_terms(page), relevance)  # distinct terms suffice

    def observe_terms(self, terms: list[str], relevance: float) -> None:
        """Feed one page's tokens (the page has been scored ``relevance``)."""
        if not self.confident(relevance) or not terms:
            return
        distinct = set(terms)
        if self.guard and len(distinct & self.original.keys()) < self.min_original_terms:
            return
        self.confident_pages += 1
        new = distinct if self.boost_original else distinct - self.original.keys()
        intern = self.dfs._intern
        index = np.fromiter((intern(t) for t in new), np.int64, len(new))
        counts = self._counts
        if len(index) and index.max() >= len(counts):
            size = max(1024, len(self.dfs.terms), 2 * len(counts))
            counts = self._counts = np.concatenate([counts, np.zeros(size - len(counts))])
        counts[index] += 1
        if self.confident_pages % self.update_every == 0:
            self.refresh()

    def refresh(self) -> None:
        """Recompute the added terms from the confident pages seen so far."""
        ranked = self._ranked()
        original_mass = sum(self.original.values()) or 1.0
        mean_original = original_mass / max(1, len(self.original))
        top = ranked[0][0] if ranked else 1.0
        added = {t: score / (top or 1.0) * mean_original * self.new_scale for score, t in ranked}
        cap = (
            self.max_new_share / (1 - self.max_new_share) * original_mass
            if self.max_new_share < 1
            else float("inf")
        )
        total = sum(added.values())
        if total > cap:
            added = {t: w * cap / total for t, w in added.items()}
        self.added = added
        floor = self.original_floor
        profile = {t: max(w, floor * w) for t, w in self.original.items()}
        for t, w in added.items():  # a boosted original term: its weight plus the boost
            profile[t] = profile.get(t, 0.0) + w
        self.profile = profile
        self._profile_cache = None

    @property
    def candidate_pages(self) -> dict[str, int]:
        """How many confident pages each candidate term was seen on (a view of the counts)."""
        terms, counts = self.dfs.terms, self._counts
        return {terms[i]: int(counts[i]) for i in np.flatnonzero(counts)}

    def _ranked(self) -> list[tuple[float, str]]:
        """The best ``max_new_terms`` candidates seen on ``min_pages`` confident pages, as
        ``(confident-page share × IDF, term)``, best first (ties: by term, descending).
        Vectorised: a long crawl has tens of thousands of such terms, and a refresh runs on the
        crawl thread (a Python sort over them took ~50 ms a refresh on British_History)."""
        counts = self._counts
        index = np.flatnonzero(counts >= max(1, self.min_pages))
        k = min(self.max_new_terms, len(index))
        if k <= 0:
            return []
        scores = counts[index] / (self.confident_pages or 1) * self.dfs.idf_of(index)
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        terms = self.dfs.terms
        best = sorted(
            ((float(scores[j]), terms[index[j]]) for j in np.flatnonzero(scores >= cut)),
            reverse=True,
        )
        return best[:k]

    def new_share(self) -> float:
        """Share of the profile's weight held by added terms."""
        total = sum(self.profile.values()) or 1.0
        return sum(self.added.values()) / total


def profile_similarity(
    a: Mapping[str, float], b: Mapping[str, float], idf: CosineModel | None = None
) -> float:
    """Cosine between two term-weight profiles (IDF-weighted by ``idf``'s document counts)."""
    w = (lambda t: idf.dfs.idf(t)) if idf is not None else (lambda t: 1.0)  # noqa: E731
    dot = sum(v * b[t] * w(t) ** 2 for t, v in a.items() if t in b)
    na = sum((v * w(t)) ** 2 for t, v in a.items()) ** 0.5
    nb = sum((v * w(t)) ** 2 for t, v in b.items()) ** 0.5
    return dot / (na * nb) if na and nb else 0.0
