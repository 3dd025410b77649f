"""TemplateLinks: links a host repeats on most of its pages are marked template/noise."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.blocks import TemplateLinks, partition
from focuscrawl.middlewares.partition import PAGE_META, PartitionMiddleware

STORY = " ".join(f"Sentence {i} on herons, egrets and the marshes they feed in." for i in range(10))


def _html(k: int) -> str:
    return (
        "<html><body><nav><a href='/'>Home</a> <a href='/birds'>Birds</a></nav>"
        f"<div class='story'><p>{STORY} Read <a href='/story/{k + 1}'>the next story</a>.</p></div>"
        "<footer><a href='/legal'>Legal</a></footer></body></html>"
    )


def _page(k: int, host: str = "a.example"):  # type: ignore[no-untyped-def]
    return partition(_html(k), f"http://{host}/story/{k}")


def test_links_on_most_pages_of_a_host_become_template() -> None:
    marker = TemplateLinks(min_pages=3, share=0.5)
    assert marker.mark(_page(0)) == 0 and marker.mark(_page(1)) == 0  # too few pages yet
    page = _page(2)
    assert marker.mark(page) == 3
    by_url = {link.url.rsplit("/", 1)[-1] or "home": link for link in page.links}
    for name in ("home", "birds", "legal"):
        assert by_url[name].template and by_url[name].noise and by_url[name].block_weight <= 0.05
    story_link = by_url["3"]
    assert not story_link.template and not story_link.noise


def test_hosts_are_counted_apart_and_bounded() -> None:
    marker = TemplateLinks(min_pages=2, share=0.5, max_hosts=2)
    marker.mark(_page(0, "a.example"))
    assert marker.mark(_page(0, "b.example")) == 0  # a's pages say nothing about b
    marker.mark(_page(0, "c.example"))  # evicts a.example (least recently seen)
    assert marker.mark(_page(1, "a.example")) == 0  # a starts over
    assert marker.mark(_page(1, "c.example")) == 3


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        TemplateLinks(min_pages=1)
    with pytest.raises(ValueError):
        TemplateLinks(share=0)


def test_middleware_marks_and_counts_template_links() -> None:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_TEMPLATE_LINK_MIN_PAGES": 2})
    mw = build_from_crawler(PartitionMiddleware, crawler)
    pages = []
    for k in range(3):
        url = f"http://a.example/story/{k}"
        request = Request(url)
        mw.process_response(request, HtmlResponse(url, body=_html(k).encode(), request=request))
        pages.append(request.meta[PAGE_META])
    assert not any(link.template for link in pages[0].links)
    assert {link.anchor for link in pages[2].links if link.template} == {"Home", "Birds", "Legal"}
    assert crawler.stats is not None
    assert crawler.stats.get_value("focuscrawl/partition/template_links") == 6


def test_middleware_template_marking_can_be_turned_off() -> None:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_TEMPLATE_LINK_SHARE": 0})
    assert build_from_crawler(PartitionMiddleware, crawler).template_links is None
