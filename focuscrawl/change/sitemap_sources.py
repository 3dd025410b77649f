"""Where sitemaps and feeds come from, and a crawl's walk of sitemap indexes (issue 31).

- :func:`robots_sitemaps`: the ``Sitemap:`` lines of a robots.txt (a few, filtered);
- :func:`feed_links`: the RSS/Atom feeds a page links (``<link rel="alternate" …>``);
- :class:`SitemapWalk`: which sitemap documents a crawl still reads — each once (an index that
  points to itself, or a ring, stops at once), nested a few indexes deep, a few in all.

No Scrapy, no network; the documents themselves are read by :mod:`focuscrawl.change.sitemaps`.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import urljoin, urlsplit

from focuscrawl.change.sitemaps import DEFAULT_LIMITS, SignalLimits, SignalResult, UrlFilter


def _accept_all(url: str) -> str | None:
    return None if url.startswith(("http://", "https://")) else "refused_scheme"


# --- robots.txt and HTML ------------------------------------------------------------------------
def robots_sitemaps(
    text: str,
    robots_url: str,
    accept: UrlFilter | None = None,
    limits: SignalLimits = DEFAULT_LIMITS,
) -> tuple[list[str], Counter[str]]:
    """The ``Sitemap:`` URLs of a robots.txt (at most ``max_robots_sitemaps``, filtered)."""
    accept = accept or _accept_all
    counts: Counter[str] = Counter()
    urls: list[str] = []
    for line in text[: 512 * 1024].splitlines():
        key, sep, value = line.partition(":")
        if not sep or key.strip().lower() != "sitemap":
            continue
        value = value.split("#", 1)[0].strip()
        if not value:
            continue
        if len(urls) >= limits.max_robots_sitemaps:
            counts["truncated_entries"] += 1
            break
        url = urljoin(robots_url, value)
        why = accept(url)
        if why is not None:
            counts[why] += 1
        elif url not in urls:
            urls.append(url)
    return urls, counts


_LINK_TAG = re.compile(rb"<link\b[^>]{0,2000}>", re.I)
_ATTR = re.compile(rb"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_FEED_TYPES = (b"application/rss+xml", b"application/atom+xml")


def feed_links(
    html: bytes,
    page_url: str,
    accept: UrlFilter | None = None,
    limits: SignalLimits = DEFAULT_LIMITS,
) -> list[tuple[str, str]]:
    """``(url, title)`` of the feeds a page links as ``<link rel="alternate" type="…rss+xml">``
    (or Atom), read from its first 256 KB, at most ``max_feed_links``."""
    accept = accept or _accept_all
    found: list[tuple[str, str]] = []
    for m in _LINK_TAG.finditer(html[: 256 * 1024]):
        attrs: dict[bytes, bytes] = {}
        for a in _ATTR.finditer(m.group(0)):
            attrs.setdefault(a.group(1).lower(), a.group(2) or a.group(3) or a.group(4) or b"")
        rel = attrs.get(b"rel", b"").lower().split()
        if b"alternate" not in rel or attrs.get(b"type", b"").strip().lower() not in _FEED_TYPES:
            continue
        href = attrs.get(b"href", b"").decode("utf-8", "replace").strip()
        if not href:
            continue
        url = urljoin(page_url, href)
        if accept(url) is None and all(url != u for u, _ in found):
            found.append((url, attrs.get(b"title", b"").decode("utf-8", "replace")[:300]))
            if len(found) >= limits.max_feed_links:
                break
    return found


def default_sitemap(page_url: str) -> str:
    """``/sitemap.xml`` of a page's host (asked when robots.txt names none)."""
    parts = urlsplit(page_url)
    return f"{parts.scheme}://{parts.netloc}/sitemap.xml"


# --- a crawl's walk of sitemap indexes ----------------------------------------------------------
class SitemapWalk:
    """Which sitemap documents a crawl still reads: each once, nested at most
    ``max_index_depth`` indexes deep, at most ``max_sitemaps`` in all. Counts what it refuses
    (``cycle``, ``too_deep``, ``too_many_sitemaps``) in :attr:`counts`."""

    def __init__(self, limits: SignalLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.seen: set[str] = set()
        self.counts: Counter[str] = Counter()

    def admit(self, url: str, depth: int = 0) -> bool:
        """Whether to fetch sitemap ``url`` found ``depth`` indexes below a root."""
        key = url.split("#", 1)[0]
        if key in self.seen:
            self.counts["cycle"] += 1
            return False
        if depth > self.limits.max_index_depth:
            self.counts["too_deep"] += 1
            return False
        if len(self.seen) >= self.limits.max_sitemaps:
            self.counts["too_many_sitemaps"] += 1
            return False
        self.seen.add(key)
        return True

    def children(self, result: SignalResult, depth: int) -> list[str]:
        """The sitemaps an index names that this walk admits (one level below ``depth``)."""
        if not result.is_index:
            return []
        return [e.url for e in result.entries if self.admit(e.url, depth + 1)]
