from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.index import PageIndex
from focuscrawl.items import PageItem
from focuscrawl.pipelines.index import IndexPipeline
from focuscrawl.pipelines.settle import Answer


def make_pipeline(tmp_path: Path, **settings: object) -> IndexPipeline:
    """The pipeline writing inline (on the caller's thread): its answers can be read at once.
    The writer thread's own tests: tests/test_index_writer.py."""
    base = {"FOCUSCRAWL_DATA_DIR": str(tmp_path), "FOCUSCRAWL_INDEX_WRITER_THREAD": False}
    crawler = get_crawler(settings_dict={**base, **settings})
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


def answered(result: object) -> list[object]:
    """What a pipeline answered so far: [] while its Deferred waits for the commit."""
    if not isinstance(result, Answer):
        return [result]
    out: list[object] = []

    def keep(value: object) -> object:
        out.append(value)
        return value

    result.deferred.addBoth(keep)
    return out


def test_default_path_is_in_data_dir_and_setting_overrides(tmp_path: Path) -> None:
    assert make_pipeline(tmp_path).path == str(tmp_path / "index.sqlite")
    other = tmp_path / "x" / "other.sqlite"
    assert make_pipeline(tmp_path, FOCUSCRAWL_INDEX_PATH=str(other)).path == str(other)
    with pytest.raises(NotConfigured):
        make_pipeline(tmp_path, FOCUSCRAWL_INDEX_ENABLED=False)


def test_first_crawl_then_recrawl(tmp_path: Path) -> None:
    pipe = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=2)
    pipe.open_spider()
    items = [page(n, change="") for n in range(5)]
    answers = [pipe.process_item(item) for item in items]
    irrelevant = page(9, change="", relevant=False)
    assert pipe.process_item(irrelevant) is irrelevant  # nothing to write: answered at once
    assert [answered(a) for a in answers[:4]] == [[i] for i in items[:4]]  # committed by two
    assert answered(answers[4]) == []  # waits for the next commit
    pipe.close_spider()
    assert answered(answers[4]) == [items[4]]
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


def test_an_item_is_answered_only_once_its_update_is_committed(tmp_path: Path) -> None:
    """The change store records a version, and the frontier acknowledges its page, only when
    the index pipeline has answered: by then another connection sees the page."""
    pipe = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=3)
    pipe.open_spider()
    reader = PageIndex.open(tmp_path / "index.sqlite", readonly=True)
    first, second = pipe.process_item(page(1)), pipe.process_item(page(2))
    assert answered(first) == answered(second) == []
    assert "http://t/1" not in reader  # not committed: nothing answered
    third = pipe.process_item(page(3))
    assert all(answered(a) for a in (first, second, third))
    assert all(f"http://t/{n}" in reader for n in (1, 2, 3))
    pipe.process_item(page(4))
    pipe.commit()  # the FOCUSCRAWL_INDEX_COMMIT_DELAY timer's call
    assert "http://t/4" in reader
    reader.close()
    pipe.close_spider()


def test_a_second_writer_waits_for_the_first(tmp_path: Path) -> None:
    """Two crawls sharing one data dir: the second's write waits for the first's short
    transaction (busy timeout) instead of failing with "database is locked"."""
    a = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=100)
    b = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=1, FOCUSCRAWL_DB_BUSY_TIMEOUT=0.2)
    a.open_spider()
    b.open_spider()
    pending = a.process_item(page(1))  # a's transaction is open
    with pytest.raises(Exception, match="locked"):
        b.process_item(page(2))  # a holds the lock past b's (short) timeout
    assert b.failed is not None and "locked" in str(b.failed)
    a.commit()
    assert answered(pending)
    c = make_pipeline(tmp_path, FOCUSCRAWL_INDEX_COMMIT_EVERY=1)
    c.open_spider()
    assert answered(c.process_item(page(3)))  # a committed: c writes at once
    c.close_spider()
    a.close_spider()
    b.close_spider()
    ix = PageIndex.open(tmp_path / "index.sqlite")
    assert {"http://t/1", "http://t/3"} <= {p["url"] for p in ix.pages()}
    ix.close()
