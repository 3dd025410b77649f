"""A topic profile that adapts during a crawl without drifting (no Scrapy).

:class:`AdaptiveCosineModel` is the TF-IDF cosine model whose profile learns new terms from the
pages it judges relevant with high confidence (self-adaptation). The drift guard (on by default):

* a page feeds the profile only when it also contains ``min_original_terms`` of the original
  topic terms (new terms must co-occur with the topic);
* the original terms keep at least ``original_floor`` of their starting weight;
* the added terms together hold at most ``max_new_share`` of the profile's weight, and at most
  ``max_new_terms`` terms enter, each seen on at least ``min_pages`` confident pages.

New terms are ranked by how many confident pages hold them times their IDF over every page the
crawl has seen, so words common everywhere do not enter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

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
        guard: bool = True,
        min_original_terms: int = rules.ADAPT_MIN_ORIGINAL_TERMS,
        original_floor: float = rules.ADAPT_ORIGINAL_FLOOR,
        max_new_share: float = rules.ADAPT_MAX_NEW_SHARE,
        max_new_terms: int = rules.ADAPT_MAX_NEW_TERMS,
        min_pages: int = rules.ADAPT_MIN_PAGES,
        update_every: int = 10,
    ) -> None:
        super().__init__(keywords, texts, threshold=threshold)
        self.original: dict[str, float] = dict(self.profile)
        self.min_relevance = min_relevance
        self.guard = guard
        self.min_original_terms = min_original_terms
        self.original_floor = original_floor
        self.max_new_share = max_new_share if guard else 1e9
        self.max_new_terms = max_new_terms
        self.min_pages = min_pages
        self.update_every = update_every
        self.confident_pages = 0
        self.candidate_pages: Counter[str] = Counter()
        self.added: dict[str, float] = {}

    def add_text(self, text: str) -> None:
        """A seed or example page's text: part of the original topic, not an adaptation."""
        super().add_text(text)
        self.original = {t: w for t, w in self.profile.items() if t not in self.added}

    def observe(self, page: Page, relevance: float) -> None:
        super().observe(page, relevance)
        if relevance >= self.min_relevance:  # observe_terms ignores the page otherwise
            self.observe_terms(self.main_terms(page), relevance)  # distinct terms suffice

    def observe_terms(self, terms: list[str], relevance: float) -> None:
        """Feed one page's tokens (the page has been scored ``relevance``)."""
        if relevance < self.min_relevance or not terms:
            return
        distinct = set(terms)
        if self.guard and len(distinct & self.original.keys()) < self.min_original_terms:
            return
        self.confident_pages += 1
        self.candidate_pages.update(distinct - self.original.keys())
        if self.confident_pages % self.update_every == 0:
            self.refresh()

    def refresh(self) -> None:
        """Recompute the added terms from the confident pages seen so far."""
        n = self.confident_pages or 1
        ranked = sorted(
            (
                (c / n * self.dfs.idf(t), t)
                for t, c in self.candidate_pages.items()
                if c >= self.min_pages
            ),
            reverse=True,
        )[: self.max_new_terms]
        original_mass = sum(self.original.values()) or 1.0
        mean_original = original_mass / max(1, len(self.original))
        added = {t: score / (ranked[0][0] or 1.0) * mean_original for score, t in ranked}
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
        profile.update(added)
        self.profile = profile
        self._profile_cache = None

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
