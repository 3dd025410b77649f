"""``scrapy crawl topical`` with FOCUSCRAWL_SIGNALS against the evolving web with signals: every
page only a sitemap or feed names is found in the first crawl; in the recrawl a moved lastmod
makes the changed pages due at once and the hosts' trust is checked (issue 31)."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from focuseval.evolving_signals import synthetic_signal_web
from focuseval.testweb import TestWebProcess

from focuscrawl.change.signal_store import SqliteSignalStore
from tests.test_spider_recrawl import crawl as recrawl_crawl


@pytest.fixture(scope="module")
def signal_web() -> Iterator[TestWebProcess]:
    with TestWebProcess(corpus="evolving-signals") as web:
        yield web


def crawl(tmp: Path, web: TestWebProcess, name: str, *args: str) -> tuple[list[dict], dict]:
    """The recrawl tests' crawl, with the signals on."""
    return recrawl_crawl(tmp, web, name, "-s", "FOCUSCRAWL_SIGNALS=true", *args, pages=2000)


def test_sitemap_only_pages_are_found_and_lastmods_make_pages_due(
    tmp_path: Path, signal_web: TestWebProcess
) -> None:
    web = signal_web
    model = synthetic_signal_web(web.hosts, web.port)
    first, stats = crawl(tmp_path, web, "first")
    found = {i["url"] for i in first}
    hidden = set(model.sitemap_only)
    assert hidden and hidden <= found
    assert stats["focuscrawl/signals/documents"] >= 4  # robots.txt, sitemaps, the feed
    store = SqliteSignalStore(str(tmp_path / "data" / "signals.sqlite3"))
    store.open()
    try:
        assert hidden <= set(store.lastmods())
    finally:
        store.close()

    with urllib.request.urlopen(f"{web.base_urls[0]}/_evolve/4", timeout=30) as resp:
        assert resp.status == 200  # significant changes of the victims
    items, stats = crawl(tmp_path, web, "second", "-a", "mode=recrawl")
    changed = {f"http://{h}:{web.port}{p}" for h, p in model.victims} & found
    signal_stats = {k: v for k, v in stats.items() if "signals" in k}
    assert {i["url"] for i in items} == changed, signal_stats
    assert stats["focuscrawl/recrawl/signals/due_at_once"] >= 1, signal_stats
    # every host starts on probation: its signals are checked by the fetches
    assert stats.get("focuscrawl/recrawl/signals/agreed", 0) > 0
    assert stats.get("focuscrawl/recrawl/signals/false_move", 0) > 0, signal_stats  # the liar
    trust = {k.rsplit("/", 1)[-1]: v for k, v in stats.items() if "/signals/trust/" in k}
    assert trust, signal_stats  # each checked host's trust and evidence, in the stats
