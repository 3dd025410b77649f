"""The spider's near-duplicate step and the duplicate pipeline, on real Scrapy responses."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.blocks import partition
from focuscrawl.dedup.hook import DuplicateHook
from focuscrawl.dedup.pages import DuplicatePages
from focuscrawl.items import PageItem
from focuscrawl.pipelines.dedup import DuplicatePipeline
from focuscrawl.strategy.linkmemory import LinkMemory

TEXT = " ".join(f"Herons nest in the reed bed number {n} every spring." for n in range(40))


def page_response(url: str, head: str = "", text: str = TEXT, link: str = "") -> HtmlResponse:
    body = f"<html><head><title>t</title>{head}</head><body><article><p>{text}</p>"
    body += '<a href="/other">other</a></article></body></html>'
    headers = {"Link": link} if link else {}
    return HtmlResponse(url, body=body.encode(), encoding="utf-8", headers=headers)


def hook() -> DuplicateHook:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_DEDUP": True})
    crawler.stats.open_spider(None)
    return DuplicateHook(DuplicatePages(bits=4, min_words=20), LinkMemory(), crawler.stats)


def check(h: DuplicateHook, response: HtmlResponse):  # type: ignore[no-untyped-def]
    return h.check(response, partition(response.text, response.url))


def test_the_second_copy_names_the_first_and_counts_its_links() -> None:
    h = hook()
    first = check(h, page_response("http://a.test/1"))
    assert first.match is None and first.fp is not None
    first.remember(0.8)
    copy = check(h, page_response("http://b.test/mirror/1"))
    assert copy.match is not None
    assert (copy.match.url, copy.match.relevance, copy.match.exact) == (
        "http://a.test/1",
        pytest.approx(0.8),  # kept as a float32
        True,
    )
    stats = h.stats.get_stats()
    assert stats["focuscrawl/dedup/duplicates"] == 1 and stats["focuscrawl/dedup/exact"] == 1
    assert stats["focuscrawl/dedup/links_not_followed"] >= 1
    thin = check(h, page_response("http://a.test/2", text="Loading"))
    assert thin.match is None and thin.fp is None and stats["focuscrawl/dedup/thin"] == 1


def test_a_page_found_again_is_not_its_own_copy() -> None:
    h = hook()
    first = check(h, page_response("http://a.test/1"))
    first.remember(0.5)
    again = check(h, page_response("http://a.test/1"))
    assert again.match is None and again.fp is None  # not remembered twice
    assert h.stats.get_value("focuscrawl/dedup/duplicates") is None


def test_a_canonical_on_the_same_site_is_seen_and_another_site_is_refused() -> None:
    h = hook()
    tag = '<link rel="canonical" href="/story/1?utm_source=x">'
    got = check(h, page_response("http://www.news.test/print/1", head=tag))
    assert got.canonical == "http://www.news.test/story/1"
    assert not h.memory.improves("http://www.news.test/story/1", 10.0)  # treated as seen
    evil = check(
        h, page_response("http://evil.test/1", link='<http://bank.test/>; rel="canonical"')
    )
    assert evil.canonical == ""
    assert h.memory.improves("http://bank.test/", 1.0)
    assert h.stats.get_value("focuscrawl/dedup/canonical/refused") == 1


def test_the_pipeline_keeps_a_copy_out_of_the_harvest_and_is_off_by_default() -> None:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_DEDUP": True})
    pipeline = build_from_crawler(DuplicatePipeline, crawler)
    copy = PageItem(
        url="http://b.test/1", relevance=0.9, relevant=True, duplicate_of="http://a.test/1"
    )
    assert pipeline.process_item(copy).relevant is False
    page = PageItem(url="http://a.test/1", relevance=0.9, relevant=True)
    assert pipeline.process_item(page).relevant is True
    assert crawler.stats.get_value("focuscrawl/dedup/exported") == 1
    with pytest.raises(NotConfigured):
        build_from_crawler(DuplicatePipeline, get_crawler(settings_dict={}))
