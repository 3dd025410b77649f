"""Sitemaps, robots.txt ``Sitemap:`` lines and RSS/Atom feeds, read as hostile input.

    result = parse_signals(chunks, "https://example.org/sitemap.xml", accept=url_filter)
    result.kind          # "urlset" | "sitemapindex" | "rss" | "atom" | "unknown"
    result.entries       # [SignalEntry(url, lastmod, changefreq, title)] pages (or sitemaps)
    result.counts        # what was cut or refused: {"truncated_bytes": 1, "refused": 3, ...}

Everything is bounded (:class:`SignalLimits`): the body is read as a stream of chunks, gzip
(detected by its magic bytes) is decompressed with a cap on the *output* checked while
decompressing, so a gzip bomb stops at the cap; lxml parses incrementally with entities,
DTDs, the network and huge trees off, each finished element is dropped at once, elements nested
deeper than a cap are ignored, and at most ``max_entries`` entries are kept — the parse stops
reading there. Every URL goes through ``accept`` (scheme, length, the address policy and the
crawl's scope, see :func:`url_filter`); a refusal is counted, never raised. A malformed document
keeps the entries read before the error and counts ``malformed``.

Where the documents come from (robots.txt ``Sitemap:`` lines, a page's feed links) and the walk
of sitemap indexes are :mod:`focuscrawl.change.sitemap_sources`.

No Scrapy, no network: the spider fetches, this module reads.
"""

from __future__ import annotations

import ipaddress
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

from lxml import etree

from focuscrawl.netguard import AddressPolicy, literal_address

KINDS = ("urlset", "sitemapindex", "rss", "atom", "unknown")
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 64 * 1024
_MAX_TEXT = 4096  # characters kept of one element's text (a <loc>, a <title>)


@dataclass(frozen=True, slots=True)
class SignalLimits:
    """Caps on one sitemap or feed, and on one crawl's walk of sitemap indexes.

    The sitemaps protocol's own limits are 50,000 URLs and 50 MB uncompressed per file."""

    max_bytes: int = 50 * 1024 * 1024  # decompressed bytes read of one document
    max_entries: int = 50_000  # entries kept of one document
    max_xml_depth: int = 8  # element nesting within one document
    max_url_chars: int = 2048
    max_index_depth: int = 3  # sitemap index → index → … nesting
    max_sitemaps: int = 1000  # sitemap documents one crawl reads
    max_robots_sitemaps: int = 64  # Sitemap: lines kept of one robots.txt
    max_feed_links: int = 8  # feed <link>s kept of one HTML page


DEFAULT_LIMITS = SignalLimits()


@dataclass(frozen=True, slots=True)
class SignalEntry:
    """One URL a sitemap or feed names, with what it says about the URL's last change."""

    url: str
    lastmod: float | None = None  # seconds since the epoch (UTC)
    changefreq: str | None = None
    title: str = ""  # a feed entry's title (an anchor text for scoring)


@dataclass
class SignalResult:
    url: str
    kind: str = "unknown"
    entries: list[SignalEntry] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def is_index(self) -> bool:
        return self.kind == "sitemapindex"


#: ``accept(url)`` → ``None`` to keep the URL, or the reason it is refused (a count name)
UrlFilter = Callable[[str], str | None]


# --- URL filtering ------------------------------------------------------------------------------
def url_filter(
    policy: AddressPolicy | None = None,
    in_scope: Callable[[str], bool] | None = None,
    max_chars: int = DEFAULT_LIMITS.max_url_chars,
) -> UrlFilter:
    """The filter a crawl applies to a sitemap's URLs, as to a page's links: http(s) only, at
    most ``max_chars``, a literal address only where ``policy`` allows it (the downloader checks
    names again after DNS), and ``in_scope`` (the crawl's allowed hosts)."""
    policy = policy or AddressPolicy()

    def accept(url: str) -> str | None:
        if len(url) > max_chars:
            return "refused_long"
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError:
            return "refused_malformed"
        if parts.scheme not in ("http", "https") or not host:
            return "refused_scheme"
        ip = literal_address(host)
        if ip is not None and policy.refuses(host, ip) is not None:
            return "refused_address"
        local_name = ip is None and (host == "localhost" or host.endswith(".localhost"))
        if local_name and policy.refuses(host, ipaddress.ip_address("127.0.0.1")) is not None:
            return "refused_address"
        if in_scope is not None and not in_scope(url):
            return "refused_scope"
        return None

    return accept


