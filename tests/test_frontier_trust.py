"""A queue entry read back from Redis becomes a request only if our own encoder could have
written it (``focuscrawl.frontier.trust``): forged entries in a real Redis frontier are dropped,
counted and logged once per kind, and never stop the worker."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.redis_frontier import RedisFrontier
from focuscrawl.frontier.requests import decode, encode
from focuscrawl.frontier.scheduler import FocusScheduler
from focuscrawl.frontier.state import RequestState
from focuscrawl.frontier.trust import BadEntry, check_entry
from focuscrawl.spiders.topical import TopicalSpider
from tests.frontier_contract import fp

PREFIX = "fctrust:topical"


@pytest.fixture
def spider() -> TopicalSpider:
    crawler = get_crawler(TopicalSpider, dict(DEFAULTS))
    return TopicalSpider.from_crawler(crawler, topic="birds", seeds="http://a.test/")


def link(spider: TopicalSpider, url: str = "http://a.test/p", **kw: Any) -> Request:
    state = RequestState(1, anchor="owl", parent="http://a.test/", score=0.5)
    meta = {"focuscrawl": state, "depth": 1}
    return Request(url, errback=spider.errback, meta={**meta, **kw.pop("meta", {})}, **kw)


def test_the_spiders_requests_round_trip(spider: TopicalSpider) -> None:
    headers = {  # what Scrapy's middlewares and the conditional GET set before a retry
        "Referer": "http://a.test/", "User-Agent": "fc", "Accept": "text/html",
        "Accept-Language": "en", "Accept-Encoding": "gzip", "If-None-Match": '"e1"',
    }  # fmt: skip
    request = link(spider, headers=headers)
    request.meta.update(retry_times=1, is_start_request=True)
    request.meta.update(redirect_urls=["http://a.test/old"], redirect_times=1, redirect_ttl=9)
    request.meta.update(download_timeout=30, download_slot="a.test")  # transient: not stored
    data = encode(request, spider)
    assert set(data["meta"]) == {"focuscrawl", "depth", "redirect_urls", "redirect_times",
                                 "redirect_ttl", "retry_times", "is_start_request"}  # fmt: skip
    again = decode(request.url, fp(request.url), data, spider)
    assert again.errback == spider.errback and again.callback is None
    # the state travels in its wire form and comes back as the record it was
    assert data["meta"]["focuscrawl"] == {"d": 1, "a": "owl", "par": "http://a.test/", "score": 0.5}
    assert again.meta["focuscrawl"] == request.meta["focuscrawl"]
    assert again.headers["Referer"] == b"http://a.test/"
    assert "download_timeout" not in again.meta


@pytest.mark.parametrize(
    "change",
    [
        {"method": "POST", "body": b"x=1"},
        {"headers": {"Authorization": "Basic c2VjcmV0"}},
        {"meta": {"proxy": "http://10.0.0.1:3128"}},
        {"meta": {"some_project_key": 1}},
        {"cookies": {"session": "1"}},
    ],
)
def test_encode_keeps_in_memory_what_decode_would_refuse(
    spider: TopicalSpider, change: dict[str, Any]
) -> None:
    with pytest.raises(TypeError):  # the scheduler keeps such a request live, never in Redis
        encode(link(spider, **change), spider)


def test_a_proxy_from_the_environment_is_not_stored(spider: TopicalSpider) -> None:
    request = link(spider, meta={"proxy": "http://p:3128", "_scheme_proxy": True})
    assert set(encode(request, spider)["meta"]) == {"focuscrawl", "depth"}


def test_a_callback_outside_the_spiders_list_is_not_stored(spider: TopicalSpider) -> None:
    with pytest.raises(TypeError):
        encode(Request("http://a.test/", callback=spider.setup), spider)


GOOD = {"meta": {"focuscrawl": {"d": 1, "score": 0.5}, "depth": 1}, "eb": "errback"}


@pytest.mark.parametrize(
    ("url", "data", "kind"),
    [
        ("file:///etc/passwd", GOOD, "url_scheme"),
        ("data:text/html,<p>x</p>", GOOD, "url_scheme"),
        ("ftp://a.test/x", GOOD, "url_scheme"),
        ("javascript:alert(1)", GOOD, "url_scheme"),
        ("http://[::1", GOOD, "url"),
        ("http:///nohost", GOOD, "url_scheme"),
        ("http://a.test/", ["not", "an", "object"], "data"),
        ("http://a.test/", {"cookies": {"s": "1"}}, "field"),
        ("http://a.test/", {"method": "POST", "body": "a=1"}, "method"),
        ("http://a.test/", {"cb": "close"}, "callback"),
        ("http://a.test/", {"cb": "start_requests"}, "callback"),
        ("http://a.test/", {"eb": "_join"}, "callback"),
        ("http://a.test/", {"cb": "__init__"}, "callback"),
        ("http://a.test/", {"headers": {"Authorization": ["Basic eDp5"]}}, "header"),
        ("http://a.test/", {"headers": {"Proxy-Authorization": ["Basic eDp5"]}}, "header"),
        ("http://a.test/", {"headers": {"Host": ["intranet"]}}, "header"),
        ("http://a.test/", {"headers": {"Referer": ["x\r\nX-Evil: 1"]}}, "header"),
        ("http://a.test/", {"meta": {"proxy": "http://10.0.0.1:3128"}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"download_timeout": 100000}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"download_maxsize": 0}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"dont_filter": True}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"handle_httpstatus_all": True}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"cookiejar": 1}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"bindaddress": ["10.0.0.5", 0]}}, "meta_dangerous"),
        ("http://a.test/", {"meta": {"made_up": 1}}, "meta_key"),
        ("http://a.test/", {"meta": {"focuscrawl": {"score": "high"}}}, "meta_value"),
        ("http://a.test/", {"meta": {"focuscrawl": {"d": 1, "x": {"nested": 1}}}}, "meta_value"),
        ("http://a.test/", {"meta": {"depth": -1}}, "meta_value"),
        ("http://a.test/", {"meta": {"handle_httpstatus_list": [200, "x"]}}, "meta_value"),
        ("http://a.test/", {"pr": "9"}, "priority"),
    ],
)
def test_forged_entries_are_refused(spider: TopicalSpider, url: str, data: Any, kind: str) -> None:
    with pytest.raises(BadEntry) as info:
        check_entry(url, data, spider)
    assert info.value.kind == kind
    with pytest.raises(BadEntry):
        decode(url, fp(url), data, spider)


def test_a_spider_lists_its_own_callbacks_and_meta_keys(spider: TopicalSpider) -> None:
    spider.frontier_callbacks = ("parse", "errback", "parse_listing")  # type: ignore[attr-defined]
    spider.parse_listing = lambda response: None  # type: ignore[attr-defined]
    with pytest.raises(BadEntry):  # not a method of the spider: still refused
        check_entry("http://a.test/", {"cb": "parse_listing"}, spider)
    other = TopicalSpider.from_crawler(
        get_crawler(TopicalSpider, dict(DEFAULTS)), topic="birds", seeds="http://a.test/"
    )
    other.frontier_meta_keys = ("shop_id", "proxy")  # type: ignore[attr-defined]
    check_entry("http://a.test/", {"meta": {"shop_id": 7}}, other)
    with pytest.raises(BadEntry):  # a dangerous key stays refused, whatever the spider lists
        check_entry("http://a.test/", {"meta": {"proxy": "http://p:1"}}, other)


def test_forged_redis_entries_are_dropped_counted_and_logged_once(
    redis_url: str, redis_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {**DEFAULTS, "REDIS_URL": redis_url, "FOCUSCRAWL_REDIS_PREFIX": PREFIX}
    crawler = get_crawler(TopicalSpider, settings)
    spider = TopicalSpider.from_crawler(crawler, topic="birds", seeds="http://a.test/")
    crawler.spider = spider
    writer = RedisFrontier(redis_url, PREFIX.replace("%(spider)s", "topical"))
    writer.open()
    # what anyone who can write to this Redis might queue: far more than a recursion limit
    for i in range(1500):
        url = f"file:///etc/passwd{i}" if i % 2 else f"http://b.test/{i}"
        data = {"meta": {"proxy": "http://10.0.0.1:3128"}} if i % 2 == 0 else {}
        writer.push(url, 10.0, fp(url), data)
    writer.push("http://a.test/ok", 1.0, fp("http://a.test/ok"), GOOD)
    writer.close()

    scheduler = FocusScheduler.from_crawler(crawler)
    scheduler._busy = lambda host: False  # type: ignore[method-assign]  # no engine here
    scheduler.open(spider)
    try:
        with caplog.at_level(logging.WARNING, logger="focuscrawl.frontier.scheduler"):
            request = scheduler.next_request()
            assert request is not None and request.url == "http://a.test/ok"
            assert request.errback == spider.errback and "proxy" not in request.meta
            assert scheduler.next_request() is None
    finally:
        scheduler.close("finished")
    stats = crawler.stats
    assert stats.get_value("focuscrawl/skip/bad_queue_entry") == 1500
    assert stats.get_value("focuscrawl/skip/bad_queue_entry/url_scheme") == 750
    assert stats.get_value("focuscrawl/skip/bad_queue_entry/meta_dangerous") == 750
    dropped = [r for r in caplog.records if "did not write" in r.getMessage()]
    assert len(dropped) == 2  # once per kind
    # dropped entries are acknowledged, never to come back: only the good one, popped but not
    # acknowledged, is left (queued or in flight, as the frontier's close leaves it)
    queued = int(redis_client.get(f"{PREFIX}:n") or 0)
    assert queued + redis_client.zcard(f"{PREFIX}:lease") == 1
