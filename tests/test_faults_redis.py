"""Redis faults: an evicting policy, a Redis out of memory, a Redis away; leases renewed.

Each test runs its own real ``redis-server`` (``tests.conftest.RedisServer``), so it may
reconfigure (``CONFIG SET maxmemory``), stop and restart it. The crawls frontier and change
store are in Redis (``REDIS_URL``), breadth-first over the fault web, and are compared with one
uninterrupted local crawl of it (``fault_reference``): no page is lost.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.frontier.redis_frontier import RedisFrontier
from focuscrawl.frontier.redis_health import RedisPolicyError, check_eviction_policy
from tests.conftest import RedisServer
from tests.fault_crawl import (
    BFS,
    CrawlFacts,
    CrawlProcess,
    comparable,
    crawl_args,
    crawl_facts,
    topic_file,
)
from tests.frontier_contract import fp

PREFIX = "focuscrawl:topical"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    # AOF written at every write: a restart keeps everything (the test checks nothing is lost)
    own = RedisServer(tmp_path, appendonly=True, args=("--appendfsync", "always"))
    own.start()
    yield own
    own.stop()


def redis_crawl(web: Any, work: Path, run: int, server: RedisServer) -> CrawlProcess:
    extra = [*BFS, "-s", f"REDIS_URL={server.url}", "-s", "FOCUSCRAWL_REDIS_LEASE=5"]
    return CrawlProcess(work, "topical", crawl_args(web, topic_file(work, web), work, run, *extra))


def assert_nothing_lost(reference: CrawlFacts, facts: CrawlFacts) -> None:
    missing = comparable(reference.reached) - comparable(facts.reached)
    assert not missing, sorted(missing)[:20]
    assert facts.indexed == facts.relevant


def test_a_crawl_waits_for_entries_a_stopped_run_left_leased(
    redis_url: str, redis_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A run stopped while Redis was away (or killed) leaves its in-flight entries leased. The
    next run must not end on an empty queue while they are leased: they come back when their
    leases expire (the race CI once met: the second run ended before the first one's leases
    expired, and a page was never fetched)."""
    from scrapy.utils.test import get_crawler

    from focuscrawl.defaults import DEFAULTS
    from focuscrawl.frontier.scheduler import FocusScheduler
    from focuscrawl.spiders.topical import TopicalSpider

    prefix = "fclease:topical"
    good = {"meta": {"focuscrawl": {"d": 1, "score": 0.5}, "depth": 1}, "eb": "errback"}
    stopped = RedisFrontier(redis_url, prefix, lease=600.0)
    stopped.open()
    stopped.push("http://a.test/left", 0.9, fp("http://a.test/left"), good)
    assert stopped.pop() is not None  # in flight when that run stopped: never acknowledged
    stopped.wire.abandon()  # gone without a close: its lease stays

    settings = {**DEFAULTS, "REDIS_URL": redis_url, "FOCUSCRAWL_REDIS_PREFIX": prefix}
    crawler = get_crawler(TopicalSpider, settings)
    spider = TopicalSpider.from_crawler(crawler, topic="birds", seeds="http://a.test/")
    crawler.spider = spider
    scheduler = FocusScheduler.from_crawler(crawler)
    scheduler._busy = lambda host: False  # type: ignore[method-assign]  # no engine here
    scheduler.open(spider)
    try:
        with caplog.at_level(logging.INFO, logger="focuscrawl.frontier.scheduler"):
            assert len(scheduler) == 0 and scheduler.next_request() is None
            assert scheduler.has_pending_requests()  # leased elsewhere: the crawl waits
            assert scheduler.has_pending_requests()
        waits = [r for r in caplog.records if "leased elsewhere" in r.getMessage()]
        assert len(waits) == 1  # said once
        redis_client.zadd(f"{prefix}:lease", {fp("http://a.test/left")[:8]: 0})  # expired
        scheduler.frontier._next_requeue = 0.0  # type: ignore[union-attr]
        request = scheduler.next_request()
        assert request is not None and request.url == "http://a.test/left"
        assert not scheduler.has_pending_requests()  # held by this run now, not elsewhere
    finally:
        scheduler.close("finished")


