"""The topical spider's near-duplicate step (``FOCUSCRAWL_DEDUP``), kept out of the spider.

For each fetched page the spider asks :meth:`DuplicateHook.check`: the page's declared
``rel=canonical`` is read (on the page's own registrable domain only) and marked as seen in
the policy's link memory, so a later link to it is not scheduled; the main text is looked up
in the near-duplicate index. The spider exports a copy with ``duplicate_of`` and neither judges
nor expands it; a new page is remembered once judged, with its relevance.

No Scrapy import: the crawler, response and stats are used through their attributes only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.dedup.canonical import accepted_canonical, declared_canonical
from focuscrawl.dedup.fingerprint import TextPrint
from focuscrawl.dedup.index import Match
from focuscrawl.dedup.pages import DuplicatePages
from focuscrawl.frontier.urls import normalize

STATS = "focuscrawl/dedup"


@dataclass(slots=True)
class PageCopy:
    """What the index says about one fetched page."""

    hook: DuplicateHook
    url: str
    match: Match | None  # the page it copies, or None
    fp: TextPrint | None  # None: too thin to compare (never remembered)
    canonical: str  # its accepted rel=canonical, or ""

    def remember(self, relevance: float) -> None:
        """A new page, judged: the first of its kind from now on."""
        if self.fp is not None and not self.hook.pages.remember(self.url, self.fp, relevance):
            self.hook.stats.inc_value(f"{STATS}/index_full")


class DuplicateHook:
    def __init__(self, pages: DuplicatePages, memory: Any, stats: Any) -> None:
        self.pages = pages
        self.memory = memory  # the policy's LinkMemory: what is marked there is not scheduled
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any, policy: Any) -> DuplicateHook | None:
        spider = getattr(crawler, "spider", None)
        pages = DuplicatePages.from_settings(crawler.settings, getattr(spider, "name", "topical"))
        if pages is None:
            return None
        return cls(pages, policy.memory, crawler.stats)

    def check(self, response: Any, page: Page) -> PageCopy:
        canonical = self._canonical(response)
        match, fp = self.pages.check(page.main_text)
        if match is not None and match.url in (response.url, normalize(response.url)):
            # the page itself, remembered by an earlier run sharing the index (a resumed or
            # repeated crawl on the same Redis prefix, a recrawl): not a copy, known already
            match, fp = None, None
        stats = self.stats
        errors = getattr(self.pages.index, "errors", 0)
        if errors:  # the shared index could not answer (Redis): the page counted as new
            stats.set_value(f"{STATS}/redis_errors", errors)
        stats.inc_value(f"{STATS}/pages")
        if fp is None:
            stats.inc_value(f"{STATS}/thin")
        elif match is not None:
            stats.inc_value(f"{STATS}/duplicates")
            stats.inc_value(f"{STATS}/{'exact' if match.exact else 'near'}")
            stats.inc_value(f"{STATS}/links_not_followed", len(page.links))
        return PageCopy(self, response.url, match, fp, canonical)

    def _canonical(self, response: Any) -> str:
        link = response.headers.get("Link") or b""
        href = declared_canonical(response.body, link.decode("latin-1"))
        if not href:
            return ""
        canonical = accepted_canonical(href, response.url)
        if canonical is None:
            self.stats.inc_value(f"{STATS}/canonical/refused")  # another site, or unusable
            return ""
        self.stats.inc_value(f"{STATS}/canonical/accepted")
        if canonical != normalize(response.url):
            # later links to the canonical are treated as seen: this page stands for it
            self.memory.improves(canonical, math.inf)
        return canonical
