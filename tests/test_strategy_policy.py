from __future__ import annotations

from typing import Any

import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import Judgement, PageJudge
from focuscrawl.strategy.policy import CrawlPolicy
from focuscrawl.strategy.scoring import SharkParams


class KeywordModel:
    """Relevance = share of the words that are "bird"."""

    def __init__(self, threshold: float = 0.3) -> None:
        self.threshold = threshold

    def score_text(self, text: str) -> float:
        words = text.lower().split()
        return sum(w == "bird" for w in words) / len(words) if words else 0.0

    def score_page(self, page: Page) -> float:
        return self.score_text(page.main_text)

    def observe(self, page: Page, relevance: float) -> None:
        pass


def make_page(url: str, text: str, targets: list[str]) -> Page:
    links = [Link(t, "wing", "", 0, "text", 1.0) for t in targets]
    return Page(url, "t", [Block(0, "text", text, 1.0, links=links)], links)


def make_policy(
    model: Any, strategy: str, params: SharkParams | None = None, **judge: Any
) -> CrawlPolicy:
    """A policy over its own page judge (``judge``: the judge's auto threshold, calibration)."""
    return CrawlPolicy(PageJudge(model, **judge), strategy, params)


def judge(policy: CrawlPolicy, page: Page, state: RequestState) -> Judgement:
    """As the topical spider's ``judge_page``: the page judge, then what the policy learns."""
    judgement = policy.page_judge.judge(page, seed=state.seed, example=state.example)
    policy.learn(page, state, judgement)
    return judgement


def crawl_links(policy: CrawlPolicy, page: Page, state: RequestState) -> dict[str, float]:
    judgement = judge(policy, page, state)
    return {url: score for url, score, _ in policy.links(page, page.url, state, judgement)}


def test_seed_pages_set_the_threshold_and_the_relevance_scale() -> None:
    policy = make_policy(KeywordModel(), "sharksearch", auto_threshold=0.5)
    crawl_links(
        policy, make_page("http://a.test/s", "bird bird song nest", []), RequestState(seed=True)
    )
    assert policy.page_judge.model.threshold == pytest.approx(0.25)
    assert policy.scorer.reference == pytest.approx(0.5)
    # a page as relevant as the seeds passes on the full inherited share
    assert policy.scorer.page_score(0.5) == pytest.approx(1.0)
    assert policy.scorer.page_score(0.25) == pytest.approx(0.5)


def test_in_link_votes_lift_urls_linked_from_several_relevant_pages() -> None:
    def run(votes: float) -> tuple[float, float]:
        policy = make_policy(KeywordModel(), "sharksearch-blocks", SharkParams(votes=votes))
        state = RequestState(1)
        first = crawl_links(
            policy, make_page("http://a.test/1", "bird bird", ["http://b/x"]), state
        )
        again = crawl_links(
            policy, make_page("http://a.test/2", "bird bird", ["http://b/x", "http://b/y"]), state
        )
        return first["http://b/x"], again.get("http://b/x", first["http://b/x"])

    once, twice = run(0.5)
    assert twice > once  # a second relevant in-link upgrades the URL
    plain_once, plain_twice = run(0.0)
    assert plain_once == pytest.approx(plain_twice)
    assert once > plain_once


def test_irrelevant_pages_cast_no_votes() -> None:
    policy = make_policy(KeywordModel(), "sharksearch-blocks", SharkParams(votes=0.5))
    plain = make_policy(KeywordModel(), "sharksearch-blocks", SharkParams(votes=0.0))
    page = make_page("http://a.test/1", "fish fish", ["http://b/x"])
    assert crawl_links(policy, page, RequestState(1)) == crawl_links(plain, page, RequestState(1))
