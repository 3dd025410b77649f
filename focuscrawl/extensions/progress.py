"""Scrapy's periodic "Crawled N pages" line, extended with relevant pages and harvest rate."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.logstats import LogStats

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class HarvestLogStats(LogStats):
    """Replaces ``scrapy.extensions.logstats.LogStats`` (the add-on swaps them)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HarvestLogStats:
        interval = crawler.settings.getfloat("FOCUSCRAWL_PROGRESS_INTERVAL")
        if not interval:
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: FOCUSCRAWL_PROGRESS_INTERVAL is 0")
            raise NotConfigured
        ext = cls(crawler.stats, interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def log(self, spider: Spider) -> None:
        self.calculate_stats()
        get = self.stats.get_value
        judged = get("focuscrawl/harvest/pages", 0)
        relevant = get("focuscrawl/harvest/relevant", 0)
        queued = (
            get("focuscrawl/frontier/enqueued", 0)
            + get("focuscrawl/frontier/requeued", 0)
            - get("focuscrawl/frontier/dequeued", 0)
        )
        logger.info(
            "Crawled %d pages (at %d pages/min), %d judged, %d relevant "
            "(harvest rate %.3f), %d queued",
            self.pages,
            self.prate,
            judged,
            relevant,
            relevant / judged if judged else 0.0,
            max(queued, 0),
            extra={"spider": spider},
        )
