"""Sitemaps and feeds in a crawl: which to fetch, and what their entries become (issue 31).

The spider asks :class:`SignalDiscovery` on every fetched page: the first page of a host asks
for its robots.txt (its ``Sitemap:`` lines, else ``/sitemap.xml``), and the feeds a page links
(``<link rel="alternate" type="application/rss+xml">``, Atom) are asked for too. These are
ordinary Scrapy requests (the downloader's robots rules, address guard and size limits apply)
whose responses come back to the spider's ``parse_signals``; :mod:`focuscrawl.change.sitemaps`
reads them within its caps. A sitemap index's children are fetched through one
:class:`~focuscrawl.change.sitemap_sources.SitemapWalk` (each once, nested a few deep, a few in all).
The entries become pages of links (their URL tokens, or a feed entry's title, as anchors) that
the spider scores like any page's links; their ``lastmod`` goes to the signal store for the
recrawl. A sitemap's entries must be on the host that led to it (the sitemaps protocol's rule);
a feed's go through the link rules like any link.

Stats: ``focuscrawl/signals/<what>`` (``requested``, ``documents``, ``entries``, and every cap
or refusal the reader counted: ``truncated_bytes``, ``refused_address``, ``cycle`` …).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.change.signal_store import SignalStore
from focuscrawl.change.signals import host_of
from focuscrawl.change.sitemap_sources import (
    SitemapWalk,
    default_sitemap,
    feed_links,
    robots_sitemaps,
)
from focuscrawl.change.sitemaps import SignalEntry, SignalLimits, parse_signals, url_filter
from focuscrawl.netguard import AddressPolicy

logger = logging.getLogger(__name__)

MAX_HOSTS = 100_000  # hosts whose robots.txt this worker asked for (then it asks no more)
LINKS_PER_PAGE = 500  # entries scored as one page of links
FUTURE_SLACK = 86400.0  # a lastmod further in the future than this is a lie: not stored
_TOKENS = re.compile(r"[A-Za-z]{2,}")


def url_anchor(url: str) -> str:
    """A URL's words, as the anchor text of a link no page gave one: ``/birds/rare-owls.html``
    reads ``birds rare owls``."""
    parts = urlsplit(url)
    words = _TOKENS.findall(parts.path + " " + parts.query)
    return " ".join(w for w in words if w.lower() not in ("html", "htm", "php", "aspx"))[:200]


def entry_pages(doc_url: str, entries: list[SignalEntry]) -> Iterator[Page]:
    """The entries as pages of one content block of links each (scored like a hub's items)."""
    for start in range(0, len(entries), LINKS_PER_PAGE):
        links = [
            Link(e.url, e.title or url_anchor(e.url), "", 0, "text", 0.6)
            for e in entries[start : start + LINKS_PER_PAGE]
        ]
        text = " ".join(link.anchor for link in links)
        yield Page(doc_url, "", [Block(0, "text", text, 0.6, links=links)], links)


class SignalDiscovery:
    """Which sitemaps and feeds this worker asks for, and what their responses hold."""

    def __init__(
        self,
        limits: SignalLimits,
        policy: AddressPolicy,
        store: SignalStore | None = None,
        stats: Any = None,
    ) -> None:
        self.limits = limits
        self.policy = policy
        self.store = store
        self.stats = stats
        self.walk = SitemapWalk(limits)
        self.hosts: set[str] = set()
        self.origin: dict[str, tuple[str, int]] = {}  # document URL -> (host it serves, depth)
        self.accept = url_filter(policy, max_chars=limits.max_url_chars)

    def count(self, what: str, n: int = 1) -> None:
        if self.stats is not None and n:
            self.stats.inc_value(f"focuscrawl/signals/{what}", n)

    # --- what to ask for ----------------------------------------------------------------------
    def documents_for(self, url: str, body: bytes) -> list[str]:
        """The robots.txt of a host seen for the first time, and the feeds ``body`` links."""
        wanted: list[str] = []
        host = host_of(url)
        if host and host not in self.hosts and len(self.hosts) < MAX_HOSTS:
            self.hosts.add(host)
            parts = urlsplit(url)
            robots = f"{parts.scheme}://{parts.netloc}/robots.txt"
            self.origin[robots] = (host, 0)
            wanted.append(robots)
        for feed, _title in feed_links(body, url, self.accept, self.limits):
            # every page of a site links its feed: one asked for already is no cycle
            if feed.split("#", 1)[0] not in self.walk.seen and self.walk.admit(feed, 0):
                self.origin[feed] = ("", 0)  # a feed may name any host: the link rules decide
                wanted.append(feed)
        self.count("requested", len(wanted))
        return wanted

    # --- what came back -----------------------------------------------------------------------
    def read(self, url: str, body: bytes) -> tuple[list[str], list[SignalEntry]]:
        """``(documents to fetch next, entries)`` of a fetched robots.txt, sitemap or feed."""
        host, depth = self.origin.pop(url, (host_of(url), 0))
        self.count("documents")
        if urlsplit(url).path == "/robots.txt":
            sitemaps, counts = robots_sitemaps(
                body.decode("utf-8", "replace"), url, self.accept, self.limits
            )
            self._count_all(counts)
            sitemaps = sitemaps or [default_sitemap(url)]
            admitted = [s for s in sitemaps if self.walk.admit(s, 0)]
            for s in admitted:
                self.origin[s] = (host, 0)
            self._count_all(self.walk.counts, reset=True)
            return admitted, []
        accept = self.accept
        if host:  # a sitemap names its own host's pages only
            accept = url_filter(
                self.policy, lambda u: host_of(u) == host, self.limits.max_url_chars
            )
        result = parse_signals(body, url, accept, self.limits)
        self._count_all(result.counts)
        children = self.walk.children(result, depth)
        self._count_all(self.walk.counts, reset=True)
        for child in children:
            self.origin[child] = (host, depth + 1)
        if result.is_index:
            return children, []
        self._remember(result.entries)
        return [], result.entries

    def _remember(self, entries: list[SignalEntry]) -> None:
        if self.store is None:
            return
        horizon = time.time() + FUTURE_SLACK
        lastmods = {e.url: e.lastmod for e in entries if e.lastmod is not None}
        future = {u for u, t in lastmods.items() if t > horizon}
        self.count("future_lastmod", len(future))
        try:
            self.store.put_lastmods({u: t for u, t in lastmods.items() if u not in future})
        except Exception as exc:  # a store outage costs the signals, never the crawl
            logger.warning("signals: lastmods not stored: %s", exc)
            self.count("store_error")

    def _count_all(self, counts: Any, reset: bool = False) -> None:
        for name, n in counts.items():
            if name == "entries":
                self.count("entries", n)
            else:
                self.count(name, n)
        if reset:
            counts.clear()
