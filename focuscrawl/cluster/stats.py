"""``ClusterStats``: each worker writes its crawl stats to Redis for ``focuscrawl status``.

Enabled when ``REDIS_URL``/``FOCUSCRAWL_REDIS_URL`` is set. Every
``FOCUSCRAWL_CLUSTER_STATS_INTERVAL`` seconds and when the spider closes, the worker's record
(``P:worker:<host:pid>``: pages, judged, relevant, harvest rate, state, timestamps) is
rewritten; ``P:workers`` lists the workers. Writes are cheap and idempotent: a Redis error only
logs (the frontier's own retry handles outages).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focuscrawl.cluster.state import worker_id, write_worker
from focuscrawl.credentials import RedisAuthError, first_report, redact_text
from focuscrawl.frontier.factory import redis_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class ClusterStats:
    def __init__(self, crawler: Crawler, url: str, prefix: str, interval: float) -> None:
        self.crawler = crawler
        self.url = url
        self.prefix = prefix
        self.interval = interval
        self.worker = ""
        self.started = 0.0
        self._client: Any = None
        self._loop: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ClusterStats:
        s = crawler.settings
        url = redis_url(s)
        if not url:
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: cluster stats need REDIS_URL (FOCUSCRAWL_REDIS_URL)")
            raise NotConfigured
        prefix = s.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s"
        name = crawler.spidercls.name if crawler.spidercls else "crawl"
        ext = cls(
            crawler, url, prefix % {"spider": name}, s.getfloat("FOCUSCRAWL_CLUSTER_STATS_INTERVAL")
        )
        crawler.signals.connect(ext.spider_opened, signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        from focuscrawl.frontier.connection import connect, redis_cluster

        self._client = connect(self.url, redis_cluster(self.crawler.settings))
        self.worker = worker_id()
        self.started = time.time()
        self.write("running")
        if self.interval > 0:
            self._loop = task.LoopingCall(self.write, "running")
            self._loop.start(self.interval, now=False)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._client is None:  # the spider failed to open before this extension did
            return
        self.write(f"finished ({reason})")
        self._client.close()
        self._client = None

    def record(self, state: str) -> dict[str, Any]:
        stats = self.crawler.stats
        assert stats is not None
        judged = int(stats.get_value("focuscrawl/harvest/pages", 0))
        relevant = int(stats.get_value("focuscrawl/harvest/relevant", 0))
        return {
            "state": state,
            "pages": int(stats.get_value("focuscrawl/pages", 0)),
            "judged": judged,
            "relevant": relevant,
            "harvest_rate": round(relevant / judged, 4) if judged else 0.0,
            "responses": int(stats.get_value("downloader/response_count", 0)),
            "started": round(self.started, 3),
            "updated": round(time.time(), 3),
        }

    def write(self, state: str) -> None:
        import redis

        try:
            write_worker(self._client, self.prefix, self.worker, self.record(state))
        except redis.AuthenticationError as exc:  # said once, by whichever component met it
            logger.log(*first_report(str(RedisAuthError(self.url, exc))))
        except redis.RedisError as exc:
            logger.warning(
                "Cluster stats not written to Redis: %s", redact_text(str(exc), self.url)
            )