def test_an_evicting_redis_is_refused_at_start(tmp_path: Path) -> None:
    own = RedisServer(tmp_path, args=("--maxmemory-policy", "allkeys-lru"))
    own.start()
    try:
        frontier = RedisFrontier(own.url, "focuscrawl:t")
        with pytest.raises(RedisPolicyError, match="maxmemory-policy allkeys-lru.*noeviction"):
            frontier.open()
        frontier.wire.close()
    finally:
        own.stop()


def test_a_redis_without_config_is_used_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A managed Redis refuses CONFIG (and here INFO too): the crawl cannot check, says so."""
    renamed = ("--rename-command", "CONFIG", "", "--rename-command", "INFO", "")
    own = RedisServer(tmp_path, args=renamed)
    own.start()
    try:
        client = redis.Redis.from_url(own.url)
        with caplog.at_level(logging.WARNING):
            assert check_eviction_policy(client, own.url) is None
        client.close()
        (line,) = [r.getMessage() for r in caplog.records if "maxmemory-policy" in r.getMessage()]
        assert "make sure it is noeviction" in line
    finally:
        own.stop()


def test_leases_of_entries_in_flight_are_renewed(server: RedisServer) -> None:
    frontier = RedisFrontier(server.url, "focuscrawl:t", lease=300.0)
    frontier.open()
    client = redis.Redis.from_url(server.url)
    try:
        frontier.push("http://a.test/1", 0.9, fp("1"), {})
        frontier.push("http://a.test/2", 0.5, fp("2"), {})
        held = frontier.pop()
        done = frontier.pop()
        assert held is not None and done is not None
        frontier.ack(done.fingerprint)
        before = client.zscore("focuscrawl:t:lease", held.fingerprint[:8])
        assert before is not None
        client.zadd("focuscrawl:t:lease", {held.fingerprint[:8]: before - 200})  # near its end
        frontier.renew_leases()
        frontier.flush()
        renewed = client.zscore("focuscrawl:t:lease", held.fingerprint[:8])
        assert renewed is not None and renewed > before - 200 + 150  # runs a whole lease again
        assert client.zscore("focuscrawl:t:lease", done.fingerprint[:8]) is None  # acked: left
    finally:
        frontier.close()
        client.close()


@pytest.mark.slow
def test_redis_out_of_memory_pauses_the_crawl_and_loses_no_link(
    fault_web: Any, fault_reference: CrawlFacts, server: RedisServer, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(server.url)
    crawl = redis_crawl(fault_web, tmp_path, 1, server)
    try:
        assert crawl.wait_for_pages(40), crawl.log[-3000:]
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory", used)  # full: every write that grows memory is refused
        assert crawl.wait_for("is full \\(maxmemory\\).*crawl paused"), crawl.log[-3000:]
        client.config_set("maxmemory", 0)  # memory freed
        assert crawl.wait_for("is back after"), crawl.log[-3000:]
        assert crawl.finish() == 0, crawl.log[-3000:]
    finally:
        crawl.kill()
        crawl.finish()
        client.close()
    assert "bug, not an outage" not in crawl.log
    assert_nothing_lost(fault_reference, crawl_facts(tmp_path))


@pytest.mark.slow
def test_redis_away_pauses_without_blocking_and_a_signal_still_stops_the_crawl(
    fault_web: Any, fault_reference: CrawlFacts, server: RedisServer, tmp_path: Path
) -> None:
    crawl = redis_crawl(fault_web, tmp_path, 1, server)
    try:
        assert crawl.wait_for_pages(40), crawl.log[-3000:]
        server.stop()  # Redis goes away mid-crawl
        assert crawl.wait_for("unreachable.*crawl paused"), crawl.log[-3000:]
        # the reactor is free while paused: the periodic progress line still comes, twice
        progress = r"Crawled \d+ pages"
        assert crawl.wait_for_count(progress, crawl.count(progress) + 2), crawl.log[-3000:]
        crawl.kill(signal.SIGINT)  # an operator stops it while Redis is away
        assert crawl.finish(timeout=120) == 0, crawl.log[-3000:]
    finally:
        crawl.kill()
        crawl.finish()
    assert "Traceback" not in crawl.log, crawl.log[-3000:]

    server.start()  # back, with its AOF: the same command goes on where the crawl stopped
    again = redis_crawl(fault_web, tmp_path, 2, server)
    assert again.finish() == 0, again.log[-3000:]
    assert_nothing_lost(fault_reference, crawl_facts(tmp_path))
