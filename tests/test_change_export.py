"""The export carries what changed: ``PageItem.change_diff`` from ChangeDetectionPipeline."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from scrapy import Spider
from scrapy.utils.test import get_crawler

from focuscrawl.blocks.partition import partition
from focuscrawl.change.fingerprint import fingerprint
from focuscrawl.items import PageItem
from focuscrawl.pipelines.change import ChangeDetectionPipeline

URL = "http://127.0.0.2/offers.html"
ARTICLE = (
    "Our offers change every week. Each server below comes with dedicated cores, fast storage "
    "and a network port of one gigabit; the price is per month and includes VAT. "
) * 3


def body(price: str, offers: tuple[str, ...]) -> bytes:
    links = "".join(f'<li><a href="/offer/{o.lower()}">{o}</a></li>' for o in offers)
    return (
        f"<html><head><title>Offers</title></head><body><main><h1>Offers</h1><p>{ARTICLE}</p>"
        f"<p>Root server from {price} per month.</p><ul>{links}</ul></main></body></html>"
    ).encode()


def item(data: bytes, at: float, with_fingerprints: bool = True) -> PageItem:
    page = partition(data, URL)
    fp = fingerprint(page, data).to_dict() if with_fingerprints else {}
    return PageItem(URL, title=page.title, text=page.main_text, fetched_at=at, fingerprints=fp)


def pipeline(tmp_path: Path) -> tuple[ChangeDetectionPipeline, Spider]:
    settings = {"FOCUSCRAWL_DATA_DIR": str(tmp_path), "FOCUSCRAWL_CHANGE_WRITER_THREAD": False}
    crawler = get_crawler(Spider, settings)
    spider = Spider("t")
    pipe = ChangeDetectionPipeline.from_crawler(crawler)
    pipe.open_spider(spider)
    return pipe, spider


def test_significant_change_is_exported_with_its_diff(tmp_path: Path) -> None:
    pipe, spider = pipeline(tmp_path)
    first = pipe.process_item(item(body("4,99 €", ("RS1000", "RS2000")), 1.0), spider)
    assert first.change == "new" and first.change_diff == {}
    same = pipe.process_item(item(body("4,99 €", ("RS1000", "RS2000")), 2.0), spider)
    assert same.change == "unchanged" and same.change_diff == {}
    out = pipe.process_item(item(body("5,49 €", ("RS1000", "RS4000")), 3.0), spider)
    pipe.close_spider(spider)
    assert out.change == "significant"
    diff = out.change_diff
    assert diff["status"] == "significant"
    assert "4,99" in diff["removed"] and "5,49" in diff["added"]
    assert diff["items_added"] == [{"text": "RS4000", "url": "http://127.0.0.2/offer/rs4000"}]
    assert diff["items_removed"] == [{"text": "RS2000", "url": "http://127.0.0.2/offer/rs2000"}]
    exported = json.loads(json.dumps(asdict(out)))  # what a JSON-lines feed writes
    assert exported["change_diff"] == diff


def test_items_without_fingerprints_still_get_a_diff(tmp_path: Path) -> None:
    pipe, spider = pipeline(tmp_path)
    pipe.process_item(item(body("4,99 €", ("RS1000",)), 1.0, with_fingerprints=False), spider)
    out = pipe.process_item(item(body("5,49 €", ("RS1000",)), 2.0, with_fingerprints=False), spider)
    pipe.close_spider(spider)
    assert out.change == "significant"
    assert out.change_diff["removed"] == ["4,99"] and out.change_diff["added"] == ["5,49"]
