"""Bad input never raises: every case of issue 3's list returns a Page in bounded time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.blocks import Page, partition
from focuscrawl.blocks.rules import MAX_LINKS_PER_PAGE

TAGS = ["div", "p", "a", "table", "tr", "td", "ul", "li", "span", "nav", "b", "script", "style",
        "frameset", "frame", "base", "title", "br", "img", "svg"]  # fmt: skip

_fragment = st.one_of(
    st.sampled_from(TAGS).map(lambda t: f"<{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"</{t}>"),
    st.sampled_from(['<a href="', '<a href="/x">', '<base href="', '" class="nav">', "<!--",
                     "-->", "<?xml ", "&amp;", "&#0;", "&#xD800;", "<![CDATA[", "]]>", '"', "'",
                     ">", "<", "\x00", "\ufeff", "http://[::1", "style=display:none"]),
    st.text(max_size=20),
)  # fmt: skip


def _check(page: Page) -> None:
    assert isinstance(page, Page)
    for i, block in enumerate(page.blocks):
        assert block.id == i and block.kind in ("text", "link", "noise")
        assert 0.0 <= block.weight <= 1.0
    for link in page.links:
        assert link.url.startswith(("http://", "https://")) and "#" not in link.url
        assert 0.0 <= link.block_weight <= 1.0
        assert -1 <= link.block_id < len(page.blocks)
    assert isinstance(page.main_text, str)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_fragment, max_size=60).map("".join))
def test_malformed_markup_never_raises(html: str) -> None:
    _check(partition(html, "http://example.org/a/b"))


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    _check(partition(body, "http://example.org/"))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["utf-8", "latin-1", "nonsense", "utf-16", "", None]))
def test_mislabelled_encodings_never_raise(text: str, charset: str | None) -> None:
    body = f'<meta charset="{charset}"><p>{text}</p>'.encode("utf-16")
    _check(partition(body, "http://example.org/", encoding=charset))
    _check(partition(text.encode("utf-8", "surrogatepass"), "http://e.org/", encoding=charset))


@pytest.mark.parametrize("body", [b"", b"   \n\t ", "", "  "])
def test_empty_body(body: str | bytes) -> None:
    page = partition(body, "http://e.org/")
    assert page.error == "empty" and page.blocks == [] and page.links == []


@pytest.mark.parametrize(
    "body",
    [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, b"%PDF-1.7\n" + b"\x00\x01" * 500,
     b"PK\x03\x04" + b"\x00" * 100, bytes(range(256)) * 20],
)  # fmt: skip
def test_binary_bodies(body: bytes) -> None:
    page = partition(body, "http://e.org/f")
    assert page.error == "binary" and page.main_text == ""


def test_truncated_html_keeps_what_arrived() -> None:
    html = "<html><body><div><p>" + "A long paragraph of words, " * 40 + '<a href="/x">link'
    page = partition(html[:-3], "http://e.org/")
    assert "A long paragraph" in page.main_text
    assert page.links[0].url == "http://e.org/x"


def test_frameset_pages_give_their_frames_as_links() -> None:
    html = (
        "<html><frameset cols='20%,80%'><frame src='menu.html'><frame src='/main.html'>"
        "<noframes>No frames</noframes></frameset></html>"
    )
    page = partition(html, "http://e.org/site/")
    assert [link.url for link in page.links] == [
        "http://e.org/site/menu.html",
        "http://e.org/main.html",
    ]


def test_all_links_and_no_links() -> None:
    links = "".join(f'<li><a href="/p{i}">Page {i}</a></li>' for i in range(300))
    page = partition(f"<ul>{links}</ul>", "http://e.org/")
    assert len(page.links) == 300 and all(link.block_id >= 0 for link in page.links)
    # nothing but links: the main text falls back to them rather than coming out empty (issue 15)
    assert "Page 1" in page.main_text and all(not link.noise for link in page.links)
    page = partition("<p>" + "Only words, no links at all here. " * 30 + "</p>", "http://e.org/")
    assert page.links == [] and "Only words" in page.main_text


@pytest.mark.timeout(60)
def test_deep_dom_returns() -> None:
    html = "<div>" * 10_000 + "deep" + "</div>" * 10_000 + "<p>after</p>"
    _check(partition(html, "http://e.org/"))  # libxml2 stops nesting at 256: bounded work


@pytest.mark.timeout(120)
def test_twenty_megabyte_page_returns() -> None:
    para = "<p>" + "word, " * 150 + '<a href="/x">link</a></p>\n'
    html = "<html><body><div>" + para * (20 * 1024 * 1024 // len(para)) + "</div></body></html>"
    page = partition(html, "http://e.org/")
    _check(page)
    # links past the page's budget are counted, not made (tests/test_blocks_hostile.py)
    assert len(page.links) == MAX_LINKS_PER_PAGE and page.cuts["links"] > 10_000
    assert "word" in page.main_text


def test_invalid_base_and_hosts_do_not_raise() -> None:
    html = '<base href="http://[::1"><a href="x">x</a><a href="http://[bad/">y</a>'
    _check(partition(html, "http://e.org/"))


def test_xml_declaration_in_a_str() -> None:
    html = '<?xml version="1.0" encoding="iso-8859-1"?><html><body><p>Grüße</p></body></html>'
    assert "Grüße" in partition(html, "http://e.org/").main_text
