"""End to end: ``scrapy crawl topical -s FOCUSCRAWL_DEDUP=True`` of the mirrored test web
(``focuscrawl testweb --corpus mirrored``: 20 % of the pages are copies) marks the copies it
fetches, marks no genuinely different page, and follows no copy's links."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from focuseval.dedup_metrics import dedup_metrics
from focuseval.mirrored import MirroredWeb
from focuseval.testweb import TestWebProcess

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mirrored_web() -> Iterator[TestWebProcess]:
    with TestWebProcess("mirrored") as web:
        yield web


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, mirrored_web: TestWebProcess) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("mirrored")
    topic = tmp / "birds.toml"
    seeds = json.dumps(mirrored_web.seeds["birds"])
    topic.write_text(f'name = "birds"\nkeywords = ["birds", "nest", "feathers"]\nseeds = {seeds}\n')
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    args = {
        "FOCUSCRAWL_ALLOW_PRIVATE": mirrored_web.allow_private,
        "FOCUSCRAWL_DEDUP": True,
        "FOCUSCRAWL_STRATEGY": "bfs",  # every page reachable is fetched: all copies are met
        "FOCUSCRAWL_CRAWL_LOG": tmp / "log.jsonl",
        "FOCUSCRAWL_STATS_FILE": tmp / "stats.json",
        "FOCUSCRAWL_DATA_DIR": tmp / "data",
        "CLOSESPIDER_TIMEOUT": 280,  # a safety net: the crawl ends by itself long before
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
    cmd += ["-O", str(tmp / "items.jsonl")]
    for name, value in args.items():
        cmd += ["-s", f"{name}={value}"]
    proc = subprocess.run(
        cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=280, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return {
        "log": [json.loads(x) for x in (tmp / "log.jsonl").read_text().splitlines()],
        "items": [json.loads(x) for x in (tmp / "items.jsonl").read_text().splitlines()],
        "stats": json.loads((tmp / "stats.json").read_text()),
        "site": MirroredWeb(mirrored_web.hosts, mirrored_web.port),
    }


def test_copies_are_marked_and_different_pages_are_not(crawl: dict[str, Any]) -> None:
    m = dedup_metrics(crawl["log"], crawl["site"].groups())
    assert m.duplicates >= 40, m  # the crawl met the copies
    assert m.marked_share >= 0.95, m
    assert m.false_share < 0.01, m
    assert m.tracking_urls == 0, m  # ?utm_ variants were one URL with their page


def test_duplicates_are_not_expanded(crawl: dict[str, Any]) -> None:
    m = dedup_metrics(crawl["log"], crawl["site"].groups())
    assert m.expanded == 0 and m.via_duplicates == 0, m
    marked = {r["url"] for r in crawl["log"] if r.get("duplicate_of")}
    assert marked and not any(r.get("parent") in marked for r in crawl["log"])
    # the mirror's pages are found only through each other: most are never fetched
    kinds = crawl["site"].kinds()
    fetched = {r["url"] for r in crawl["log"]}
    mirrors = [u for u, k in kinds.items() if k == "mirror"]
    assert sum(u in fetched for u in mirrors) <= 3


def test_copies_are_not_counted_in_the_harvest(crawl: dict[str, Any]) -> None:
    stats, log = crawl["stats"], crawl["log"]
    marked = [r for r in log if r.get("duplicate_of")]
    judged = [r for r in log if r.get("relevance") is not None]
    assert stats["focuscrawl/dedup/duplicates"] == len(marked)
    assert stats["focuscrawl/harvest/pages"] == len(judged)
    assert all(r["relevance"] is None and not r["relevant"] for r in marked)
    items = {i["url"]: i for i in crawl["items"]}
    for rec in marked:
        item = items[rec["url"]]
        assert item["duplicate_of"] == rec["duplicate_of"] and item["relevant"] is False
        assert item["relevance"] == items[rec["duplicate_of"]]["relevance"]  # its original's


def test_print_views_record_their_canonical(crawl: dict[str, Any]) -> None:
    site: MirroredWeb = crawl["site"]
    prints = {c.url: site.url(site.articles[c.of]) for c in site.copies if c.kind == "print"}
    items = [i for i in crawl["items"] if i["url"] in prints]
    assert items and all(i["canonical"] == prints[i["url"]] for i in items)
    assert crawl["stats"]["focuscrawl/dedup/canonical/accepted"] == len(items)
