"""The crawl's question about each fetched page: is it a copy of one fetched before?

:class:`DuplicatePages` is what the spider holds (no Scrapy import): it fingerprints a page's
main text, looks it up in the :class:`~focuscrawl.dedup.index.NearDuplicateIndex`, and
remembers the first page of each kind with its relevance, so that a copy carries its
original's relevance without being judged again.
"""

from __future__ import annotations

from typing import Any, Protocol

from focuscrawl.dedup.fingerprint import TextPrint, text_print
from focuscrawl.dedup.index import Match, NearDuplicateIndex


class DuplicateIndex(Protocol):
    """A near-duplicate index: in this process, or shared through Redis."""

    def find(self, fp: TextPrint) -> Match | None: ...

    def add(self, url: str, fp: TextPrint, relevance: float = 0.0) -> bool: ...


class DuplicatePages:
    def __init__(
        self,
        bits: int = 4,
        min_words: int = 20,
        max_pages: int = 2_000_000,
        index: DuplicateIndex | None = None,
    ) -> None:
        self.index: DuplicateIndex = (
            index if index is not None else NearDuplicateIndex(bits, max_pages)
        )
        self.min_words = min_words

    @classmethod
    def from_settings(cls, settings: Any, spider_name: str = "topical") -> DuplicatePages | None:
        """None unless ``FOCUSCRAWL_DEDUP`` is on. With a Redis URL (the crawl's frontier is
        Redis) the index is shared through Redis under the crawl's prefix; call it when the
        spider opens (a Redis Cluster client connects as it is made)."""
        if not settings.getbool("FOCUSCRAWL_DEDUP"):
            return None
        bits = settings.getint("FOCUSCRAWL_DUPLICATE_BITS")
        max_pages = settings.getint("FOCUSCRAWL_DUPLICATE_MAX_PAGES")
        index: DuplicateIndex | None = None
        from focuscrawl.frontier.connection import connect, redis_cluster, redis_url

        url = redis_url(settings)
        if url:
            from focuscrawl.dedup.redis_index import RedisDuplicateIndex
            from focuscrawl.frontier.rediswire import SOCKET_TIMEOUTS

            template = settings.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s"
            client = connect(url, redis_cluster(settings), **SOCKET_TIMEOUTS)
            index = RedisDuplicateIndex(client, template % {"spider": spider_name}, bits, max_pages)
        return cls(bits, settings.getint("FOCUSCRAWL_DUPLICATE_MIN_WORDS"), max_pages, index)

    def check(self, text: str) -> tuple[Match | None, TextPrint | None]:
        """``(the page this text copies, None)``; ``(None, its print)`` for a new page, to
        :meth:`remember` once judged; ``(None, None)`` for a text too thin to compare."""
        fp = text_print(text)
        if fp.words < self.min_words:
            return None, None
        return self.index.find(fp), fp

    def remember(self, url: str, fp: TextPrint, relevance: float) -> bool:
        return self.index.add(url, fp, relevance)
