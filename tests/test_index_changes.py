"""The index carries each page's last significant change: stored, kept, migrated, exported."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.change import compare
from focuscrawl.index import PageIndex
from focuscrawl.index.export import bulk_lines, es_mapping
from focuscrawl.index.schema import MAX_DIFF_CHARS, SCHEMA_VERSION, diff_json
from focuscrawl.items import PageItem
from focuscrawl.pipelines.index import IndexPipeline

URL = "http://shop.test/boards"
OLD = (
    "<html><head><title>Boards</title></head><body><main><h1>Boards</h1>"
    "<p>The Quartz64 board costs 59,99 € and ships in May from our warehouse.</p>"
    '<ul><li><a href="/q64">Quartz64 model A</a></li><li><a href="/star">Star64</a></li></ul>'
    "</main></body></html>"
)
NEW = OLD.replace("59,99 €", "64,99 €").replace(
    '<li><a href="/star">Star64</a></li>',
    '<li><a href="/star">Star64</a></li><li><a href="/ox">Ox64 &lt;script&gt;</a></li>',
)

# the index schema of the first release (before pages carried their last change)
SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, title TEXT NOT NULL DEFAULT '',
    relevance REAL NOT NULL DEFAULT 0, authority REAL NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0, fetched_at REAL NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL DEFAULT 0, change TEXT NOT NULL DEFAULT ''
);
CREATE VIRTUAL TABLE pages_fts USING fts5(
    title, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE crawls (
    id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, counts TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO meta VALUES ('schema', '1');
INSERT INTO pages(id, url, title, fetched_at, change) VALUES (1, 'http://old/1', 'Heron', 5, 'new');
INSERT INTO pages_fts(rowid, title, body) VALUES (1, 'Heron', 'grey heron by the river');
"""


def real_diff() -> dict[str, object]:
    change = compare(OLD, NEW, URL)
    assert change.status == "significant"
    return change.to_dict()


def test_a_significant_change_is_the_pages_last_change_until_the_next() -> None:
    diff = real_diff()
    assert any("64,99" in a for a in diff["added"]) and diff["items_added"]  # type: ignore[union-attr]
    ix = PageIndex.open(":memory:")
    ix.upsert(URL, "Boards", "old text", fetched_at=10.0, change="new")
    assert ix.last_changes() == (0, [])  # a new page has no change yet
    ix.upsert(
        URL, "Boards", "new text", fetched_at=20.0, change="significant", diff=diff, crawl_id=3
    )
    ix.upsert("http://t/other", "Other", "x", fetched_at=21.0, change="new", crawl_id=3)
    crawl, changes = ix.last_changes()
    assert crawl == 3 and [c["url"] for c in changes] == [URL]
    assert changes[0]["change_diff"] == diff and changes[0]["changed_at"] == 20.0
    # a later update without a diff (e.g. a crawl without change detection) keeps it
    ix.upsert(URL, "Boards", "newer text", fetched_at=30.0, change="")
    (page,) = [p for p in ix.pages() if p["url"] == URL]
    assert (
        page["change_diff"] == diff and page["changed_at"] == 20.0 and page["text"] == "newer text"
    )
    # the next significant change, in a later crawl, replaces it
    ix.upsert(URL, "Boards", "t", fetched_at=40.0, change="significant", diff={"status": "significant", "added": ["x"]}, crawl_id=4)  # fmt: skip
    assert ix.last_changes()[0] == 4 and ix.count_changes(3) == 0 and ix.count_changes(4) == 1
    ix.close()


def test_stored_diff_is_bounded_and_valid_json() -> None:
    huge = {"status": "significant", "added": ["a" * 200] * 20, "moved": ["m" * 200] * 400}
    text = diff_json(huge)
    assert len(text) <= MAX_DIFF_CHARS
    back = json.loads(text)
    assert back["added"] == huge["added"] and len(back["moved"]) < 400  # moves go first
    hostile = {"status": "significant", "added": ["x" * 10**6] * 10**5, "items_added": [{"text": "y" * 10**6, "url": 1}] * 10**4}  # fmt: skip
    back = json.loads(diff_json(hostile))  # clipped first: linear work, valid JSON
    assert len(diff_json(hostile)) <= MAX_DIFF_CHARS and back["status"] == "significant"


def test_schema_1_index_is_read_as_is_and_migrated_when_written(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_1)
    conn.close()
    with PageIndex.open(path, readonly=True) as ro:  # serve reads an old index: no change columns
        assert not ro.has_diff
        assert ro.last_changes() == (0, [])
        (page,) = list(ro.pages())
        assert page["title"] == "Heron" and page["change_diff"] == {}
        assert [h.url for h in ro.search("heron").hits] == ["http://old/1"]
    with PageIndex.open(path) as ix:  # a crawl writes it: migrated in place, nothing lost
        assert ix.has_diff
        ix.upsert("http://old/1", "Heron", "grey heron, now nesting", change="significant", diff=real_diff(), crawl_id=2)  # fmt: skip
    with PageIndex.open(path, readonly=True) as ro:
        schema = ro.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        assert int(schema) == SCHEMA_VERSION == 2
        assert ro.last_changes()[1][0]["url"] == "http://old/1"
        assert [h.url for h in ro.search("nesting").hits] == ["http://old/1"]


def test_export_carries_the_last_change_within_the_strict_mapping() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert(URL, "Boards", "text", fetched_at=20.5, change="significant", diff=real_diff(), crawl_id=1)  # fmt: skip
    ix.upsert("http://t/plain", "Plain", "text", change="new")
    docs = [json.loads(x) for x in bulk_lines(ix.pages())][1::2]
    changed, plain = docs
    assert changed["changed_at"] == 20500
    assert changed["change_diff"]["items_added"][0]["url"].endswith("/ox")
    assert "change_diff" not in plain and "changed_at" not in plain
    props = es_mapping()["mappings"]["properties"]
    assert set(changed) <= set(props)
    assert set(changed["change_diff"]) <= set(props["change_diff"]["properties"])
    ix.close()


def test_pipeline_stores_the_diff_of_significant_items_only(tmp_path: Path) -> None:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_DATA_DIR": str(tmp_path)})
    crawler.stats.open_spider()
    pipe = build_from_crawler(IndexPipeline, crawler)
    pipe.open_spider()
    diff = real_diff()

    def item(url: str, change: str) -> PageItem:
        return PageItem(url=url, title="T", text="words", relevant=True, relevance=0.8,
                        fetched_at=50.0, change=change, change_diff=diff)  # fmt: skip

    pipe.process_item(item(URL, "significant"))
    pipe.process_item(item("http://t/new", "new"))  # a new page: no last change
    pipe.close_spider()
    with PageIndex.open(tmp_path / "index.sqlite", readonly=True) as ix:
        crawl, changes = ix.last_changes()
        assert crawl == ix.crawls(1)[0]["id"]
        assert [(c["url"], c["change_diff"], c["changed_at"]) for c in changes] == [
            (URL, diff, 50.0)
        ]
