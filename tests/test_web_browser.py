"""End to end: a real crawl of the test web feeds the index; ``focuscrawl serve`` is driven by
Debian's headless chromium through Playwright (never a downloaded browser)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from focuscrawl.index import PageIndex
from focuscrawl.netguard import allow_private_args
from tests.browser import chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = 100


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, testweb_synthetic: Any) -> Path:
    """A real ``scrapy crawl topical`` of the synthetic web with the IndexPipeline on."""
    tmp = tmp_path_factory.mktemp("webcrawl")
    (tmp / "indexed_settings.py").write_text(
        "from focuscrawl.settings import *  # noqa: F403\n"
        "ITEM_PIPELINES = {'focuscrawl.pipelines.index.IndexPipeline': 800}\n"
    )
    seeds = ", ".join(json.dumps(u) for u in testweb_synthetic.seeds["birds"])
    topic = tmp / "birds.toml"
    topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = [{seeds}]\n')
    env = {
        **os.environ,
        "SCRAPY_SETTINGS_MODULE": "indexed_settings",
        "PYTHONPATH": os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}",
         "-s", f"CLOSESPIDER_PAGECOUNT={PAGES}",
         "-s", f"FOCUSCRAWL_DATA_DIR={tmp / 'data'}",
         "-s", f"FOCUSCRAWL_CRAWL_LOG={tmp / 'log.jsonl'}",
         "-s", f"FOCUSCRAWL_STATS_FILE={tmp / 'data' / 'stats.json'}",
         *allow_private_args(testweb_synthetic.hosts)],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp


@pytest.fixture(scope="module")
def server(crawl: Path) -> Iterator[str]:
    index = crawl / "data" / "index.sqlite"
    with serving("--index", str(index), "--crawl-log", str(crawl / "log.jsonl")) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def test_crawl_filled_the_index(crawl: Path) -> None:
    log = [json.loads(x) for x in (crawl / "log.jsonl").read_text().splitlines()]
    relevant = {r["url"] for r in log if r.get("relevant")}
    with PageIndex.open(crawl / "data" / "index.sqlite", readonly=True) as ix:
        indexed = {p["url"] for p in ix.pages()}
    assert indexed and indexed <= relevant
    assert len(indexed) >= 0.9 * len(relevant)  # every relevant HTML page, bar a few non-items
    stats = json.loads((crawl / "data" / "stats.json").read_text())
    assert stats["focuscrawl/index/added"] == len(indexed)


def test_search_command_over_the_crawl(crawl: Path) -> None:
    with PageIndex.open(crawl / "data" / "index.sqlite", readonly=True) as ix:
        best = max(ix.pages(), key=lambda p: p["relevance"])
    proc = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "search", best["title"], "--json",
         "--index", str(crawl / "data" / "index.sqlite")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    assert best["url"] in [h["url"] for h in hits[:3]]


def test_search_from_the_page(crawl: Path, server: str, browser: Any) -> None:
    with PageIndex.open(crawl / "data" / "index.sqlite", readonly=True) as ix:
        best = max(ix.pages(), key=lambda p: p["relevance"])
    page = browser.new_page()
    page.goto(server)
    page.fill("#q", best["title"])
    page.click("#go")
    page.wait_for_selector("#results, #error, #none")
    hits = page.locator("#results .hit")
    assert hits.count() >= 1
    urls = [hits.nth(i).locator(".url").inner_text() for i in range(hits.count())]
    assert best["url"] in urls[:3]
    assert page.locator("#results mark").count() >= 1  # highlighted snippet words
    # a query of FTS syntax only is a message on the page, not an error page
    page.fill("#q", '"(*)"')
    page.click("#go")
    assert "no searchable words" in page.locator("#error").inner_text()
    page.close()


def test_dashboard_shows_figures_and_plot(crawl: Path, server: str, browser: Any) -> None:
    fetched = len((crawl / "log.jsonl").read_text().splitlines())
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    page.goto(server + "dashboard")
    summary = page.locator("#summary").inner_text()
    assert f"pages fetched\t{fetched}" in summary
    plot = page.locator("#harvest-plot")
    plot.scroll_into_view_if_needed()
    page.wait_for_function("document.getElementById('harvest-plot').complete")
    natural = page.evaluate(
        "() => { const i = document.getElementById('harvest-plot'); return [i.naturalWidth, i.naturalHeight]; }"
    )
    assert natural == [800, 360]
    shot = Image.open(io.BytesIO(plot.screenshot())).convert("RGB")
    assert shot.size[0] >= 800 and shot.size[1] >= 360
    pixels = list(shot.getdata())
    ink = sum(1 for r, g, b in pixels if r + g + b < 600)
    blue = sum(1 for r, g, b in pixels if b > 120 and r < 40 and 60 < g < 110)  # the #08519c line
    assert ink > 0.01 * len(pixels), "the plot looks blank"
    assert blue > 200, "the cumulative harvest-rate line is missing"
    page.close()


def test_review_page_labels_the_least_certain_page(crawl: Path, server: str, browser: Any) -> None:
    """The review page lists the pages nearest the judge's threshold first; its buttons write
    a label (with the server's token) and the page comes back without the labelled one."""
    labels = crawl / "data" / "labels.jsonl"
    page = browser.new_page()
    page.goto(server + "review")
    rows = page.locator("table tr[id^=r]")
    assert rows.count() >= 5
    first_url = page.locator("#r0 input[name=url]").get_attribute("value")
    page.click("#r0 button.on")
    page.wait_for_url(server + "review")
    assert page.locator("#on-count").inner_text() == "1"
    assert page.locator(f'input[name=url][value="{first_url}"]').count() == 0
    label = json.loads(labels.read_text().splitlines()[-1])
    assert label["url"] == first_url and label["on_topic"] is True and label["by"] == "review"
    # a POST without the server's token (as another site's page would send) is refused
    status = page.evaluate(
        """async () => (await fetch('/api/label', {method: 'POST',
            headers: {'Content-Type': 'application/x-www-form-urlencoded'},
            body: 'url=http%3A%2F%2Fx.test%2F&label=off&token=guess'})).status"""
    )
    assert status == 403
    assert len(labels.read_text().splitlines()) == 1
    page.close()
