"""The focused crawl's decisions, without Scrapy: judge a fetched page, choose and score its
links. The topical spider is an adapter over this class, and the offline simulator
(:mod:`focuscrawl.evaluation.simulate`) runs the very same decisions over a corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.frontier.linkmemory import LinkMemory
from focuscrawl.frontier.scoring import LinkScorer, ParentState, SharkParams, vote_bonus
from focuscrawl.frontier.urls import TrapLimits, clean_url
from focuscrawl.relevance.base import PageScorer


@dataclass(slots=True)
class Judgement:
    relevance: float
    relevant: bool


class CrawlPolicy:
    def __init__(
        self,
        model: PageScorer,
        strategy: str,
        params: SharkParams | None = None,
        limits: TrapLimits | None = None,
        auto_threshold: float = 0.0,
    ) -> None:
        """``auto_threshold`` > 0: the relevance threshold becomes that fraction of the mean
        relevance of the seed pages, once they are judged (cosine scores of on-topic pages vary
        from topic to topic far more than their ratio to the seeds' scores does)."""
        self.model = model
        self.auto_threshold = auto_threshold
        self._seed_scores: list[float] = []
        self.scorer = LinkScorer(
            strategy, model.score_text, model.threshold, params or SharkParams()
        )
        self.limits = limits or TrapLimits()
        self.memory = LinkMemory()
        # in-link votes: the summed (scaled) relevance of the relevant pages that link to a URL
        self._votes: dict[int, float] = {}
        self.skipped: dict[str, int] = {}  # URL rejections by reason
        self._clean_cache: dict[str, tuple[str, str | None]] = {}

    @property
    def strategy(self) -> str:
        return self.scorer.strategy

    def judge(self, page: Page, state: dict[str, Any]) -> Judgement:
        """Relevance of a fetched page; seed and example pages first teach the topic model."""
        if state.get("seed") or state.get("ex"):
            add_text = getattr(self.model, "add_text", None)
            if add_text is not None:
                add_text(f"{page.title}\n{page.main_text}")
        relevance = self.model.score_page(page)
        self.model.observe(page, relevance)
        if state.get("seed"):
            self._seed_scores.append(relevance)
            mean = sum(self._seed_scores) / len(self._seed_scores)
            self.scorer.reference = mean if mean > 0 else None
            if self.auto_threshold > 0:
                self.set_threshold(self.auto_threshold * mean)
                return Judgement(relevance, True)
        return Judgement(relevance, relevance >= self.model.threshold)

    def set_threshold(self, threshold: float) -> None:
        self.model.threshold = threshold
        self.scorer.threshold = threshold

    def links(
        self, page: Page, url: str, state: dict[str, Any], judgement: Judgement
    ) -> Iterator[tuple[str, float, dict[str, Any]]]:
        """``(url, score, child_state)`` for each link worth sending to the frontier: new links
        and links found again with a better score (priority upgrades)."""
        parent = ParentState(
            url=url,
            depth=int(state.get("d", 0)),
            relevance=judgement.relevance,
            relevant=judgement.relevant,
            inherited=float(state.get("inh", 0.0)),
            budget=int(state.get("tb", 0)),
        )
        memory, limits, skipped = self.memory, self.limits, self.skipped
        clean_cache = self._clean_cache
        p = self.scorer.p
        vote_weight = p.votes if self.scorer.strategy.startswith("shark") else 0.0
        vote = self.scorer.page_score(judgement.relevance) if judgement.relevant else 0.0
        votes, voted = self._votes, set()
        if vote_weight and len(votes) > self.memory.max_urls:
            votes.clear()
        for link, score, child in self.scorer.score(page, parent):
            if link.nofollow:
                continue
            cleaned = clean_cache.get(link.url)
            if cleaned is None:
                # navigation and template links repeat on every page: clean each URL once
                if len(clean_cache) > 100_000:
                    clean_cache.clear()
                cleaned = clean_cache[link.url] = clean_url(link.url, limits)
            target, reason = cleaned
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            if vote_weight and vote and not (self.scorer.blocks and link.noise):
                key = hash(target)
                total = votes.get(key, 0.0)
                if key not in voted:  # one vote per linking page
                    voted.add(key)
                    total = votes[key] = total + vote
                bonus = vote_bonus(total, p)
                score += bonus * child.get("nb", 1.0) if p.vote_gated else bonus
            if not memory.improves(target, score):
                continue  # queued or fetched already with a score at least as good
            child.pop("nb", None)
            child["par"] = url
            child["score"] = score
            yield target, score, child
