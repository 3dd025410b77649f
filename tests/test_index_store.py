from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.index import BM25_ONLY, PageIndex, RankWeights, combine
from focuscrawl.index.render import snippet_html, snippet_text


def test_upsert_replace_remove(tmp_path: Path) -> None:
    ix = PageIndex.open(tmp_path / "ix.sqlite")
    assert ix.upsert("http://a/1", "Eagle", "bald eagle fish", relevance=0.8) is True
    assert ix.upsert("http://a/2", "Owl", "owl night", relevance=0.7) is True
    assert len(ix) == 2
    # replace: old words gone, new words found, still one row
    assert ix.upsert("http://a/1", "Heron", "grey heron wades", relevance=0.6) is False
    assert len(ix) == 2
    assert ix.search("eagle").hits == []
    (hit,) = ix.search("heron").hits
    assert (hit.url, hit.title, hit.relevance) == ("http://a/1", "Heron", 0.6)
    assert ix.remove("http://a/1") is True
    assert ix.remove("http://a/1") is False
    assert ix.search("heron").hits == []
    assert len(ix) == 1
    ix.commit()
    ix.close()
    # persisted, and readable read-only
    ro = PageIndex.open(tmp_path / "ix.sqlite", readonly=True)
    assert [h.url for h in ro.search("owl").hits] == ["http://a/2"]
    ro.close()


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        PageIndex.open(tmp_path / "missing.sqlite", readonly=True)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    for readonly in (True, False):
        with pytest.raises(ValueError, match="not a focuscrawl index"):
            PageIndex.open(bad, readonly=readonly)
    # a path with URI-special characters opens read-only
    odd = tmp_path / "a?b#c.sqlite"
    PageIndex.open(odd).close()
    PageIndex.open(odd, readonly=True).close()


def test_relevance_reorders_equal_text_matches() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert("http://a/low", "Eagle", "eagle eagle nest", relevance=0.1)
    ix.upsert("http://a/high", "Eagle", "eagle eagle nest", relevance=0.9)
    ix.upsert("http://a/other", "Other", "unrelated words here", relevance=1.0)
    assert [h.url for h in ix.search("eagle").hits] == ["http://a/high", "http://a/low"]
    # BM25 alone: a tie in text, both found; relevance does not bring in non-matching pages
    assert {h.url for h in ix.search("eagle", weights=BM25_ONLY).hits} == {
        "http://a/high",
        "http://a/low",
    }


def test_combine_is_bm25_normalised_plus_weighted_relevance() -> None:
    w = RankWeights(relevance=0.5, authority=0.0)
    scores = combine([-4.0, -2.0], [0.0, 1.0], [0.0, 0.0], w)
    assert scores == pytest.approx([0.5 * 1.0, 0.5 * 0.5 + 0.5 * 1.0])
    assert combine([-4.0, -2.0], [0.0, 1.0], [0.0, 0.0], BM25_ONLY) == pytest.approx([1.0, 0.5])
    with pytest.raises(ValueError):
        RankWeights(relevance=0.8, authority=0.5)


def test_snippets_mark_matches_and_escape_html() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert(
        "http://a/x",
        "<script>alert(1)</script>",
        "an eagle <img src=x onerror=alert(1)> & \ue000 more",
    )
    (hit,) = ix.search("eagle").hits
    assert snippet_text(hit.snippet).startswith("an [eagle]")
    html = snippet_html(hit.snippet)
    assert "<mark>eagle</mark>" in html
    assert "<img" not in html and "&lt;img src=x" in html and "&amp;" in html
    assert html.count("<mark>") == 1  # the private-use marker in page text was stripped


def test_authority_and_crawl_bookkeeping() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert("http://a/1", "A", "eagle", relevance=0.5)
    ix.upsert("http://a/2", "B", "eagle", relevance=0.5)
    assert ix.set_authority({"http://a/2": 1.0, "http://a/none": 0.3}) == 1
    w = RankWeights(relevance=0.0, authority=0.5)
    assert [h.url for h in ix.search("eagle", weights=w).hits][0] == "http://a/2"
    # a replace without authority keeps the page's authority
    ix.upsert("http://a/2", "B", "eagle again", relevance=0.5)
    assert {h.url: h.authority for h in ix.search("eagle").hits}["http://a/2"] == 1.0
    cid = ix.begin_crawl()
    ix.end_crawl(cid, {"added": 2, "change/unchanged": 5})
    (last,) = ix.crawls(1)
    assert last["id"] == cid and last["counts"] == {"added": 2, "change/unchanged": 5}
    assert last["finished"] >= last["started"]


def test_export_pages_round_trip() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert("http://a/1", "A", "text one", relevance=0.25, depth=2, fetched_at=10.0)
    (page,) = list(ix.pages())
    assert page["url"] == "http://a/1" and page["text"] == "text one"
    assert page["relevance"] == 0.25 and page["depth"] == 2 and page["fetched_at"] == 10.0


def test_scan_cap_bounds_bm25_to_recent_and_title_matches() -> None:
    ix = PageIndex.open(":memory:")
    ix.upsert("http://a/0", "Common name", "common words")  # oldest, title match
    for i in range(1, 30):
        ix.upsert(f"http://a/{i}", f"Page {i}", "common words")
    exact = ix.search("common", limit=50, weights=RankWeights(scan_cap=0))
    assert len(exact.hits) == 30
    capped = ix.search("common", limit=50, weights=RankWeights(scan_cap=5))
    assert {h.url for h in capped.hits} == {"http://a/0"} | {f"http://a/{i}" for i in range(25, 30)}
    assert capped.hits[0].url == "http://a/0"
    # under the cap nothing changes
    few = ix.search("name", limit=50, weights=RankWeights(scan_cap=5))
    assert [h.url for h in few.hits] == ["http://a/0"]
