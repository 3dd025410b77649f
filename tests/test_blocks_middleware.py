"""PartitionMiddleware: one parse per HTML response, the Page in meta, every skip counted."""

from __future__ import annotations

import gzip

import pytest
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.blocks import Page
from focuscrawl.middlewares.partition import PAGE_META, PartitionMiddleware

URL = "http://example.org/page"
HTML = b"<html><body><p>Some words about herons, egrets and bitterns. " + b"x " * 40
HTML += b'<a href="/next">next heron page</a> and more words after it.</p></body></html>'


def _mw(**settings: object) -> tuple[PartitionMiddleware, dict]:
    crawler = get_crawler(settings_dict=settings)
    mw = build_from_crawler(PartitionMiddleware, crawler)
    assert crawler.stats is not None
    return mw, crawler.stats.get_stats()


def _run(mw: PartitionMiddleware, response: Response) -> Page | None:
    request = response.request or Request(response.url)
    out = mw.process_response(request, response)
    assert out is response
    return request.meta.get(PAGE_META)


def test_html_response_gets_a_page_with_settings_applied() -> None:
    mw, stats = _mw(FOCUSCRAWL_LINK_CONTEXT_LEVELS=2, FOCUSCRAWL_LINK_CONTEXT_WORDS=3)
    request = Request(URL)
    response = HtmlResponse(URL, body=HTML, encoding="utf-8", request=request)
    page = _run(mw, response)
    assert page is not None and response.meta[PAGE_META] is page  # the spider reads this
    assert page.links[0].url == "http://example.org/next"
    assert page.links[0].context == "x x x and more words"
    assert stats["focuscrawl/partition/pages"] == 1


@pytest.mark.parametrize(
    ("response", "case"),
    [
        (Response(URL, body=b"\x89PNG...."), "non_html"),
        (TextResponse(URL, body=b"plain text", headers={"Content-Type": "text/plain"}), "non_html"),
        (HtmlResponse(URL, body=b"   "), "empty"),
        (HtmlResponse(URL, body=gzip.compress(HTML)), "binary"),
        (HtmlResponse(URL, body=HTML, status=404), "status"),
    ],
)
def test_skips_are_counted_and_get_no_page(response: Response, case: str) -> None:
    mw, stats = _mw()
    assert _run(mw, response) is None
    assert stats[f"focuscrawl/partition/{case}"] == 1
    assert "focuscrawl/partition/pages" not in stats


def test_big_bodies_are_truncated_then_parsed() -> None:
    mw, stats = _mw(FOCUSCRAWL_MAX_PAGE_BYTES=120)
    page = _run(mw, HtmlResponse(URL, body=HTML, encoding="utf-8"))
    assert page is not None and "herons" in page.main_text
    assert page.links == []  # the anchor was past the cut
    assert stats["focuscrawl/partition/truncated"] == 1


def test_an_unexpected_failure_is_counted_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    import focuscrawl.middlewares.partition as module

    def boom(*args: object, **kwargs: object) -> Page:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(module, "partition", boom)
    mw, stats = _mw()
    assert _run(mw, HtmlResponse(URL, body=HTML)) is None
    assert stats["focuscrawl/partition/error"] == 1


def test_budget_cuts_are_counted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    mw, stats = _mw(FOCUSCRAWL_MAX_LINKS_PER_PAGE=3)
    links = b"".join(b'<a href="/l%d">heron %d</a> ' % (i, i) for i in range(10))
    attrs = b" ".join(b"a%d=x" % i for i in range(300))  # past rules.MAX_ATTRIBUTES
    body = HTML.replace(b"</body>", b"<p " + attrs + b">" + links + b"</p></body>")
    with caplog.at_level("INFO", logger="focuscrawl.middlewares.partition"):
        page = _run(mw, HtmlResponse(URL, body=body, encoding="utf-8"))
    assert page is not None and "herons" in page.main_text and len(page.links) == 3
    assert page.cuts == {"attributes": 44, "links": 8}
    assert stats["focuscrawl/skip/links"] == 1 and stats["focuscrawl/skip/attributes"] == 1
    assert stats["focuscrawl/skip/links_dropped"] == 8
    assert stats["focuscrawl/partition/pages"] == 1  # a cut page is still a page
    lines = [r.getMessage() for r in caplog.records if "budgets" in r.getMessage()]
    assert lines == [f"page cut by the partition's budgets: {URL} (attributes 44, links 8)"]


def test_an_ordinary_page_has_no_cuts() -> None:
    mw, stats = _mw()
    page = _run(mw, HtmlResponse(URL, body=HTML, encoding="utf-8"))
    assert page is not None and page.cuts == {}
    assert not any(key.startswith("focuscrawl/skip/") for key in stats)