def _accept_all(url: str) -> str | None:
    return None if url.startswith(("http://", "https://")) else "refused_scheme"


# --- dates --------------------------------------------------------------------------------------
_W3C = re.compile(
    r"^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?"
    r"\s*(Z|z|[+-]\d{2}:?\d{2})?)?)?)?$"
)


def parse_date(text: str | None) -> float | None:
    """A W3C datetime (sitemaps, Atom) or an RFC 822 date (RSS) as epoch seconds; ``None`` when
    it is neither (or absurd)."""
    if not text:
        return None
    text = text.strip()[:64]
    m = _W3C.match(text)
    try:
        if m:
            y, mo, d, h, mi, s, tz = m.groups()
            dt = datetime(
                int(y),
                int(mo or 1),
                int(d or 1),
                int(h or 0),
                int(mi or 0),
                int(s or 0),
                tzinfo=UTC,
            )
            seconds = dt.timestamp()
            if tz and tz not in ("Z", "z"):
                sign = 1 if tz[0] == "+" else -1
                digits = tz[1:].replace(":", "")
                seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
            return seconds
        dt = parsedate_to_datetime(text)
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


# --- bounded bytes ------------------------------------------------------------------------------
def bounded_bytes(chunks: Iterable[bytes], max_bytes: int, counts: Counter[str]) -> Iterator[bytes]:
    """The document's bytes, gunzipped when they start with the gzip magic, never more than
    ``max_bytes`` of them: the decompressor's output is capped per call, so a small bomb never
    inflates past the cap in memory. Counts ``truncated_bytes`` when cut, ``bad_gzip``."""
    left = max_bytes
    inflate: zlib._Decompress | None = None
    first = True
    for chunk in chunks:
        if not chunk:
            continue
        if first:
            first = False
            if chunk[:2] == _GZIP_MAGIC:
                inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if inflate is None:
            if len(chunk) > left:
                if left:
                    yield chunk[:left]
                counts["truncated_bytes"] += 1
                return
            left -= len(chunk)
            yield chunk
            continue
        data = chunk
        while data:
            try:
                out = inflate.decompress(data, min(left + 1, _CHUNK))
            except zlib.error:
                counts["bad_gzip"] += 1
                return
            data = inflate.unconsumed_tail
            if len(out) > left:
                if left:
                    yield out[:left]
                counts["truncated_bytes"] += 1
                return
            left -= len(out)
            if out:
                yield out
            if inflate.eof:
                return


# --- sitemaps and feeds -------------------------------------------------------------------------
_ENTRY = {"url": "urlset", "sitemap": "sitemapindex", "item": "rss", "entry": "atom"}
_ROOTS = {"urlset": "urlset", "sitemapindex": "sitemapindex", "rss": "rss", "rdf": "rss"}
_ROOTS["feed"] = "atom"
_FIELDS = frozenset(
    {"loc", "lastmod", "changefreq", "link", "title", "updated", "published", "pubdate", "date"}
)


def _local(tag: object) -> str:
    if not isinstance(tag, str):
        return ""  # a comment or processing instruction
    return tag.rsplit("}", 1)[-1].lower()


def _parser() -> etree.XMLPullParser:
    return etree.XMLPullParser(
        events=("start", "end"),
        resolve_entities=False,
        huge_tree=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        remove_comments=True,
        remove_pis=True,
    )


