"""End to end: ``scrapy crawl topical`` of the hostile test web (``focuscrawl testweb --corpus
hostile``) ends by itself, fetches every ordinary page, stays within memory, counts every hostile
page, and sends nothing to the internal addresses (``127.0.0.99``, ``127.0.0.1``, ``[::1]``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from focuseval.testweb import TestWebProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hostile_web() -> Iterator[TestWebProcess]:
    with TestWebProcess("hostile") as web:
        yield web


def canary(web: TestWebProcess) -> dict[str, Any]:
    with urllib.request.urlopen(f"{web.base_urls[0]}/_canary", timeout=30) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, hostile_web: TestWebProcess) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("hostile")
    assert canary(hostile_web)["hits"] == 0
    topic = tmp / "birds.toml"
    seeds = json.dumps(hostile_web.seeds["birds"])
    topic.write_text(f'name = "birds"\nkeywords = ["birds", "bird"]\nseeds = {seeds}\n')
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    args = {
        "FOCUSCRAWL_ALLOW_PRIVATE": ",".join(hostile_web.hosts),
        "FOCUSCRAWL_CRAWL_LOG": tmp / "log.jsonl",
        "FOCUSCRAWL_STATS_FILE": tmp / "stats.json",
        "FOCUSCRAWL_DATA_DIR": tmp / "data",
        # the slow drip is cut by the per-response deadline (a total one, that also runs while
        # the reactor parses other pages): shorter than the default 30 s keeps the test short
        "DOWNLOAD_TIMEOUT": 15,
        "RETRY_TIMES": 1,
        # Scrapy's memory guard, checked every second: a crawl that passes 1 GB is closed
        "MEMUSAGE_LIMIT_MB": 1024,
        "MEMUSAGE_CHECK_INTERVAL_SECONDS": 1,
        # a safety net only: the crawl must end by itself long before (finish_reason below)
        "CLOSESPIDER_TIMEOUT": 400,
        "LOG_LEVEL": "INFO",
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
    for name, value in args.items():
        cmd += ["-s", f"{name}={value}"]
    proc = subprocess.run(
        cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    log = [json.loads(x) for x in (tmp / "log.jsonl").read_text().splitlines()]
    stats = json.loads((tmp / "stats.json").read_text())
    return {"proc": proc, "log": log, "stats": stats, "canary": canary(hostile_web)}


def test_the_crawl_ends_by_itself(crawl: dict[str, Any]) -> None:
    assert crawl["proc"].returncode == 0, crawl["proc"].stderr[-3000:]
    assert crawl["stats"]["finish_reason"] == "finished"
    assert "Traceback" not in crawl["proc"].stderr


def test_every_ordinary_page_is_fetched(crawl: dict[str, Any], hostile_web: TestWebProcess) -> None:
    fetched = {r["url"] for r in crawl["log"] if r["status"] == 200}
    base = hostile_web.base_urls[0]
    missing = [f"{base}/ok/{n}.html" for n in range(60) if f"{base}/ok/{n}.html" not in fetched]
    assert not missing


def test_nothing_reaches_the_internal_addresses(crawl: dict[str, Any]) -> None:
    assert crawl["canary"] == {"hits": 0, "paths": []}
    assert crawl["stats"].get("focuscrawl/skip/address_blocked", 0) >= 5


def test_memory_stays_under_the_limit(crawl: dict[str, Any]) -> None:
    assert crawl["stats"]["memusage/max"] < 1024**3


def test_hostile_pages_are_cut_and_counted(
    crawl: dict[str, Any], hostile_web: TestWebProcess
) -> None:
    from focuseval.hostile import hostile_body
    from focuseval.hostile_pages import HOSTILE_PAGES

    stats = crawl["stats"]
    base = hostile_web.base_urls[0]
    fetched = {r["url"] for r in crawl["log"] if r["status"] == 200}
    # every hostile page within DOWNLOAD_MAXSIZE is fetched and judged: none kills or stalls
    # the crawl; the larger ones are cancelled by the download limit
    small = {n for n in HOSTILE_PAGES if len(hostile_body(n) or b"") < 10 * 1024 * 1024}
    assert {f"{base}/h/{n}.html" for n in small} <= fetched
    cut = {k: v for k, v in stats.items() if k.startswith("focuscrawl/skip/")}
    for budget in ("css", "attributes", "elements", "links", "depth", "text"):
        assert cut.get(f"focuscrawl/skip/{budget}", 0) >= 1, cut
    # the wire tricks: the bombs and the endless body stop at DOWNLOAD_MAXSIZE, the drip at the
    # deadline, the big body by its length; none of them becomes a page
    for path in ("gzip-bomb", "double-gzip", "endless", "drip", "big"):
        assert f"{base}/net/{path}.html" not in fetched
    assert stats.get("focuscrawl/skip/decompressed_too_large", 0) >= 1
    errors = "downloader/exception_type_count/scrapy.exceptions."
    assert stats.get(errors + "DownloadCancelledError", 0) >= 2
    assert stats.get(errors + "DownloadTimeoutError", 0) >= 1
    # the bad encodings and binary bodies are pages or counted skips, never a crash
    assert stats.get("focuscrawl/partition/binary", 0) >= 1


def test_traps_are_capped(crawl: dict[str, Any], hostile_web: TestWebProcess) -> None:
    urls = [r["url"] for r in crawl["log"]]
    calendar = [u for u in urls if "/trap/calendar" in u]
    search = [u for u in urls if "/trap/search" in u]
    assert 0 < len(calendar) <= 101 and 0 < len(search) <= 101
    assert crawl["stats"].get("focuscrawl/frontier/rejected/query_variants", 0) > 0
