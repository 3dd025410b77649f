"""The sitemap / robots / feed reader (focuscrawl.change.sitemaps): what it reads, and every
hostile document bounded and counted, never fatal (issue 31)."""

from __future__ import annotations

import gzip
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import suppress
from http.server import BaseHTTPRequestHandler

from focuscrawl.change.sitemap_sources import SitemapWalk, feed_links, robots_sitemaps
from focuscrawl.change.sitemaps import SignalLimits, parse_date, parse_signals, url_filter
from focuscrawl.netguard import AddressPolicy
from tests.loopback_web import LoopbackWeb, loopback_web

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*entries: str) -> bytes:
    return f'<?xml version="1.0"?><urlset {NS}>{"".join(entries)}</urlset>'.encode()


def url(loc: str, lastmod: str = "", freq: str = "") -> str:
    extra = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    extra += f"<changefreq>{freq}</changefreq>" if freq else ""
    return f"<url><loc>{loc}</loc>{extra}</url>"


# --- what it reads ------------------------------------------------------------------------------
def test_urlset_with_lastmod_and_changefreq_gzip_or_not() -> None:
    doc = urlset(
        url("http://a.example/x", "2024-01-02T10:00:00+01:00", "daily"),
        url("http://a.example/y", "2024-01-03"),
        url("http://a.example/z", "not a date", "sometimes"),
    )
    for body in (doc, gzip.compress(doc)):
        r = parse_signals(body, "http://a.example/sitemap.xml", url_filter())
        assert r.kind == "urlset"
        assert [e.url for e in r.entries] == [f"http://a.example/{c}" for c in "xyz"]
        assert r.entries[0].lastmod == parse_date("2024-01-02T09:00:00Z")
        assert r.entries[0].changefreq == "daily"
        assert r.entries[1].lastmod == parse_date("2024-01-03T00:00:00Z")
        assert r.entries[2].lastmod is None and r.entries[2].changefreq is None
        assert r.counts["bad_date"] == 1 and r.counts["bad_changefreq"] == 1


def test_sitemap_index_rss_and_atom() -> None:
    index = f"<sitemapindex {NS}><sitemap><loc>/s1.xml.gz</loc><lastmod>2024-02-01</lastmod></sitemap></sitemapindex>"
    r = parse_signals(index.encode(), "http://a.example/sitemap.xml")
    assert r.is_index and [e.url for e in r.entries] == ["http://a.example/s1.xml.gz"]
    rss = (
        b"<rss version='2.0'><channel><title>Birds</title><item><title>Rare  owl seen</title>"
        b"<link>/n/1</link><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate></item></channel></rss>"
    )
    r = parse_signals(rss, "http://a.example/feed")
    assert r.kind == "rss"
    assert r.entries[0].url == "http://a.example/n/1" and r.entries[0].title == "Rare owl seen"
    assert r.entries[0].lastmod == parse_date("2024-01-02T10:00:00Z")
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><entry><title>Heron</title>'
        b'<link rel="edit" href="/edit/1"/><link href="http://a.example/e/1"/>'
        b"<updated>2024-01-02T10:00:00Z</updated></entry></feed>"
    )
    r = parse_signals(atom, "http://a.example/atom")
    assert r.kind == "atom" and r.entries[0].url == "http://a.example/e/1"
    assert r.entries[0].title == "Heron"


def test_robots_sitemap_lines_and_feed_links() -> None:
    robots = (
        "User-agent: *\nDisallow: /x\nSitemap: /s.xml # main\nSITEMAP: http://a.example/n.xml\n"
    )
    urls, counts = robots_sitemaps(robots, "http://a.example/robots.txt", url_filter())
    assert urls == ["http://a.example/s.xml", "http://a.example/n.xml"] and not counts
    html = (
        b'<html><head><link rel="stylesheet" href="/c.css">'
        b"<link rel='alternate' type='application/rss+xml' title='News' href='/rss'>"
        b'<link type="application/atom+xml" rel="alternate" href="http://a.example/atom">'
        b'<link rel="alternate" hreflang="de" href="/de/"></head></html>'
    )
    assert feed_links(html, "http://a.example/p") == [
        ("http://a.example/rss", "News"),
        ("http://a.example/atom", ""),
    ]


