"""End to end: ``scrapy crawl topical`` of the script pages of the test web (``focuscrawl
testweb --corpus jsweb``) with Debian's chromium. With ``never`` the shell page is empty and its
links are missing; with ``auto`` its rendered text is extracted and its links followed; the
browser reaches nothing the crawler may not (a script fetching the internal host, a redirect
to it, an image, a frame, ``file://``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from focuseval.jsweb import AFTER_PAGES, RENDERED_MARK
from focuseval.testweb import TestWebProcess

from focuscrawl.netguard import allow_private_args

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def jsweb() -> Iterator[TestWebProcess]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} missing: run scripts/setup-system (make test does)")
    with TestWebProcess("jsweb", pages=300) as web:
        yield web


def canary(web: TestWebProcess) -> dict[str, Any]:
    with urllib.request.urlopen(f"{web.base_urls[0]}/_canary", timeout=30) as r:
        return json.load(r)


def crawl(
    web: TestWebProcess, tmp: Path, mode: str, seed: str = "", status: int = 0
) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds",
         "-a", f"seeds={seed or web.seeds['js'][0]}", "-a", "strategy=bfs",
         "-s", f"FOCUSCRAWL_RENDER_JS={mode}",
         "-s", f"FOCUSCRAWL_DATA_DIR={tmp / 'data'}",
         "-s", f"FOCUSCRAWL_CRAWL_LOG={tmp / 'log.jsonl'}",
         "-s", f"FOCUSCRAWL_STATS_FILE={tmp / 'stats.json'}",
         "-s", "FOCUSCRAWL_EXPORT_IRRELEVANT=True",
         "-O", str(tmp / "items.jsonl"), *allow_private_args(web.hosts)],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == status, proc.stderr[-3000:]
    items = {}
    lines = (tmp / "items.jsonl").read_text().splitlines() if status == 0 else []
    for line in lines:
        item = json.loads(line)
        items[item["url"].split("/js/", 1)[-1]] = item
    stats = json.loads((tmp / "stats.json").read_text())
    return {"items": items, "stats": stats, "log": proc.stderr}


@pytest.fixture(scope="module")
def never(jsweb: TestWebProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return crawl(jsweb, tmp_path_factory.mktemp("never"), "never")


@pytest.fixture(scope="module")
def auto(jsweb: TestWebProcess, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    assert canary(jsweb)["hits"] == 0
    return crawl(jsweb, tmp_path_factory.mktemp("auto"), "auto")


def stats_of(result: dict[str, Any]) -> dict[str, Any]:
    stats = result["stats"]
    return stats.get("stats", stats) if isinstance(stats, dict) else {}


def test_never_sees_an_empty_shell_and_misses_its_links(never: dict[str, Any]) -> None:
    items = never["items"]
    assert {"index.html", "app.html", "probe.html"} <= set(items)
    assert RENDERED_MARK not in items["app.html"]["text"]
    assert not any(url.startswith("after-") for url in items)
    assert not any(k.startswith("focuscrawl/render/") for k in stats_of(never))
    assert "Starting download handler" not in never["log"]  # no browser, no Playwright


def test_auto_renders_the_shell_and_follows_its_links(auto: dict[str, Any]) -> None:
    items = auto["items"]
    assert RENDERED_MARK in items["app.html"]["text"]
    after = {f"after-{n}.html" for n in range(1, AFTER_PAGES + 1)}
    assert after <= set(items)
    stats = stats_of(auto)
    assert stats["focuscrawl/render/shell"] == 2  # app.html and probe.html
    assert stats["focuscrawl/render/rendered"] == 2
    assert "focuscrawl/render/shell" in stats and "focuscrawl/render/failed" not in stats


def test_the_browser_reaches_nothing_the_crawler_may_not(
    auto: dict[str, Any], jsweb: TestWebProcess
) -> None:
    assert canary(jsweb) == {"hits": 0, "paths": []}
    stats = stats_of(auto)
    assert stats["focuscrawl/render/blocked"] >= 3  # fetch, redirect hop, frame (image aborted)
    probe = auto["items"]["probe.html"]["text"]
    assert "Birds probe the network" in probe  # it was rendered
    assert "FILE" not in probe and "internal secret" not in probe


def test_always_renders_every_page_and_the_address_guard_still_judges_the_peer(
    jsweb: TestWebProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    result = crawl(jsweb, tmp_path_factory.mktemp("always"), "always")
    items, stats = result["items"], stats_of(result)
    assert RENDERED_MARK in items["app.html"]["text"]
    assert {f"after-{n}.html" for n in range(1, AFTER_PAGES + 1)} <= set(items)
    assert stats["focuscrawl/render/rendered"] == len(items)  # robots.txt was not rendered
    assert "focuscrawl/render/shell" not in stats  # no second fetch in always
    assert "focuscrawl/skip/address_blocked" not in stats  # the peer is the page's host
    assert canary(jsweb)["hits"] == 0


def test_a_page_the_browser_is_redirected_to_a_refused_address_is_address_blocked(
    jsweb: TestWebProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    seed = f"{jsweb.base_urls[0]}/js/to-internal"  # 302 to the internal host, in the browser
    result = crawl(jsweb, tmp_path_factory.mktemp("redirect"), "always", seed, status=3)
    stats = stats_of(result)
    assert stats["focuscrawl/skip/address_blocked"] == 1
    assert stats["focuscrawl/render/blocked"] == 1
    assert "address not allowed" in result["log"]
    assert canary(jsweb)["hits"] == 0
