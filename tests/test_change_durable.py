"""A visit in the Redis change store is written before its page is acknowledged (issue 29).

The Redis store batches its writes (:mod:`focuscrawl.change.store_redis`); the page waits for
the batch's reply (:mod:`focuscrawl.pipelines.visit_writes`, the ``item_write_pending``
signal to the acknowledgement middleware). Against a real ``redis-server``: the ack comes after
the write, a refused write holds the page back, and a crawl SIGKILLed mid-way then resumed has
the visit of every page it fetched (an acknowledged page is not fetched again, so a visit lost
at the kill would be missing for good).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy import signals

from focuscrawl.change.store_redis import RedisChangeStore
from focuscrawl.pipelines.visit_writes import VisitWrites
from tests.conftest import RedisServer
from tests.fault_crawl import BFS, CrawlProcess, comparable, crawl_args, crawl_facts, topic_file
from tests.test_faults_ack import response, setup

URL = "http://a.test/p"


@pytest.fixture
def store(redis_url: str, redis_client: redis.Redis) -> Iterator[RedisChangeStore]:
    own = RedisChangeStore(redis_url, prefix="t:durable")
    own.open()
    yield own
    own.close()


def queued_visit(store: RedisChangeStore) -> None:
    store.get(URL)  # the read just before (the middleware's): the visit is written behind
    store.record(URL, None, "new", 1000.0)
    assert store.queued == 1


def test_a_page_is_acknowledged_only_after_its_visit_is_written(
    store: RedisChangeStore, redis_client: redis.Redis
) -> None:
    crawler, mw, done = setup()
    visits = VisitWrites(crawler, store, delay=60.0, batch=8)
    page, item = response(URL), {"url": URL}
    list(mw.process_spider_output(page, [item]))
    queued_visit(store)
    visits.wait(item)
    crawler.signals.send_catch_log(signals.item_scraped, item=item, response=page)
    assert done == [] and not redis_client.exists(store.key(URL))  # through, not written
    visits.write()  # the batch timer's call
    assert done == [page.request] and redis_client.exists(store.key(URL))
    visits.close()


def test_a_full_batch_is_written_at_once(store: RedisChangeStore) -> None:
    crawler, mw, done = setup()
    visits = VisitWrites(crawler, store, delay=60.0, batch=1)
    page, item = response(URL), {"url": URL}
    list(mw.process_spider_output(page, [item]))
    queued_visit(store)
    visits.wait(item)
    crawler.signals.send_catch_log(signals.item_scraped, item=item, response=page)
    assert done == [page.request] and store.queued == 0


def test_a_refused_write_holds_the_page_back(
    store: RedisChangeStore, redis_client: redis.Redis
) -> None:
    crawler, mw, done = setup()
    failed: list[Exception] = []
    visits = VisitWrites(crawler, store, delay=60.0, on_error=failed.append)
    page, item = response(URL), {"url": URL}
    list(mw.process_spider_output(page, [item]))
    queued_visit(store)
    visits.wait(item)
    crawler.signals.send_catch_log(signals.item_scraped, item=item, response=page)
    redis_client.delete("t:durable:meta")  # the data is gone (a Redis restarted empty)
    visits.write()
    assert done == [] and len(failed) == 1 and "lost its data" in str(failed[0])
    assert crawler.stats.get_value("focuscrawl/frontier/held_by_storage_fault") == 1


@pytest.mark.slow
def test_a_killed_crawl_loses_no_visit_of_an_acknowledged_page(
    fault_web: Any, tmp_path: Path
) -> None:
    server = RedisServer(tmp_path, appendonly=True, args=("--appendfsync", "always"))
    server.start()
    try:
        extra = [*BFS, "-s", f"REDIS_URL={server.url}", "-s", "FOCUSCRAWL_REDIS_LEASE=5"]
        topic = topic_file(tmp_path, fault_web)
        first = CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 1, *extra))
        assert first.wait_for_pages(120), first.log[-3000:]
        first.kill()  # SIGKILL mid-way: visits queued for a batch die with it
        first.finish()
        again = CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 2, *extra))
        assert again.finish() == 0, again.log[-3000:]
        client = redis.Redis.from_url(server.url, decode_responses=True)
        recorded = set(client.smembers("fc:chg:urls"))
        client.close()
    finally:
        server.stop()
    fetched = comparable(crawl_facts(tmp_path).fetched)
    assert fetched and not fetched - recorded, sorted(fetched - recorded)[:20]
