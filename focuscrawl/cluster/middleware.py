"""``ClusterPolitenessMiddleware``: the downloader middleware over :class:`.politeness.HostGate`.

Enabled when ``REDIS_URL``/``FOCUSCRAWL_REDIS_URL`` is set. Each request waits (without
blocking the reactor) for a cluster-wide slot of its host, and gives it back with its response
or failure; robots.txt responses set the host's shared ``Crawl-delay``. Place it next to the
downloader (order 990) so that retries and redirects take their own slot.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING

from scrapy import Request, Spider, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor, task
from twisted.internet.task import deferLater

from focuscrawl.cluster.politeness import HostGate
from focuscrawl.cluster.state import worker_id
from focuscrawl.crawlstop import Unfinished, engine_stopping
from focuscrawl.credentials import redact_text
from focuscrawl.frontier.base import host_of
from focuscrawl.frontier.connection import redis_cluster
from focuscrawl.frontier.factory import redis_url
from focuscrawl.meta import HOST_SLOT_META

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
RELEASE_EVERY = 0.1  # seconds a released host slot may wait for the next round trip


class ClusterPolitenessMiddleware:
    def __init__(self, crawler: Crawler, gate: HostGate, user_agent: str) -> None:
        self.crawler = crawler
        self.gate = gate
        self.user_agent = user_agent
        self._tokens = itertools.count()
        self._worker = ""
        self._flusher: task.LoopingCall | None = None
        self._release_failing = False  # a flush of host slot releases failed (logged once)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ClusterPolitenessMiddleware:
        s = crawler.settings
        url = redis_url(s)
        if not url or not s.getbool("FOCUSCRAWL_CLUSTER_POLITENESS"):
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: cluster politeness needs REDIS_URL (FOCUSCRAWL_REDIS_URL)")
            raise NotConfigured
        prefix = s.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s"
        spider_name = crawler.spidercls.name if crawler.spidercls else "crawl"
        gate = HostGate(
            url,
            prefix % {"spider": spider_name},
            concurrency=s.getint("FOCUSCRAWL_CLUSTER_HOST_CONCURRENCY")
            or s.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            delay=s.getfloat("FOCUSCRAWL_CLUSTER_HOST_DELAY") or s.getfloat("DOWNLOAD_DELAY"),
            max_delay=s.getfloat("FOCUSCRAWL_CLUSTER_MAX_CRAWL_DELAY"),
            hold=s.getfloat("DOWNLOAD_TIMEOUT") + 30.0,
            busy_ttl=0.05,  # the scheduler asks before every pop: one round trip per 50 ms
            defer_release=True,  # sent with the next acquire, or within RELEASE_EVERY seconds
            cluster=redis_cluster(s),
            shards=s.getint("FOCUSCRAWL_REDIS_SHARDS"),
        )
        mw = cls(crawler, gate, s.get("USER_AGENT") or "*")
        crawler.signals.connect(mw.spider_opened, signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signals.spider_closed)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        self.gate.open()
        self._flusher = task.LoopingCall(self._flush_releases)
        self._flusher.start(RELEASE_EVERY, now=False)
        self._worker = worker_id()
        # the scheduler's busy() can consult it: pop around hosts whose cluster slots are full
        self.crawler.focuscrawl_host_gate = self.gate  # type: ignore[attr-defined]

    def spider_closed(self, spider: Spider) -> None:
        if self._flusher is not None and self._flusher.running:
            self._flusher.stop()
        self._flush_releases()
        self.gate.close()

    def _flush_releases(self) -> None:
        import redis

        try:
            self.gate.flush()
        except redis.RedisError as exc:  # kept by the gate and sent again on the next flush
            if not self._release_failing:
                self._release_failing = True
                logger.warning(
                    "Host slots not released yet (%s); sent again until Redis answers",
                    redact_text(str(exc), self.gate.url),
                )
            return
        if self._release_failing:
            self._release_failing = False
            logger.info("Host slots released: Redis answers again")

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if _is_robots(request):
            return None
        host = host_of(request.url)
        token = f"{self._worker}:{next(self._tokens)}"
        stats = self.crawler.stats
        waited = False
        import redis  # optional dependency: imported only when the cluster is on

        outage = 0.5
        while True:
            if engine_stopping(self.crawler):  # not fetched, not acknowledged: fetched again
                raise Unfinished(f"the crawl stops before {request.url} got a host slot")
            try:
                wait = self.gate.acquire(host, token)
            except redis.RedisError as exc:  # Redis down: wait for it, never fail the request
                logger.error(
                    "Redis unreachable for host slots (%s); retrying in %.1fs",
                    redact_text(str(exc), self.gate.url),
                    outage,
                )
                wait, outage = outage, min(outage * 2, 10.0)
            if wait == 0.0:
                break
            if not waited:
                waited = True
                stats.inc_value("focuscrawl/cluster/politeness/waited")
            await maybe_deferred_to_future(deferLater(reactor, wait, lambda: None))
        request.meta[HOST_SLOT_META] = (host, token)
        return None

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        self._release(request)
        if _is_robots(request) and response.status == 200:
            self._read_crawl_delay(request, response)
        return response

    def process_exception(
        self, request: Request, exception: BaseException, spider: Spider | None = None
    ) -> None:
        self._release(request)
        return None

    def _release(self, request: Request) -> None:
        import redis

        slot = request.meta.pop(HOST_SLOT_META, None)
        if slot is not None:
            try:
                self.gate.release(*slot)
            except redis.RedisError as exc:  # the slot's own deadline frees it
                logger.warning(
                    "Host slot not released (%s); it expires by itself",
                    redact_text(str(exc), self.gate.url),
                )

    def _read_crawl_delay(self, request: Request, response: Response) -> None:
        from protego import Protego

        try:
            delay = Protego.parse(response.body.decode("utf-8", "replace")).crawl_delay(
                self.user_agent
            )
        except Exception as exc:  # a broken robots.txt must not stop the crawl
            logger.info("Unreadable robots.txt at %s: %s", request.url, exc)
            return
        if delay:
            self.gate.set_crawl_delay(host_of(request.url), float(delay))
            self.crawler.stats.inc_value("focuscrawl/cluster/politeness/crawl_delay")
            logger.info(
                "Crawl-delay %.1fs for %s (shared by the cluster)", delay, host_of(request.url)
            )


def _is_robots(request: Request) -> bool:
    return request.url.split("?", 1)[0].endswith("/robots.txt") and request.url.count("/") == 3
