"""The frontier ack waits for the items of a page: a page is acknowledged only once every item it
yielded is through the pipelines (its index update committed), and never after a storage fault."""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider, signals
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from focuscrawl.crawlstop import HeldItem
from focuscrawl.faults import StorageFault
from focuscrawl.middlewares.ack import FrontierAckMiddleware
from focuscrawl.signals import request_done


def setup() -> tuple[Any, FrontierAckMiddleware, list[Request]]:
    crawler = get_crawler(Spider)
    crawler.spider = crawler._create_spider("s")
    mw = FrontierAckMiddleware.from_crawler(crawler)
    crawler.signals.send_catch_log(signals.spider_opened, spider=crawler.spider)
    done: list[Request] = []
    crawler.signals.connect(lambda request, **kw: done.append(request), request_done, weak=False)
    return crawler, mw, done


def response(url: str = "http://a.test/") -> HtmlResponse:
    return HtmlResponse(url, body=b"<html></html>", request=Request(url))


def test_the_ack_waits_for_every_item_of_the_page() -> None:
    crawler, mw, done = setup()
    page = response()
    items = [{"url": "http://a.test/", "n": n} for n in range(2)]
    out = list(mw.process_spider_output(page, [items[0], Request("http://a.test/x"), items[1]]))
    assert len(out) == 3 and done == []  # output consumed, items not through the pipelines
    crawler.signals.send_catch_log(signals.item_scraped, item=items[0], response=page)
    assert done == []
    crawler.signals.send_catch_log(
        signals.item_dropped, item=items[1], response=page, exception=Exception("dup")
    )
    assert done == [page.request]


def test_a_page_without_items_is_acknowledged_when_its_output_ends() -> None:
    _, mw, done = setup()
    page = response()
    list(mw.process_spider_output(page, [Request("http://a.test/x")]))
    assert done == [page.request]


def test_a_storage_fault_holds_the_page_back() -> None:
    crawler, mw, done = setup()
    held, failed = response("http://a.test/1"), response("http://a.test/2")
    one, two = {"n": 1}, {"n": 2}
    list(mw.process_spider_output(held, [one]))
    list(mw.process_spider_output(failed, [two]))
    fault = StorageFault("disk full", "full")
    crawler.signals.send_catch_log(
        signals.item_dropped, item=one, response=held, exception=HeldItem(fault)
    )
    crawler.signals.send_catch_log(
        signals.item_error, item=two, response=failed, failure=Failure(fault)
    )
    assert done == []  # neither acknowledged: both fetched again by the resumed crawl
    assert crawler.stats.get_value("focuscrawl/frontier/held_by_storage_fault") == 2


def test_an_item_whose_visit_was_not_recorded_holds_its_page_back() -> None:
    """The change store failed to record the visit (after the index had it): the page is
    fetched again, so the change store never misses a page the crawl acknowledged."""
    from focuscrawl.signals import item_held

    crawler, mw, done = setup()
    page = response()
    item = {"url": "http://a.test/"}
    list(mw.process_spider_output(page, [item]))
    crawler.signals.send_catch_log(item_held, item=item, spider=None)
    crawler.signals.send_catch_log(signals.item_scraped, item=item, response=page)
    assert done == []