def test_not_a_sitemap_and_malformed_are_counted_not_raised() -> None:
    r = parse_signals(b"<html><body>hello</body></html>", "http://a.example/sitemap.xml")
    assert r.kind == "unknown" and not r.entries and r.counts["not_a_sitemap"] == 1
    cut = urlset(url("http://a.example/1"), url("http://a.example/2"))[:-20]
    r = parse_signals(cut + b"<<<", "http://a.example/s.xml")
    assert [e.url for e in r.entries] == ["http://a.example/1"] and r.counts["malformed"] == 1
    r = parse_signals(b"\x1f\x8bnot gzip at all", "http://a.example/s.xml.gz")
    assert not r.entries and r.counts["bad_gzip"] == 1


# --- hostile ------------------------------------------------------------------------------------
def test_private_addresses_and_other_schemes_are_refused_and_counted() -> None:
    doc = urlset(
        url("http://a.example/ok"),
        url("http://127.0.0.1/admin"),
        url("http://10.1.2.3/"),
        url("http://[::1]/"),
        url("http://169.254.169.254/latest/meta-data/"),
        url("http://localhost:6379/"),
        url("http://0x7f000001/"),
        url("file:///etc/passwd"),
        url("gopher://a.example/"),
        url("http://127.0.0.2/allowed"),
        url("http://b.example/out-of-scope"),
    )
    policy = AddressPolicy.parse("127.0.0.2")

    def in_scope(u: str) -> bool:
        return "b.example" not in u

    r = parse_signals(doc, "http://a.example/s.xml", url_filter(policy, in_scope))
    assert [e.url for e in r.entries] == ["http://a.example/ok", "http://127.0.0.2/allowed"]
    assert r.counts["refused_address"] == 6
    assert r.counts["refused_scheme"] == 2 and r.counts["refused_scope"] == 1
    urls, counts = robots_sitemaps(
        "Sitemap: http://192.168.0.1/s.xml\nSitemap: /ok.xml",
        "http://a.example/robots.txt",
        url_filter(policy),
    )
    assert urls == ["http://a.example/ok.xml"] and counts["refused_address"] == 1


def test_self_referencing_index_and_a_ring_stop_at_once() -> None:
    walk = SitemapWalk(SignalLimits(max_index_depth=3))
    root = "http://a.example/sitemap.xml"
    index = {
        root: f"<sitemapindex {NS}><sitemap><loc>{root}</loc></sitemap>"
        f"<sitemap><loc>http://a.example/b.xml</loc></sitemap></sitemapindex>",
        "http://a.example/b.xml": f"<sitemapindex {NS}><sitemap><loc>{root}</loc></sitemap>"
        f"<sitemap><loc>http://a.example/b.xml#again</loc></sitemap></sitemapindex>",
    }
    assert walk.admit(root, 0)
    queue, fetched = [(root, 0)], []
    while queue:
        doc, depth = queue.pop()
        fetched.append(doc)
        result = parse_signals(index[doc].encode(), doc)
        queue.extend((child, depth + 1) for child in walk.children(result, depth))
    assert fetched == [root, "http://a.example/b.xml"]
    assert walk.counts["cycle"] == 3


def test_index_nesting_and_sitemap_count_are_capped() -> None:
    walk = SitemapWalk(SignalLimits(max_index_depth=2, max_sitemaps=3))
    assert walk.admit("http://a.example/0.xml", 0)
    assert walk.admit("http://a.example/1.xml", 1)
    assert walk.admit("http://a.example/2.xml", 2)
    assert not walk.admit("http://a.example/3.xml", 3) and walk.counts["too_deep"] == 1
    assert not walk.admit("http://a.example/4.xml", 1)
    assert walk.counts["too_many_sitemaps"] == 1