class _Reader:
    """The state of one streaming parse: the element path, the entry being read."""

    def __init__(
        self, result: SignalResult, base: str, limits: SignalLimits, accept: UrlFilter
    ) -> None:
        self.result = result
        self.base = base
        self.limits = limits
        self.accept = accept
        self.depth = 0
        self.entry_depth = 0  # the depth of the open entry element, 0 when none
        self.fields: dict[str, str] = {}
        self.done = False

    def event(self, action: str, elem: etree._Element) -> None:
        if action == "start":
            self.depth += 1
            name = _local(elem.tag)
            if self.depth == 1:
                self.result.kind = _ROOTS.get(name, "unknown")
                if self.result.kind == "unknown":  # HTML, an error page: read no further
                    self.result.counts["not_a_sitemap"] += 1
                    self.done = True
            elif self.depth > self.limits.max_xml_depth:
                if self.depth == self.limits.max_xml_depth + 1:
                    self.result.counts["too_deep_xml"] += 1
            elif not self.entry_depth and _ENTRY.get(name) == self.result.kind:
                self.entry_depth = self.depth
                self.fields = {}
            return
        name = _local(elem.tag)
        depth = self.depth
        self.depth -= 1
        if self.entry_depth and depth == self.entry_depth + 1 and name in _FIELDS:
            self._field(name, elem)
        elif self.entry_depth and depth == self.entry_depth:
            self.entry_depth = 0
            self._entry()
        if depth > 1 and (self.entry_depth == 0 or depth > self.entry_depth):
            # drop what is read: memory stays one entry deep whatever the document's length
            elem.clear(keep_tail=False)
            parent = elem.getparent()
            if parent is not None:
                while elem.getprevious() is not None:
                    del parent[0]

    def _field(self, name: str, elem: etree._Element) -> None:
        if name == "link" and self.result.kind == "atom":
            rel = (elem.get("rel") or "alternate").lower()
            href = elem.get("href") or ""
            if rel == "alternate" and href and "link" not in self.fields:
                self.fields["link"] = href[:_MAX_TEXT]
            return
        text = "".join(elem.itertext())[:_MAX_TEXT].strip()
        if text and name not in self.fields:
            self.fields[name] = text

    def _entry(self) -> None:
        f = self.fields
        raw = f.get("loc") or f.get("link") or ""
        if not raw:
            self.result.counts["no_url"] += 1
            return
        if len(self.result.entries) >= self.limits.max_entries:
            self.result.counts["truncated_entries"] += 1
            self.done = True
            return
        url = urljoin(self.base, raw.strip()) if self.base else raw.strip()
        why = self.accept(url)
        if why is not None:
            self.result.counts[why] += 1
            return
        stamp = f.get("lastmod") or f.get("updated") or f.get("pubdate") or f.get("date")
        stamp = stamp or f.get("published")
        lastmod = parse_date(stamp)
        if stamp and lastmod is None:
            self.result.counts["bad_date"] += 1
        freq = (f.get("changefreq") or "").lower() or None
        if freq is not None and freq not in CHANGEFREQS:
            self.result.counts["bad_changefreq"] += 1
            freq = None
        title = (
            " ".join(f.get("title", "").split())[:300]
            if self.result.kind in ("rss", "atom")
            else ""
        )
        self.result.entries.append(SignalEntry(url, lastmod, freq, title))


def parse_signals(
    chunks: Iterable[bytes] | bytes,
    url: str,
    accept: UrlFilter | None = None,
    limits: SignalLimits = DEFAULT_LIMITS,
) -> SignalResult:
    """Read one sitemap (urlset or index, gzip or not) or RSS/Atom feed from ``chunks``.

    Stops reading at the first cap reached (bytes, entries); never raises on the document's
    content. ``url`` is the document's own address (relative feed links resolve against it)."""
    if isinstance(chunks, bytes | bytearray):
        body = bytes(chunks)
        chunks = (body[i : i + _CHUNK] for i in range(0, len(body), _CHUNK))
    result = SignalResult(url)
    reader = _Reader(result, url, limits, accept or _accept_all)
    parser = _parser()
    try:
        for data in bounded_bytes(chunks, limits.max_bytes, result.counts):
            parser.feed(data)
            for action, elem in parser.read_events():
                reader.event(action, elem)
                if reader.done:
                    break
            if reader.done:
                break
        else:
            parser.close()
            for action, elem in parser.read_events():
                if reader.done:
                    break
                reader.event(action, elem)
    except etree.XMLSyntaxError:
        result.counts["malformed"] += 1
    result.counts["entries"] = len(result.entries)
    return result
