"""The discovery adapter (focuscrawl.spiders.discovery): which documents a crawl asks for, and
what a robots.txt, an index and a sitemap give back (issue 31)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from focuscrawl.change.signal_store import SqliteSignalStore
from focuscrawl.change.sitemaps import SignalLimits
from focuscrawl.netguard import AddressPolicy
from focuscrawl.spiders.discovery import SignalDiscovery, entry_pages, url_anchor

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


class Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, n: int = 1) -> None:
        self.values[key] += n


def test_url_words_are_the_anchor() -> None:
    assert url_anchor("http://a.test/birds/rare-owls.html?page=2") == "birds rare owls page"
    pages = list(entry_pages("http://a.test/s.xml", []))
    assert pages == []


def test_robots_then_sitemap_then_entries(tmp_path: Path) -> None:
    stats = Stats()
    store = SqliteSignalStore(str(tmp_path / "signals.sqlite3"))
    store.open()
    d = SignalDiscovery(SignalLimits(), AddressPolicy(), store, stats)
    page = b'<head><link rel="alternate" type="application/rss+xml" href="/rss"></head>'
    assert d.documents_for("http://a.test/x", page) == [
        "http://a.test/robots.txt",
        "http://a.test/rss",
    ]
    assert d.documents_for("http://a.test/y", page) == []  # the host and the feed: once
    docs, entries = d.read("http://a.test/robots.txt", b"User-agent: *\nDisallow:\n")
    assert docs == ["http://a.test/sitemap.xml"] and entries == []  # none named: the default
    index = f"<sitemapindex {NS}><sitemap><loc>http://a.test/sitemap.xml</loc></sitemap>"
    index += "<sitemap><loc>http://a.test/s1.xml</loc></sitemap></sitemapindex>"
    docs, entries = d.read("http://a.test/sitemap.xml", index.encode())
    assert docs == ["http://a.test/s1.xml"]  # itself refused: a cycle
    assert stats.values["focuscrawl/signals/cycle"] == 1
    urlset = (
        f"<urlset {NS}><url><loc>http://a.test/hidden/1.html</loc><lastmod>2024-01-02</lastmod>"
        "</url><url><loc>http://b.test/elsewhere</loc></url>"
        "<url><loc>http://10.0.0.1/x</loc></url>"
        "<url><loc>http://a.test/future</loc><lastmod>2999-01-01</lastmod></url></urlset>"
    )
    docs, entries = d.read("http://a.test/s1.xml", urlset.encode())
    assert [e.url for e in entries] == ["http://a.test/hidden/1.html", "http://a.test/future"]
    assert stats.values["focuscrawl/signals/refused_scope"] == 1
    assert stats.values["focuscrawl/signals/refused_address"] == 1
    assert stats.values["focuscrawl/signals/future_lastmod"] == 1
    assert list(store.lastmods()) == ["http://a.test/hidden/1.html"]  # the future is a lie
    (page_of_links,) = entry_pages("http://a.test/s1.xml", entries)
    assert [link.anchor for link in page_of_links.links] == ["hidden", "future"]
    store.close()
