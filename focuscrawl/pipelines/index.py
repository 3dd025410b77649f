"""``IndexPipeline``: keeps the page index in step with the crawl, after change detection.

=========================  ============================================================
``item["change"]``         what the index does
=========================  ============================================================
``new``, ``significant``,  relevant page: added or replaced; irrelevant page: removed if
``""`` (no detection)      it was indexed (it left the topic), otherwise nothing
``deleted``                removed
``unchanged``,             nothing (no database access)
``insignificant``
=========================  ============================================================

Writes are committed every ``FOCUSCRAWL_INDEX_COMMIT_EVERY`` updates and when the spider closes,
when the counts of the crawl are recorded for the dashboard.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from focuscrawl.index.store import PageIndex

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

INDEXED_CHANGES = frozenset({"new", "significant", ""})
UNTOUCHED_CHANGES = frozenset({"unchanged", "insignificant"})


def index_path(settings: Any) -> str:
    """``FOCUSCRAWL_INDEX_PATH``, or ``index.sqlite`` in ``FOCUSCRAWL_DATA_DIR``."""
    explicit = settings.get("FOCUSCRAWL_INDEX_PATH") or ""
    if explicit:
        return str(explicit)
    return str(Path(settings.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data") / "index.sqlite")


class IndexPipeline:
    def __init__(
        self, path: str, commit_every: int = 200, stats: StatsCollector | None = None
    ) -> None:
        self.path = path
        self.commit_every = max(1, commit_every)
        self.stats = stats
        self.index: PageIndex | None = None
        self.crawl_id = 0
        self.counts: Counter[str] = Counter()
        self._pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IndexPipeline:
        settings = crawler.settings
        if not settings.getbool("FOCUSCRAWL_INDEX_ENABLED", True):
            raise NotConfigured("FOCUSCRAWL_INDEX_ENABLED is off")
        return cls(
            index_path(settings),
            commit_every=settings.getint("FOCUSCRAWL_INDEX_COMMIT_EVERY", 200),
            stats=crawler.stats,
        )

    def open_spider(self, spider: Spider | None = None) -> None:
        self.index = PageIndex.open(self.path)
        self.crawl_id = self.index.begin_crawl()
        logger.info("index: %s (%d pages)", self.path, len(self.index))

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.index is None:
            return
        self.index.commit()
        self.index.end_crawl(self.crawl_id, self.counts)
        logger.info("index: %d pages after this crawl (%s)", len(self.index), dict(self.counts))
        self.index.close()
        self.index = None

    def _count(self, what: str) -> None:
        self.counts[what] += 1
        if self.stats is not None:
            self.stats.inc_value(f"focuscrawl/index/{what}")

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        assert self.index is not None, "open_spider was not called"
        adapter = ItemAdapter(item)
        url = adapter.get("url")
        change = adapter.get("change") or ""
        self._count(f"change/{change or 'none'}")
        if not url:
            self._count("skipped/no_url")
            logger.warning("index: item without url skipped")
            return item
        if change in UNTOUCHED_CHANGES:
            return item
        if change == "deleted":
            if self.index.remove(url):
                self._count("removed")
        elif change in INDEXED_CHANGES:
            if adapter.get("relevant"):
                added = self.index.upsert(
                    url,
                    str(adapter.get("title") or ""),
                    str(adapter.get("text") or ""),
                    relevance=float(adapter.get("relevance") or 0.0),
                    depth=int(adapter.get("depth") or 0),
                    fetched_at=float(adapter.get("fetched_at") or 0.0),
                    change=change,
                )
                self._count("added" if added else "replaced")
            elif self.index.remove(url):
                self._count("removed")  # it left the topic
        else:
            self._count("skipped/unknown_change")
            logger.warning("index: unknown change %r for %s, skipped", change, url)
            return item
        self._pending += 1
        if self._pending >= self.commit_every:
            self.index.commit()
            self._pending = 0
        return item
