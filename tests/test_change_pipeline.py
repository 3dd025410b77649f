"""ChangeDetectionPipeline and the conditional-GET / fingerprint middlewares, with a real crawler
object (scrapy.utils.test.get_crawler) and both stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from focuscrawl.blocks.partition import partition
from focuscrawl.change.fingerprint import fingerprint
from focuscrawl.items import PageItem
from focuscrawl.middlewares.conditional_get import (
    FINGERPRINTS_META,
    ChangeFingerprintMiddleware,
    ConditionalGetMiddleware,
)
from focuscrawl.pipelines.change import ChangeDetectionPipeline

URL = "http://127.0.0.2/a.html"


def html(text: str, ad: str = "Buy now") -> bytes:
    return (
        f"<html><head><title>Birds</title></head><body><article><h1>Birds</h1><p>{text}</p>"
        f"</article><aside class='ad'>{ad}</aside></body></html>"
    ).encode()


class RecrawlSpider(Spider):
    name = "t"
    mode = "recrawl"


def make(tmp_path: Path, mode: str = "crawl", **settings: Any):  # type: ignore[no-untyped-def]
    spider_cls = (
        RecrawlSpider if mode == "recrawl" else type("CrawlSpider", (Spider,), {"name": "c"})
    )
    # visits recorded inline: read back at once (the writer thread: tests/test_change_writer.py)
    base = {"FOCUSCRAWL_DATA_DIR": str(tmp_path), "FOCUSCRAWL_CHANGE_WRITER_THREAD": False}
    crawler = get_crawler(spider_cls, {**base, **settings})
    crawler.spider = crawler._create_spider()
    pipe = ChangeDetectionPipeline.from_crawler(crawler)
    pipe.open_spider(crawler.spider)
    return crawler, pipe


def item(body: bytes, status: int = 200, at: float = 1.0, etag: str = "") -> PageItem:
    page = partition(body, URL)
    fp = fingerprint(page, body, {"ETag": etag} if etag else {})
    return PageItem(
        url=URL,
        title=page.title,
        text=page.main_text,
        status=status,
        fetched_at=at,
        fingerprints=fp.to_dict() if status == 200 else {},
    )


TEXT = "Sparrows nest in hedges and the female lays four to six eggs every spring."


def test_statuses_in_crawl_mode_all_pass(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path)
    seq = [
        (item(html(TEXT)), "new"),
        (item(html(TEXT), at=2.0), "unchanged"),
        (item(html(TEXT, ad="Sale today"), at=3.0), "insignificant"),
        (item(html(TEXT.replace("four", "five")), at=4.0), "significant"),
        (item(b"", status=404, at=5.0), "deleted"),
        (item(html(TEXT), at=6.0), "new"),  # back after a deletion
    ]
    for it, expected in seq:
        out = pipe.process_item(it, crawler.spider)
        assert out.change == expected
    stats = crawler.stats.get_stats()
    assert stats["focuscrawl/change/new"] == 2
    assert stats["focuscrawl/change/deleted"] == 1
    rec = pipe.store.get(URL)
    assert [s for _, s in rec.history] == [e for _, e in seq]
    assert rec.features["depth"] == 1
    pipe.close_spider(crawler.spider)


def test_recrawl_mode_drops_unchanged_and_insignificant(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path, mode="recrawl")
    assert pipe.process_item(item(html(TEXT)), crawler.spider).change == "new"
    with pytest.raises(DropItem):
        pipe.process_item(item(html(TEXT), at=2.0), crawler.spider)
    with pytest.raises(DropItem):
        pipe.process_item(item(html(TEXT, ad="Other ad"), at=3.0), crawler.spider)
    assert (
        pipe.process_item(item(html(TEXT + " More."), at=4.0), crawler.spider).change
        == "significant"
    )
    tomb = pipe.process_item(item(b"", status=410, at=5.0), crawler.spider)
    assert tomb.change == "deleted"
    assert crawler.stats.get_value("focuscrawl/change/dropped") == 2
    pipe.close_spider(crawler.spider)


def test_recrawl_flag_instead_of_drop(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path, mode="recrawl", FOCUSCRAWL_CHANGE_DROP=False)
    pipe.process_item(item(html(TEXT)), crawler.spider)
    assert pipe.process_item(item(html(TEXT), at=2.0), crawler.spider).change == "unchanged"
    pipe.close_spider(crawler.spider)


def test_fallback_without_fingerprints_uses_item_text(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path)
    a = PageItem(url=URL, title="T", text=TEXT, fetched_at=1.0)
    b = PageItem(url=URL, title="T", text=TEXT, fetched_at=2.0)
    c = PageItem(url=URL, title="T", text=TEXT + " New.", fetched_at=3.0)
    assert [pipe.process_item(x, None).change for x in (a, b, c)] == [
        "new",
        "unchanged",
        "significant",
    ]
    pipe.close_spider(None)


def test_corrupt_fingerprints_are_recomputed_not_fatal(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path)
    bad = PageItem(url=URL, text=TEXT, fingerprints={"d": "garbage!"})
    assert pipe.process_item(bad, None).change == "new"
    assert crawler.stats.get_value("focuscrawl/change/skipped/bad_fingerprints") == 1
    pipe.close_spider(None)


def test_redis_store_lost_closes_the_spider(tmp_path: Path, redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    crawler, pipe = make(tmp_path, REDIS_URL=redis_url)
    closed: list[str] = []

    class Engine:
        def close_spider(self, spider: Spider, reason: str) -> None:
            closed.append(reason)

    crawler.engine = Engine()  # type: ignore[assignment]
    pipe.process_item(item(html(TEXT)), None)
    redis_client.flushdb()
    with pytest.raises(DropItem, match="change store error"):
        pipe.process_item(item(html(TEXT), at=2.0), None)
    assert closed == ["change_store_error"]
    with pytest.raises(DropItem):  # no further writes into a fresh, empty history
        pipe.process_item(item(html(TEXT), at=3.0), None)
    assert crawler.stats.get_value("focuscrawl/change/store_error") == 1
    pipe.close_spider(None)


# --- middlewares ----------------------------------------------------------------------------
def test_conditional_get_headers_and_304(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path)
    pipe.process_item(item(html(TEXT), etag='"v1"'), None)
    mw = ConditionalGetMiddleware.from_crawler(crawler)
    mw.spider_opened()
    req = Request(URL)
    mw.process_request(req)
    assert req.headers[b"If-None-Match"] == b'"v1"'
    assert b"If-Modified-Since" not in req.headers  # none stored: none sent
    mw.process_response(req, Response(URL, status=304, request=req))
    rec = pipe.store.get(URL)
    assert rec.status == "unchanged" and rec.fingerprints is not None
    assert crawler.stats.get_value("focuscrawl/change/unchanged") == 1
    assert crawler.stats.get_value("focuscrawl/change/not_modified_bytes_saved") == len(html(TEXT))
    other = Request("http://127.0.0.2/unknown.html")
    mw.process_request(other)
    assert b"If-None-Match" not in other.headers
    mw.spider_closed()
    pipe.close_spider(None)


def test_fingerprints_flow_from_response_to_item(tmp_path: Path) -> None:
    crawler, _ = make(tmp_path, FOCUSCRAWL_CONDITIONAL_GET=False)
    mw = ConditionalGetMiddleware.from_crawler(crawler)
    mw.spider_opened()
    body = html(TEXT)
    req = Request(URL, meta={"focuscrawl_page": partition(body, URL)})
    resp = HtmlResponse(URL, body=body, headers={"ETag": '"x"'}, request=req)
    mw.process_response(req, resp)
    assert req.meta[FINGERPRINTS_META]["e"] == '"x"'
    smw = ChangeFingerprintMiddleware.from_crawler(crawler)
    out = list(smw.process_spider_output(resp, [PageItem(url=URL), req]))
    assert out[0].fingerprints == req.meta[FINGERPRINTS_META]
    assert out[1] is req


def test_lying_validators_stop_conditional_gets(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path, FOCUSCRAWL_CHANGE_VALIDATE_EVERY=0)
    pipe.process_item(item(html(TEXT), etag='"same"', at=1.0), None)
    mw = ConditionalGetMiddleware.from_crawler(crawler)
    mw.spider_opened()
    req = Request(URL)
    mw.process_request(req)
    assert req.headers[b"If-None-Match"] == b'"same"'
    # a full fetch (e.g. a validation fetch) shows a new body under the same ETag
    out = pipe.process_item(item(html(TEXT + " Changed."), etag='"same"', at=2.0), None)
    assert out.change == "significant"
    assert crawler.stats.get_value("focuscrawl/change/lying_validators") == 1
    req = Request(URL)
    mw.process_request(req)
    assert b"If-None-Match" not in req.headers  # no longer trusted for this page
    mw.spider_closed()
    pipe.close_spider(None)


def test_validation_fetch_every_nth_visit(tmp_path: Path) -> None:
    crawler, pipe = make(tmp_path, FOCUSCRAWL_CHANGE_VALIDATE_EVERY=3)
    mw = ConditionalGetMiddleware.from_crawler(crawler)
    mw.spider_opened()
    sent = []
    for visit in range(1, 7):
        pipe.process_item(item(html(TEXT), etag='"v"', at=float(visit)), None)
        req = Request(URL)
        mw.process_request(req)
        sent.append(b"If-None-Match" in req.headers)
    assert sent == [True, True, False, True, True, False]
    assert crawler.stats.get_value("focuscrawl/change/validation_fetches") == 2
    mw.spider_closed()
    pipe.close_spider(None)
