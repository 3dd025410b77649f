"""``FOCUSCRAWL_CRAWL_LOG``: one JSON line per fetched response, in fetch order."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

from focuscrawl.signals import page_fetched

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class CrawlLog:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self._fh: IO[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlLog:
        path = crawler.settings.get("FOCUSCRAWL_CRAWL_LOG")
        if not path:
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: FOCUSCRAWL_CRAWL_LOG is not set")
            raise NotConfigured
        ext = cls(path)
        crawler.signals.connect(ext.spider_opened, signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        crawler.signals.connect(ext.page_fetched, page_fetched)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # line-buffered: a killed crawl keeps every line written before the kill
        self._fh = self.path.open("a", encoding="utf-8", buffering=1)
        logger.info("Crawl log: %s", self.path)

    def page_fetched(self, record: dict[str, Any], spider: Spider) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps(record, separators=(",", ":")) + "\n")

    def spider_closed(self, spider: Spider) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
