"""A worker that joins a running crawl judges pages as the worker that fetched the seeds: the
seed calibration (topic-model text, seed-relevance scale, auto threshold) goes through Redis."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from focuscrawl.blocks.partition import partition
from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.state import RequestState
from focuscrawl.items import PageItem
from focuscrawl.spiders.topical_redis import TopicalRedisSpider

SEED = """<html><head><title>Birds of the wetland</title></head><body><article>
<h1>Birds of the wetland</h1><p>Herons, egrets and warblers nest in the reeds. Birds migrate
in spring; their feathers, wings and songs change with the season. Owls hunt at night.</p>
<p>Bird watchers count nests, eggs and fledglings of every species of birds each year.</p>
</article></body></html>"""
PAGE = SEED.replace("wetland", "forest").replace("Herons, egrets", "Finches, thrushes")


def worker(redis_url: str, **kwargs: Any) -> TopicalRedisSpider:
    settings = {**DEFAULTS, "REDIS_URL": redis_url, "FOCUSCRAWL_REDIS_PREFIX": "fctest:%(spider)s"}
    crawler = get_crawler(TopicalRedisSpider, settings)
    spider = TopicalRedisSpider.from_crawler(crawler, **kwargs)
    spider.setup(spider)
    return spider


def test_joining_worker_replays_the_seed_calibration(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    first = worker(redis_url, topic="birds", seeds="http://a.test/seed")
    joiner = worker(redis_url)  # no topic: it comes from Redis
    assert joiner.topic.name == "birds"
    before = joiner.page_judge.model.threshold
    state = {"d": 0, "seed": 1, "score": 1.0}
    response = HtmlResponse(
        "http://a.test/seed", body=SEED.encode(), encoding="utf-8",
        request=Request("http://a.test/seed", meta={"focuscrawl": state}),
    )  # fmt: skip
    items = [x for x in first.parse(response) if isinstance(x, PageItem)]
    assert len(items) == 1 and items[0].relevant
    assert redis_client.llen("fctest:topical_redis:calib") == 1
    page = partition(PAGE, "http://a.test/page")
    theirs = first.judge_page(page, RequestState(1))
    ours = joiner.judge_page(page, RequestState(1))
    assert joiner.page_judge.model.threshold == first.page_judge.model.threshold != before
    assert (
        joiner.page_judge.reference
        == first.page_judge.reference
        == pytest.approx(items[0].relevance, abs=1e-6)
    )
    # the joiner judged the seed page as the first worker did: same model, same judgement
    # (to rounding: the two interned the page's terms in another order, so their dot products
    # add the same products in another order)
    assert ours.relevant == theirs.relevant
    assert ours.relevance == pytest.approx(theirs.relevance, rel=1e-12)
    assert redis_client.llen("fctest:topical_redis:calib") == 1  # only seeds and examples
    for spider in (first, joiner):
        spider.spider_closed_redis(spider)


def test_seed_sharing_goes_through_the_spiders_judge_page(
    redis_url: str, redis_client: Any
) -> None:
    """The Redis spider shares seed pages by extending ``judge_page`` (the spider's seam):
    nothing is patched onto the page judge or the policy, and a replayed seed page is judged
    and learnt from as the worker's own seed pages are."""
    first = worker(redis_url, topic="birds", seeds="http://a.test/seed")
    joiner = worker(redis_url)
    response = HtmlResponse(
        "http://a.test/seed", body=SEED.encode(), encoding="utf-8",
        request=Request("http://a.test/seed", meta={"focuscrawl": RequestState(seed=True)}),
    )  # fmt: skip
    list(first.parse(response))
    assert joiner.page_judge.seed_scores == []
    page = partition(PAGE, "http://a.test/page")
    ours = joiner.judge_page(page, RequestState(1, parent="http://a.test/seed"))
    theirs = first.judge_page(page, RequestState(1, parent="http://a.test/seed"))
    assert joiner.page_judge.seed_scores == pytest.approx(first.page_judge.seed_scores)
    assert (ours.relevant, ours.relevance) == (theirs.relevant, pytest.approx(theirs.relevance))
    # the policy learnt from the replayed seed page (the body-word model) as the first did
    assert joiner.policy.words is not None and first.policy.words is not None
    assert joiner.policy.words.counts == first.policy.words.counts
    for obj in (joiner.policy, joiner.page_judge):
        assert not {"judge", "learn", "links"} & set(vars(obj))  # no method shadowed
    assert "judge_page" not in vars(joiner)
