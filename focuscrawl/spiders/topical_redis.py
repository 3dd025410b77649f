"""``scrapy crawl topical_redis``: the topical spider as one worker of a Redis cluster.

The first worker is started like the local spider and publishes the topic to Redis::

    scrapy crawl topical_redis -a topic=birds.toml -s REDIS_URL=redis://host:6379/0

Any later worker joins the running crawl with one command, reading topic and seeds from Redis
(``<prefix>:topic``; prefix ``focuscrawl:topical_redis`` by default)::

    scrapy crawl topical_redis -s REDIS_URL=redis://host:6379/0

All workers share the frontier (so seeds pushed twice are de-duplicated), the per-host
politeness and the stats. They also share the seed and example pages: whichever worker
fetches one adds it to ``<prefix>:calib``, and every other worker judges it too (topic-model
text and term statistics, seed-relevance scale, auto threshold), so a worker that never
fetched a seed judges pages as the one that did (without it, a joining worker kept the
uncalibrated threshold and judged almost nothing relevant). A worker stays up while the cluster still has queued or in-flight
URLs (others may add links, or a dead worker's leases may come back); the crawl ends when the
frontier is empty and nothing is in flight, checked on two idle rounds in a row.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Coroutine, Iterator
from typing import Any

from scrapy import Spider, signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from scrapy.http import Response, TextResponse

from focuscrawl import defaults
from focuscrawl.blocks.model import Page
from focuscrawl.blocks.partition import partition
from focuscrawl.cluster.state import frontier_counts, publish_topic, read_topic, worker_id
from focuscrawl.credentials import RedisAuthError, redact_text
from focuscrawl.frontier.connection import connect, redis_cluster
from focuscrawl.frontier.factory import redis_url
from focuscrawl.frontier.state import RequestState, state_of
from focuscrawl.frontier.trust import BadEntry, check_url
from focuscrawl.relevance.judge import Judgement
from focuscrawl.spiders.topical import TopicalSpider
from focuscrawl.terminal import terminal_line
from focuscrawl.topic import Topic, TopicError, load_topic

logger = logging.getLogger(__name__)
MAX_SHARED_PAGE = 2 << 20  # seed pages larger than this are not shared (bytes)


class TopicalRedisSpider(TopicalSpider):
    name = "topical_redis"

    def __init__(self, topic: str | None = None, seeds: str | None = None, **kwargs: Any) -> None:
        # no I/O here: a joining worker gets its topic from Redis when the spider opens; until
        # then it holds a placeholder (never crawled: setup() replaces it)
        self.local_topic: Topic | None = load_topic(topic, seeds) if topic else None
        if topic:
            super().__init__(topic, seeds, **kwargs)
        else:
            super().__init__("joining", "http://joining.invalid/", **kwargs)
        self.idle_rounds = 0
        self.prefix = ""
        self._client: Any = None
        self._worker = ""
        self._calib_read = 0  # records of <prefix>:calib read so far
        self._unshared: list[str] = []  # this worker's seed pages not in <prefix>:calib yet
        self._calib_next = 0.0  # monotonic time of the next look at <prefix>:calib
        self._url = ""  # the Redis URL: printed only through redact_url / redact_text
        self._bad_kinds: set[str] = set()  # kinds of bad calibration records logged so far

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TopicalRedisSpider:
        spider: TopicalRedisSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.spider_idle, signals.spider_idle)
        crawler.signals.connect(spider.spider_closed_redis, signals.spider_closed)
        return spider

    @property
    def model(self) -> Any:
        """The topic model; None while a joining worker waits for the topic (Scrapy's feed
        exporter reads every attribute of the spider as it opens)."""
        judge = getattr(self, "page_judge", None)
        return judge.model if judge is not None else None

    def setup(self, spider: Spider) -> Coroutine[Any, Any, None] | None:  # type: ignore[override]
        import redis

        s = self.crawler.settings
        url = redis_url(s)
        if not url:
            raise NotConfigured("topical_redis needs REDIS_URL (or FOCUSCRAWL_REDIS_URL)")
        self.prefix = (s.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s") % {
            "spider": self.name
        }
        self._url = url
        self._client = connect(url, redis_cluster(s))  # a RedisCluster on a cluster
        if self.local_topic is not None:
            try:
                published = publish_topic(self._client, self.prefix, self.local_topic)
                shared = None if published else read_topic(self._client, self.prefix)
            except redis.AuthenticationError as exc:
                raise self._auth_failed(exc) from None
            except TopicError as exc:  # someone else's topic is there: this worker uses its own
                logger.warning("Redis holds an unusable topic for this crawl (%s)", exc)
                shared = None
            if shared is not None and shared.name != self.local_topic.name:
                logger.warning(
                    "Redis already holds topic %r for this crawl; this worker uses %r",
                    terminal_line(shared.name)[:200], self.local_topic.name,
                )  # fmt: skip
            self.topic = self.local_topic
            self._finish_setup(spider)
            return None
        try:
            if self._client.exists(f"{self.prefix}:topic"):
                self._join_now(spider)
                return None
        except redis.AuthenticationError as exc:
            raise self._auth_failed(exc) from None
        except redis.RedisError:
            pass
        # spider_opened waits for this coroutine: nothing is popped before the topic is known
        return self._join(spider)

    async def _join(self, spider: Spider) -> None:
        """Wait (with back-off, up to ``FOCUSCRAWL_REDIS_RETRY_TIMEOUT``) until the crawl's topic
        is in Redis, then set up with it: workers may start in any order (scrapyd starts the
        jobs it is given at once)."""
        import asyncio

        import redis

        timeout = defaults.read(self.crawler.settings, "FOCUSCRAWL_REDIS_RETRY_TIMEOUT")
        waited, delay = 0.0, 0.25
        while True:
            try:
                if self._client.exists(f"{self.prefix}:topic"):
                    break
                reason = "no topic yet (the first worker brings it: -a topic=... -a seeds=...)"
            except redis.AuthenticationError as exc:
                raise self._auth_failed(exc) from None
            except redis.RedisError as exc:
                reason = f"Redis unreachable ({redact_text(str(exc), self._url)})"
            if waited >= timeout:
                logger.error("No topic for crawl %s after %.0fs: stopping", self.prefix, waited)
                raise CloseSpider("no_topic")
            logger.warning("Waiting to join crawl %s: %s", self.prefix, reason)
            await asyncio.sleep(delay)  # Scrapy's asyncio reactor runs this coroutine
            waited += delay
            delay = min(delay * 2, 5.0)
        self._join_now(spider)

    def _join_now(self, spider: Spider) -> None:
        try:
            self.topic = read_topic(self._client, self.prefix)
        except TopicError as exc:  # checked as a local topic is: nothing else is crawled
            logger.error("Cannot join crawl %s: %s", self.prefix, terminal_line(str(exc))[:500])
            raise CloseSpider("bad_topic") from None
        logger.info(
            "Joined crawl %s: topic %r from Redis", self.prefix, terminal_line(self.topic.name)
        )
        self._finish_setup(spider)

    def _auth_failed(self, exc: Exception) -> CloseSpider:
        """Redis refused the credentials: the scheduler said so in one line when it opened the
        frontier; the spider stops without a second one."""
        logger.debug("%s", RedisAuthError(self._url, exc))
        return CloseSpider("redis_auth")

    def _finish_setup(self, spider: Spider) -> None:
        super().setup(spider)
        self._worker = (
            f"{worker_id()}:{uuid.uuid4().hex[:8]}"  # one per spider, even in one process
        )

    def judge_page(self, page: Page, state: RequestState) -> Judgement:
        """Judge the seed pages other workers fetched first, so this page is judged on the
        crawl's shared calibration."""
        self._replay_calibration()
        return super().judge_page(page, state)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        state = state_of(response.meta) or RequestState()
        if (state.seed or state.example) and not state.revisit:
            self._share_calibration(response, "seed" if state.seed else "ex")
        yield from super().parse(response, **kwargs)

    # -- seed calibration shared by the workers -------------------------------------------
    def _share_calibration(self, response: Response, kind: str) -> None:
        """Give the other workers this seed or example page, to judge it as this one does."""

        if not isinstance(response, TextResponse) or len(response.body) > MAX_SHARED_PAGE:
            return
        record = {"w": self._worker, "kind": kind, "url": response.url, "html": response.text}
        self._unshared.append(json.dumps(record))
        self._send_shared()

    def _send_shared(self) -> None:
        """Send the seed pages not shared yet; kept (sent again before the next judgement)
        while Redis is away or a cluster fails over."""
        import redis

        if not self._unshared:
            return
        try:
            self._client.rpush(f"{self.prefix}:calib", *self._unshared)
        except redis.RedisError as exc:
            logger.warning(
                "Seed page not shared through Redis yet (sent again later): %s",
                redact_text(str(exc), self._url),
            )
            return
        self._unshared = []

    def _replay_calibration(self) -> None:
        """Judge the seed and example pages other workers fetched, as if this worker had: the
        topic model learns their text and term statistics, and the seed scale and the auto
        threshold follow. Looked up before every judgement until a seed is known, then every
        5 s."""
        import redis

        self._send_shared()
        now = time.monotonic()
        if now < self._calib_next:
            return
        try:
            raw = self._client.lrange(f"{self.prefix}:calib", self._calib_read, -1)
        except redis.RedisError as exc:
            logger.warning("Seed pages not read from Redis: %s", redact_text(str(exc), self._url))
            raw = []
        self._calib_read += len(raw)
        for item in raw:
            record = self._calibration_record(item)
            if record is None or record["w"] == self._worker:
                continue
            page = partition(record["html"], record["url"])
            if not page.error:
                kind = record["kind"]
                # as this worker judges its own seed pages (not through the replaying override)
                super().judge_page(page, RequestState(seed=kind == "seed", example=kind == "ex"))
        self._calib_next = now + (5.0 if self.page_judge.seed_scores else 0.0)

    def _calibration_record(self, item: bytes) -> dict[str, str] | None:
        """A ``P:calib`` record as another worker writes it, else None (counted, logged once
        per kind): a seed or example page of an http(s) URL, its HTML no larger than a worker
        shares."""
        try:
            record = json.loads(item)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            return self._bad_calibration("json")
        if record.get("kind") not in ("seed", "ex"):
            return self._bad_calibration("kind")
        html, url = record.get("html"), record.get("url")
        if not isinstance(html, str) or len(html) > MAX_SHARED_PAGE:
            return self._bad_calibration("html")
        try:
            check_url(url)
        except BadEntry:
            return self._bad_calibration("url")
        return {"w": str(record.get("w")), "kind": record["kind"], "url": url, "html": html}

    def _bad_calibration(self, kind: str) -> None:
        stats = self.crawler.stats
        stats.inc_value("focuscrawl/skip/bad_calibration_entry")
        stats.inc_value(f"focuscrawl/skip/bad_calibration_entry/{kind}")
        if kind not in self._bad_kinds:
            self._bad_kinds.add(kind)
            logger.warning(
                "Ignored a seed page in %s:calib this crawler did not write (bad %s); others "
                "of this kind are only counted",
                self.prefix, kind,
            )  # fmt: skip
        return None

    def spider_idle(self, spider: Spider) -> None:
        import redis

        try:
            queued, in_flight = frontier_counts(self._client, self.prefix)  # over its shards
        except redis.RedisError as exc:  # Redis down: stay up, the crawl resumes with it
            logger.error(
                "Redis unreachable while idle (%s); waiting for it",
                redact_text(str(exc), self._url),
            )
            raise DontCloseSpider from None
        if queued or in_flight:
            self.idle_rounds = 0
            raise DontCloseSpider
        self.idle_rounds += 1
        if self.idle_rounds < 2:  # a worker may be between its ack and pushing its links
            raise DontCloseSpider
        logger.info("Cluster frontier empty and nothing in flight: this worker stops")

    def spider_closed_redis(self, spider: Spider) -> None:
        if self._client is not None:
            self._client.close()
