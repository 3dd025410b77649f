from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.index import PageIndex
from focuscrawl.items import PageItem
from focuscrawl.pipelines.index import IndexPipeline


def make_pipeline(tmp_path: Path, **settings: object) -> IndexPipeline:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_DATA_DIR": str(tmp_path), **settings})
    crawler.stats.open_spider()
    return build_from_crawler(IndexPipeline, crawler)


def page(n: int, change: str = "", relevant: bool = True, text: str = "") -> PageItem:
    return PageItem(
        url=f"http://t/{n}",
        title=f"Page {n}",
        relevance=0.7 if relevant else 0.1,
        relevant=relevant,
        text=text or f"common words page{n}",
        change=change,
        fetched_at=1000.0 + n,
    )


def test_default_path_is_in_data_dir_and_setting_overrides(tmp_path: Path) -> None:
    assert make_pipeline(tmp_path).path == str(tmp_path / "index.sqlite")
    other = tmp_path / "x" / "other.sqlite"
    assert make_pipeline(tmp_path, FOCUSCRAWL_INDEX_PATH=str(other)).path == str(other)
    with pytest.raises(NotConfigured):
        make_pipeline(tmp_path, FOCUSCRAWL_INDEX_ENABLED=False)


def test_first_crawl_then_recrawl(tmp_path: Path) -> None:
    pipe = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=2)
    pipe.open_spider()
    for n in range(5):
        item = page(n, change="")
        assert pipe.process_item(item) is item
    pipe.process_item(page(9, change="", relevant=False))
    pipe.close_spider()
    ix = PageIndex.open(tmp_path / "index.sqlite")
    assert len(ix) == 5 and "http://t/9" not in ix
    ix.close()

    pipe = make_pipeline(tmp_path)
    pipe.open_spider()
    pipe.process_item(page(0, "unchanged", text="must not be indexed"))
    pipe.process_item(page(1, "insignificant", text="must not be indexed"))
    pipe.process_item(page(2, "significant", text="rewritten heron"))
    pipe.process_item(page(3, "deleted"))
    pipe.process_item(page(4, "significant", relevant=False))  # left the topic
    pipe.process_item(page(7, "new", text="fresh kingfisher"))
    pipe.process_item(page(8, "new", relevant=False))
    pipe.process_item(page(10, "weird"))
    stats = pipe.stats.get_stats()  # type: ignore[union-attr]
    pipe.close_spider()

    ix = PageIndex.open(tmp_path / "index.sqlite")
    assert sorted(p["url"] for p in ix.pages()) == [
        "http://t/0",
        "http://t/1",
        "http://t/2",
        "http://t/7",
    ]
    assert ix.search("indexed").hits == []
    assert [h.url for h in ix.search("heron").hits] == ["http://t/2"]
    assert [h.url for h in ix.search("kingfisher").hits] == ["http://t/7"]
    assert ix.search("page2").hits == []  # old text of a replaced page is gone
    assert stats["focuscrawl/index/added"] == 1
    assert stats["focuscrawl/index/replaced"] == 1
    assert stats["focuscrawl/index/removed"] == 2
    assert stats["focuscrawl/index/change/unchanged"] == 1
    assert stats["focuscrawl/index/skipped/unknown_change"] == 1
    last, first = ix.crawls(2)
    assert last["counts"]["change/significant"] == 2 and first["counts"]["added"] == 5
    ix.close()


def test_plain_dict_items_work(tmp_path: Path) -> None:
    pipe = make_pipeline(tmp_path)
    pipe.open_spider()
    pipe.process_item(
        {"url": "http://t/d", "title": "Dict", "text": "dict item words", "relevant": True}
    )
    pipe.process_item({"title": "no url"})
    pipe.close_spider()
    ix = PageIndex.open(tmp_path / "index.sqlite")
    assert [h.url for h in ix.search("dict").hits] == ["http://t/d"]
