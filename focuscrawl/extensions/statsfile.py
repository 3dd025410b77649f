"""``FOCUSCRAWL_STATS_FILE``: the crawl's final stats as JSON, for tools that read a crawl.

Beside Scrapy's stats it writes ``crawl_cpu_seconds``: the process's CPU time (every thread)
from ``spider_opened`` to ``spider_closed``: what the crawl itself cost, without the start-up
(imports, settings, a model's load), which a per-page figure of a short crawl would otherwise
carry as noise."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


class StatsFile:
    def __init__(self, crawler: Crawler, path: str) -> None:
        self.crawler = crawler
        self.path = Path(path)
        self._cpu_start: float | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFile:
        path = crawler.settings.get("FOCUSCRAWL_STATS_FILE")
        if not path:
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: FOCUSCRAWL_STATS_FILE is not set")
            raise NotConfigured
        ext = cls(crawler, path)
        # spider_closed runs before the stats collector clears its values
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        crawler.signals.connect(ext.spider_opened, signals.spider_opened)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self._cpu_start = time.process_time()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        assert self.crawler.stats is not None
        stats = {k: _jsonable(v) for k, v in self.crawler.stats.get_stats().items()}
        stats["finish_reason"] = reason
        if self._cpu_start is not None:
            stats["crawl_cpu_seconds"] = round(time.process_time() - self._cpu_start, 4)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(stats, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.path)
