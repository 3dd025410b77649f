"""The changes page of ``focuscrawl serve`` over HTTP (the server in a thread): the last crawl's
significant changes, hostile page text escaped. In the real browser: tests/test_web_changes_browser.py."""

from __future__ import annotations

import json
import sqlite3
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.index import PageIndex
from focuscrawl.web.app import Sources, WebServer, make_server
from tests.test_index_changes import SCHEMA_1

HOSTILE = "<script>alert('x')</script>"
DIFF = {
    "status": "significant",
    "added": [f"Now 64,99 € {HOSTILE}"],
    "removed": ['59,99 € <img src=x onerror="alert(1)">'],
    "moved": ["Star64"],
    "kinds": ["text", "link"],
    "items_added": [
        {"text": "Ox64 <b>new</b>", "url": "http://shop.test/ox"},
        {"text": "evil", "url": "javascript:alert(1)"},
    ],
    "items_removed": [{"text": "Pinecube", "url": "http://shop.test/cube?a=1&b=2"}],
}


def serve(index: Path) -> WebServer:
    server = make_server(Sources(index=index))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WebServer]:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        first = ix.begin_crawl()
        ix.upsert("http://shop.test/old", "Old", "x", change="significant",
                  diff={"status": "significant", "added": ["from the first crawl"]}, crawl_id=first)  # fmt: skip
        second = ix.begin_crawl()
        ix.upsert("http://shop.test/boards", f"Boards {HOSTILE}", "text", fetched_at=1.7e9,
                  change="significant", diff=DIFF, crawl_id=second)  # fmt: skip
        ix.upsert("http://shop.test/quiet", "Quiet", "text", change="new", crawl_id=second)
        # two irrelevant pages changed too: counted by the crawl, not indexed
        ix.end_crawl(second, {"change/significant": 3, "change/unchanged": 4})
    server = serve(path)
    yield server
    server.shutdown()
    server.server_close()


def get(server: WebServer, path: str) -> tuple[int, str]:
    with urllib.request.urlopen(server.url + path.lstrip("/")) as r:
        return r.status, r.read().decode("utf-8")


def test_changes_page_lists_the_last_crawls_changes_escaped(site: WebServer) -> None:
    status, html = get(site, "/changes")
    assert status == 200
    assert "http://shop.test/boards" in html and "from the first crawl" not in html
    assert "http://shop.test/quiet" not in html  # new, not changed
    assert "<script>" not in html and "<img" not in html and "<b>new" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert html.count('class="added"') == 1 and html.count('class="removed"') == 1
    assert 'class="moved"' in html and "item-added" in html and "item-removed" in html
    assert 'href="http://shop.test/ox"' in html and "javascript:" not in html.split("evil")[0][-80:]
    assert 'href="http://shop.test/cube?a=1&amp;b=2"' in html
    # it says which pages it lists, and how they relate to the dashboard's count
    summary = html.split('id="changes-summary">')[1].split("</p>")[0]
    assert summary.startswith("1 relevant page (those in the index) changed significantly in ")
    assert "(of the 3 significant changes it found on every page it revisited" in summary


def test_the_dashboard_and_the_changes_page_agree(site: WebServer) -> None:
    d = json.loads(get(site, "/api/dashboard")[1])
    assert d["changes"]["significant"] == 3 and d["indexed_changes"] == 1
    html = get(site, "/dashboard")[1]
    assert 'id="changes-scope">every page the recrawl revisited, relevant or not' in html
    assert "1 of the 3 significant changes are on relevant pages (those in the index)" in html
    listed = json.loads(get(site, "/api/changes")[1])
    assert (listed["total"], listed["all_significant"]) == (1, 3)


def test_changes_are_linked_from_the_main_page_and_served_as_json(site: WebServer) -> None:
    assert 'href="/changes"' in get(site, "/")[1]
    data = json.loads(get(site, "/api/changes")[1])
    assert data["total"] == 1
    assert data["crawl"]["counts"] == {"change/significant": 3, "change/unchanged": 4}
    assert data["changes"][0]["change_diff"] == DIFF


def test_no_index_no_changes_and_an_old_index(tmp_path: Path) -> None:
    server = serve(tmp_path / "missing.sqlite")
    try:
        assert "no index yet" in get(server, "/changes")[1]
    finally:
        server.shutdown()
        server.server_close()
    empty = tmp_path / "empty.sqlite"
    with PageIndex.open(empty) as ix:
        ix.upsert("http://t/1", "T", "x", change="new")
    old = tmp_path / "old.sqlite"  # an index of schema 1: read as it is, no change columns
    conn = sqlite3.connect(old)
    conn.executescript(SCHEMA_1)
    conn.close()
    for path in (empty, old):
        server = serve(path)
        try:
            status, html = get(server, "/changes")
            assert status == 200 and 'id="no-changes"' in html
        finally:
            server.shutdown()
            server.server_close()


def test_no_indexed_change_still_says_what_the_recrawl_found(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        crawl = ix.begin_crawl()
        ix.upsert("http://t/1", "T", "x", change="unchanged", crawl_id=crawl)
        ix.end_crawl(crawl, {"change/significant": 2, "change/unchanged": 1})
    server = serve(path)
    try:
        html = get(server, "/changes")[1]
        assert 'id="no-changes">no significant change of a relevant page' in html
        assert "the last recrawl found 2 on pages that are not relevant" in html
    finally:
        server.shutdown()
        server.server_close()