def test_entities_are_not_expanded_and_deep_nesting_is_ignored() -> None:
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">'
        b'<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>http://a.example/&c;&x;</loc></url></urlset>"
    )
    r = parse_signals(laughs, "http://a.example/s.xml")
    assert all("aaaa" not in e.url and "root:" not in e.url for e in r.entries)
    deep = b"<urlset>" + b"<g>" * 50 + b"<url><loc>http://a.example/deep</loc></url>"
    deep += b"</g>" * 50 + b"<url><loc>http://a.example/top</loc></url></urlset>"
    r = parse_signals(deep, "http://a.example/s.xml", limits=SignalLimits(max_xml_depth=8))
    assert [e.url for e in r.entries] == ["http://a.example/top"]
    assert r.counts["too_deep_xml"] == 1


def gzip_gigabyte(sent: list[int]) -> Iterator[bytes]:
    """1 GiB of a sitemap's whitespace, gzipped as it is asked for (about 1 MB on the wire
    in all; never held whole): ``sent`` counts the uncompressed bytes produced."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    yield deflate.compress(f'<?xml version="1.0"?><urlset {NS}>'.encode())
    block = b" " * (1 << 20)
    for _ in range(1024):
        sent[0] += len(block)
        out = deflate.compress(block)
        if out:
            yield out
    yield deflate.flush()


def test_a_gigabyte_gzip_bomb_stops_at_the_decompressed_cap() -> None:
    sent = [0]
    limits = SignalLimits(max_bytes=8 << 20)
    r = parse_signals(gzip_gigabyte(sent), "http://a.example/s.xml.gz", limits=limits)
    assert r.counts["truncated_bytes"] == 1 and not r.entries
    assert sent[0] <= 16 << 20  # the generator was not drained: reading stopped at the cap


# --- over a loopback server: the body streams, the reader hangs up at its cap ------------------
def _stream(
    handler: BaseHTTPRequestHandler, web: LoopbackWeb, name: str, parts: Iterator[bytes]
) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/xml")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        with suppress(OSError):  # the client hung up: what the caps must make it do
            for data in parts:
                if data:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.write(b"0\r\n\r\n")
    finally:
        handler.close_connection = True
        web.hung_up[name].set()


TEN_MILLION = 10_000_000
written = {"entries": 0, "bomb": [0]}


def ten_million_entries() -> Iterator[bytes]:
    yield f'<?xml version="1.0"?><urlset {NS}>'.encode()
    for start in range(0, TEN_MILLION, 1000):
        written["entries"] = start + 1000
        yield "".join(
            f"<url><loc>http://127.0.0.1/p/{i}</loc><lastmod>2024-01-01</lastmod></url>"
            for i in range(start, start + 1000)
        ).encode()
    yield b"</urlset>"


ROUTES = {
    "/huge.xml": lambda h, w: _stream(h, w, "huge", ten_million_entries()),
    "/bomb.xml.gz": lambda h, w: _stream(h, w, "bomb", gzip_gigabyte(written["bomb"])),
}


def _read(address: str) -> Iterator[bytes]:
    with urllib.request.urlopen(address, timeout=30) as response:  # noqa: S310 (loopback)
        while chunk := response.read(64 * 1024):
            yield chunk


def test_ten_million_entries_streamed_stop_at_the_entry_cap() -> None:
    with loopback_web(["127.0.0.1"], ROUTES) as web:
        policy = AddressPolicy.parse("127.0.0.1")
        limits = SignalLimits(max_entries=20_000)
        reader = _read(web.url("127.0.0.1", "/huge.xml"))
        r = parse_signals(reader, "http://127.0.0.1/huge.xml", url_filter(policy), limits)
        reader.close()  # hang up: the server's writes fail and it stops
        assert len(r.entries) == 20_000 and r.counts["truncated_entries"] == 1
        assert r.entries[-1].url == "http://127.0.0.1/p/19999"
        assert web.hung_up["huge"].wait(30)
        assert written["entries"] < TEN_MILLION // 10


def test_a_gigabyte_gzip_bomb_over_http_stops_at_the_cap() -> None:
    with loopback_web(["127.0.0.1"], ROUTES) as web:
        reader = _read(web.url("127.0.0.1", "/bomb.xml.gz"))
        r = parse_signals(
            reader, "http://127.0.0.1/bomb.xml.gz", limits=SignalLimits(max_bytes=8 << 20)
        )
        reader.close()
        assert r.counts["truncated_bytes"] == 1
        assert web.hung_up["bomb"].wait(30)
        assert written["bomb"][0] < 1 << 30
