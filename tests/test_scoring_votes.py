"""In-link votes: the saturating vote total, and the spider reading the Shark-Search settings."""

from __future__ import annotations

import math

import pytest
from scrapy.utils.test import get_crawler

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.state import RequestState
from focuscrawl.spiders.topical import TopicalSpider
from focuscrawl.strategy.scoring import SharkParams, vote_bonus
from tests.test_strategy_policy import KeywordModel, judge, make_policy


def make_page(url: str, text: str, links: list[tuple[str, str]]) -> Page:
    out = [Link(target, anchor, "", 0, "text", 1.0) for target, anchor in links]
    return Page(url, "t", [Block(0, "text", text, 1.0, links=out)], out)


def test_vote_bonus_is_the_sum_without_saturation_and_capped_with_it() -> None:
    plain = SharkParams(votes=0.5, vote_saturation=0.0)
    assert vote_bonus(3.0, plain) == pytest.approx(1.5)
    capped = SharkParams(votes=0.5, vote_saturation=0.5)
    assert vote_bonus(0.1, capped) == pytest.approx(0.5 * 0.5 * -math.expm1(-0.2))
    assert vote_bonus(0.1, capped) < vote_bonus(0.2, capped) < vote_bonus(50.0, capped)
    assert vote_bonus(50.0, capped) <= 0.25 + 1e-12  # at most votes x saturation


def hub_and_anchor_scores(saturation: float, gated: bool = False) -> tuple[float, float]:
    """A hub linked (off-topic anchor) from ten relevant pages against an on-topic anchor
    linked from one: their best scores after the ten pages."""
    params = SharkParams(votes=0.5, vote_saturation=saturation, vote_gated=gated)
    policy = make_policy(KeywordModel(), "sharksearch-blocks", params)
    best: dict[str, float] = {}
    for i in range(10):
        links = [("http://b.test/hub", "country")]
        if i == 9:
            links.append(("http://b.test/owl", "bird"))
        page = make_page(f"http://a.test/{i}", "bird bird bird", links)
        judgement = judge(policy, page, RequestState(1))
        for url, score, _ in policy.links(page, page.url, RequestState(1), judgement):
            best[url] = max(best.get(url, 0.0), score)
    return best["http://b.test/hub"], best["http://b.test/owl"]


def test_saturated_votes_let_an_on_topic_anchor_beat_a_hub_of_many_in_links() -> None:
    hub, owl = hub_and_anchor_scores(saturation=0.0)
    assert hub > owl  # the plain sum: ten votes outrank the on-topic anchor
    hub, owl = hub_and_anchor_scores(saturation=0.5)
    assert owl > hub


def test_gated_votes_do_not_lift_a_link_whose_anchor_is_off_topic() -> None:
    policy = make_policy(
        KeywordModel(), "sharksearch-blocks", SharkParams(votes=5.0, vote_gated=True)
    )
    plain = make_policy(KeywordModel(), "sharksearch-blocks", SharkParams(votes=0.0))
    hub = Link("http://b.test/hub", "country", "", 1, "link", 1.0)
    blocks = [Block(0, "text", "bird bird", 1.0), Block(1, "link", "country", 1.0, links=[hub])]
    page = Page("http://a.test/1", "t", blocks, [hub])
    scores = [
        {
            url: score
            for url, score, _ in p.links(
                page, page.url, RequestState(1), judge(p, page, RequestState(1))
            )
        }
        for p in (policy, plain)
    ]
    assert scores[0] == scores[1]  # anchor and block off topic: the vote adds nothing
    hub, owl = hub_and_anchor_scores(saturation=0.0, gated=True)
    assert owl > hub


def test_spider_reads_the_shark_search_settings() -> None:
    settings = {
        "FOCUSCRAWL_SHARK_VOTES": 0.7,
        "FOCUSCRAWL_SHARK_VOTE_SATURATION": 0.9,
        "FOCUSCRAWL_SHARK_VOTE_GATED": True,
        "FOCUSCRAWL_SHARK_BLOCK_MIX": 0.2,
        "FOCUSCRAWL_SHARK_NOISE_FLOOR": 0.6,
        "FOCUSCRAWL_SHARK_NORMALIZE": False,
        "FOCUSCRAWL_TUNNEL_PENALTY": 0.4,
    }
    crawler = get_crawler(TopicalSpider, {**DEFAULTS, **settings})
    spider = TopicalSpider.from_crawler(crawler, topic="birds", seeds="http://a.test/")
    spider.setup(spider)
    p = spider.policy.scorer.p
    assert (p.votes, p.vote_saturation, p.vote_gated, p.block_mix) == (0.7, 0.9, True, 0.2)
    assert (p.noise_floor, p.normalize, p.tunnel_penalty) == (0.6, False, 0.4)


def test_shark_params_defaults_match_the_settings() -> None:
    p = SharkParams()
    assert p.votes == DEFAULTS["FOCUSCRAWL_SHARK_VOTES"]
    assert p.vote_saturation == DEFAULTS["FOCUSCRAWL_SHARK_VOTE_SATURATION"]
    assert p.vote_gated == DEFAULTS["FOCUSCRAWL_SHARK_VOTE_GATED"]
    assert p.block_mix == DEFAULTS["FOCUSCRAWL_SHARK_BLOCK_MIX"]
    assert p.noise_floor == DEFAULTS["FOCUSCRAWL_SHARK_NOISE_FLOOR"]
    assert p.normalize == DEFAULTS["FOCUSCRAWL_SHARK_NORMALIZE"]
    assert p.tunnel_penalty == DEFAULTS["FOCUSCRAWL_TUNNEL_PENALTY"]
    assert (p.delta, p.beta, p.gamma) == (
        DEFAULTS["FOCUSCRAWL_SHARK_DELTA"],
        DEFAULTS["FOCUSCRAWL_SHARK_BETA"],
        DEFAULTS["FOCUSCRAWL_SHARK_GAMMA"],
    )
