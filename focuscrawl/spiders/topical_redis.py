"""``scrapy crawl topical_redis``: the topical spider as one worker of a Redis cluster.

The first worker is started like the local spider and publishes the topic to Redis::

    scrapy crawl topical_redis -a topic=birds.toml -s REDIS_URL=redis://host:6379/0

Any later worker joins the running crawl with one command, reading topic and seeds from Redis
(``<prefix>:topic``; prefix ``focuscrawl:topical_redis`` by default)::

    scrapy crawl topical_redis -s REDIS_URL=redis://host:6379/0

All workers share the frontier (so seeds pushed twice are de-duplicated), the per-host
politeness and the stats. A worker stays up while the cluster still has queued or in-flight
URLs (others may add links, or a dead worker's leases may come back); the crawl ends when the
frontier is empty and nothing is in flight, checked on two idle rounds in a row.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Spider, signals
from scrapy.exceptions import DontCloseSpider, NotConfigured

from focuscrawl.cluster.state import publish_topic, read_topic
from focuscrawl.frontier.factory import redis_url
from focuscrawl.spiders.topical import TopicalSpider
from focuscrawl.topic import Topic, load_topic

logger = logging.getLogger(__name__)


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

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TopicalRedisSpider:
        spider: TopicalRedisSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.spider_idle, signals.spider_idle)
        crawler.signals.connect(spider.spider_closed_redis, signals.spider_closed)
        return spider

    def setup(self, spider: Spider) -> None:
        import redis

        s = self.crawler.settings
        url = redis_url(s)
        if not url:
            raise NotConfigured("topical_redis needs REDIS_URL (or FOCUSCRAWL_REDIS_URL)")
        self.prefix = (s.get("FOCUSCRAWL_REDIS_PREFIX") or "focuscrawl:%(spider)s") % {
            "spider": self.name
        }
        self._client = redis.Redis.from_url(url)
        if self.local_topic is not None:
            if not publish_topic(self._client, self.prefix, self.local_topic):
                shared = read_topic(self._client, self.prefix)
                if shared.name != self.local_topic.name:
                    logger.warning(
                        "Redis already holds topic %r for this crawl; this worker uses %r",
                        shared.name, self.local_topic.name,
                    )  # fmt: skip
            self.topic = self.local_topic
        else:
            self.topic = read_topic(self._client, self.prefix)
            logger.info("Joined crawl %s: topic %r from Redis", self.prefix, self.topic.name)
        super().setup(spider)

    def spider_idle(self, spider: Spider) -> None:
        import redis

        try:
            queued = int(self._client.get(f"{self.prefix}:n") or 0)
            in_flight = int(self._client.zcard(f"{self.prefix}:lease"))
        except redis.RedisError as exc:  # Redis down: stay up, the crawl resumes with it
            logger.error("Redis unreachable while idle (%s); waiting for it", exc)
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
