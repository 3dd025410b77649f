"""URL canonicalisation before fetching, and ``rel=canonical`` (hostile inputs included)."""

from __future__ import annotations

import pytest

from focuscrawl.dedup.canonical import (
    HEAD_BYTES,
    accepted_canonical,
    declared_canonical,
    registrable_domain,
)
from focuscrawl.frontier.urls import TrapLimits, clean_url, normalize


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # every utm_* (not only the usual five), click ids, in any case or escape
        (
            "http://ex.test/a?utm_reader=rss&UTM_Source=x&utm%5Fname=y&fbclid=1&id=3",
            "http://ex.test/a?id=3",
        ),
        ("http://ex.test/a?gclid=1&mc_cid=2", "http://ex.test/a"),
        # query sorted by name; repeated names keep their order; empty pieces dropped
        ("http://ex.test/?b=2&a=1&b=1&&", "http://ex.test/?a=1&b=2&b=1"),
        # host case, default ports, fragment, a trailing dot, an empty port
        ("HTTPS://WWW.Ex.Test:443/P#top", "https://www.ex.test/P"),
        ("http://ex.test:80", "http://ex.test/"),
        ("http://ex.test.:8080/x", "http://ex.test:8080/x"),
        ("http://ex.test:/x", "http://ex.test/x"),
        ("https://ex.test:80/x", "https://ex.test:80/x"),  # not https's default
        # user info keeps its case; the host does not
        ("http://User:PW@EX.test/", "http://User:PW@ex.test/"),
        # percent-escapes in one case; unreserved characters unescaped; others kept
        ("http://ex.test/a%7e%2fb%41?q=%2a%7E", "http://ex.test/a~%2FbA?q=%2A~"),
        # odd encodings are left as they are, never an error
        ("http://ex.test/%zz/%e9t%C3%A9?x=%", "http://ex.test/%zz/%E9t%C3%A9?x=%"),
        ("http://ex.test/ünï/?q=✓", "http://ex.test/ünï/?q=✓"),
        ("http://[::1]:80/a", "http://[::1]/a"),
        ("http://ex.test:99999999/a", "http://ex.test:99999999/a"),
    ],
)
def test_normalize_makes_one_address_per_page(url: str, expected: str) -> None:
    assert normalize(url) == expected
    assert normalize(expected) == expected  # idempotent


def test_a_huge_query_is_handled_and_then_refused_by_length() -> None:
    query = "&".join(f"p{n}={n}&utm_x{n}=1" for n in range(20_000))
    url = f"http://ex.test/s?{query}"
    out = normalize(url)  # linear work: split, filter, one sort
    assert "utm_" not in out and out.count("&") == 19_999
    assert clean_url(url, TrapLimits()) == ("", "too_long")


def test_the_same_page_through_tracking_links_is_one_url() -> None:
    variants = [
        "http://Ex.test:80/news/1.html?utm_source=feed&utm_reader=rss1&fbclid=IwAR1x",
        "http://ex.test/news/1.html#comments",
        "http://ex.test/news/1.html?gclid=abc",
    ]
    assert {normalize(u) for u in variants} == {"http://ex.test/news/1.html"}


HEAD = b"<html><head><title>t</title>%s</head><body>%s</body></html>"


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        (b'<link rel="canonical" href="/a">', "/a"),
        (b"<LINK HREF='http://ex.test/b' REL='Canonical'>", "http://ex.test/b"),
        (b"<link rel=canonical href=/c />", "/c"),
        (b'<link rel="alternate canonical" href="/d">', "/d"),
        (b'<link rel="stylesheet" href="/s.css"><link rel="canonical" href="/e">', "/e"),
        (b'<link rel="canonicalize" href="/f">', ""),
        (b'<link rel="canonical">', ""),
    ],
)
def test_declared_canonical_is_read_from_the_head(tag: bytes, expected: str) -> None:
    assert declared_canonical(HEAD % (tag, b"")) == expected


def test_a_canonical_in_the_body_or_past_the_budget_is_not_read() -> None:
    assert declared_canonical(HEAD % (b"", b'<link rel="canonical" href="/x">')) == ""
    late = b"<html><head>" + b"<meta name=x>" * (HEAD_BYTES // 10) + b"<link rel=canonical href=/y>"
    assert declared_canonical(late) == ""
    many = HEAD % (b"<link rel=icon href=/i>" * 1000 + b"<link rel=canonical href=/z>", b"")
    assert declared_canonical(many) == ""  # only the first 200 link tags are read


def test_the_link_header_comes_first() -> None:
    header = '<https://ex.test/h>; rel="canonical", <https://ex.test/p2>; rel="next"'
    assert declared_canonical(HEAD % (b'<link rel=canonical href="/b">', b""), header) == (
        "https://ex.test/h"
    )
    assert declared_canonical(b"", '<https://ex.test/p2>; rel="next"') == ""


def test_a_link_headers_parameters_are_read_near_their_target() -> None:
    """Hostile input: a rel parameter far from its target (or a header of thousands of
    targets with no rel) is not read as that target's; the scan per target is bounded."""
    far = "<https://ex.test/far>; " + "x" * 600 + " rel=canonical"
    assert declared_canonical(b"", far) == ""
    assert declared_canonical(b"", "<a>;" * 2048) == ""
    near = "<https://ex.test/near>; " + "x" * 100 + " rel=canonical"
    assert declared_canonical(b"", near) == "https://ex.test/near"


@pytest.mark.parametrize(
    ("href", "page", "expected"),
    [
        ("/a?utm_source=x", "http://www.ex.test/b", "http://www.ex.test/a"),
        ("https://m.example.co.uk/a", "http://www.example.co.uk/b", "https://m.example.co.uk/a"),
        # another site: hostile or wrong, never taken
        ("https://bank.example.com/", "http://evil.example.org/", None),
        ("https://b.github.io/", "https://a.github.io/", None),  # a private public suffix
        ("http://127.0.0.3:8000/a", "http://127.0.0.2:8000/b", None),
        ("javascript:alert(1)", "http://ex.test/", None),
        ("http://[::1/x", "http://ex.test/", None),
        ("http://ex.test/" + "a" * 5000, "http://ex.test/", None),
        ("", "http://ex.test/", None),
    ],
)
def test_a_canonical_is_accepted_on_the_pages_own_site_only(
    href: str, page: str, expected: str | None
) -> None:
    assert accepted_canonical(href, page) == expected


def test_registrable_domains() -> None:
    assert registrable_domain("News.BBC.co.uk.") == "bbc.co.uk"
    assert registrable_domain("127.0.0.2") == "127.0.0.2"
    assert registrable_domain("intranet") == "intranet"
