"""``/changes.atom`` of ``focuscrawl serve`` over HTTP: a strict XML parse and the checks of
RFC 4287 (required elements, one entry per changed page with its diff), hostile text escaped."""

from __future__ import annotations

import threading
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.index import PageIndex
from focuscrawl.web.app import Sources, WebServer, make_server
from focuscrawl.web.feed import ATOM

A = f"{{{ATOM}}}"
HOSTILE = "<script>alert('x')</script>\x00\x07\ufffe]]>"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WebServer]:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        first = ix.begin_crawl()
        ix.upsert("http://shop.test/old", "Old", "x", change="significant",
                  diff={"status": "significant", "added": ["from the first crawl"]}, crawl_id=first)  # fmt: skip
        second = ix.begin_crawl()
        for n, url in enumerate(["http://shop.test/a", "javascript:alert(1)"]):
            diff = {"status": "significant", "added": [f"price {n} {HOSTILE}"], "removed": ["old"]}
            ix.upsert(url, f"Page {n} {HOSTILE}", "t", fetched_at=1.7e9 + n,
                      change="significant", diff=diff, crawl_id=second)  # fmt: skip
        ix.upsert("http://shop.test/new", "New", "t", change="new", crawl_id=second)
        ix.end_crawl(second, {"change/significant": 2})
    server = make_server(Sources(index=path))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def fetch(server: WebServer, path: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(server.url + path.lstrip("/")) as r:
        return r.headers["Content-Type"], r.read()


def one(el: ET.Element, tag: str) -> ET.Element:
    found = el.findall(A + tag)
    assert len(found) == 1, (tag, len(found))
    return found[0]


def test_the_feed_is_valid_atom_with_one_entry_per_changed_page(site: WebServer) -> None:
    ctype, body = fetch(site, "/changes.atom")
    assert ctype.startswith("application/atom+xml")
    feed = ET.fromstring(body)  # strict: raises on anything not well-formed
    assert feed.tag == A + "feed"
    for tag in ("id", "title", "updated", "author"):
        one(feed, tag)
    assert one(one(feed, "author"), "name").text
    assert [x.get("href") for x in feed.findall(A + "link") if x.get("rel") == "self"] == [
        site.url + "changes.atom"
    ]
    entries = feed.findall(A + "entry")
    assert len(entries) == 2  # this crawl's changes; not the new page, not the first crawl's
    ids = set()
    for entry in entries:
        for tag in ("id", "title", "updated", "content"):
            one(entry, tag)
        ids.add(one(entry, "id").text)
        assert one(entry, "updated").text.endswith("Z")
        content = one(entry, "content")
        assert content.get("type") == "html"
        assert 'class="added"' in content.text and 'class="removed"' in content.text
        assert "<script>" not in content.text  # the page's text stays text inside the HTML
        assert "\x00" not in one(entry, "title").text
    assert len(ids) == 2
    links = [x.get("href") for e in entries for x in e.findall(A + "link")]
    assert links == ["http://shop.test/a"]  # javascript: is never linked
    assert b"<script>" not in body


def test_the_feed_is_linked_from_the_changes_page_and_empty_without_an_index(
    site: WebServer, tmp_path: Path
) -> None:
    assert 'href="/changes.atom"' in fetch(site, "/changes")[1].decode()
    server = make_server(Sources(index=tmp_path / "missing.sqlite"))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        feed = ET.fromstring(fetch(server, "/changes.atom")[1])
        assert feed.findall(A + "entry") == [] and one(feed, "updated").text
    finally:
        server.shutdown()
        server.server_close()
