"""The scheduler under ``DOWNLOAD_DELAY``: a host within its delay yields to the best entry of
a host that can be fetched now (a request handed out for a waiting host would hold one of the
engine's ``CONCURRENT_REQUESTS`` in its downloader slot); when every queued host waits, the
best of all goes. No time passes in these tests: the delay is longer than the test."""

from __future__ import annotations

import time

import pytest
from scrapy import Request, Spider
from scrapy.core.downloader import Slot
from scrapy.core.engine import ExecutionEngine
from scrapy.utils.test import get_crawler

from focuscrawl.frontier.scheduler import FocusScheduler


def scheduler_with(delay: float, ready: str = "mean") -> FocusScheduler:
    crawler = get_crawler(Spider, {"DOWNLOAD_DELAY": delay, "FOCUSCRAWL_DELAY_READY": ready})
    crawler.spider = crawler._create_spider("t")
    # a real engine (its downloader's slots are what the scheduler reads); nothing is fetched
    crawler.engine = ExecutionEngine(crawler, lambda _: None)
    scheduler = FocusScheduler.from_crawler(crawler)
    scheduler.open(crawler.spider)
    for url, score in (
        ("http://a.test/1", 0.9),
        ("http://a.test/2", 0.8),
        ("http://b.test/1", 0.5),
    ):
        assert scheduler.enqueue_request(Request(url, meta={"focuscrawl": {"score": score}}))
    return scheduler


def popped(scheduler: FocusScheduler) -> list[str]:
    out = []
    while (request := scheduler.next_request()) is not None:
        out.append(request.url)
    return out


def test_a_host_within_its_delay_yields_to_one_that_can_be_fetched_now() -> None:
    scheduler = scheduler_with(600.0)
    assert popped(scheduler) == ["http://a.test/1", "http://b.test/1", "http://a.test/2"]
    stats = scheduler.crawler.stats
    # the last one went when every queued host waited: the best of all, not nothing
    assert stats.get_value("focuscrawl/frontier/all_hosts_delayed") == 1
    scheduler.close("finished")


def test_without_a_delay_the_order_is_the_scores() -> None:
    scheduler = scheduler_with(0.0)
    assert popped(scheduler) == ["http://a.test/1", "http://a.test/2", "http://b.test/1"]
    assert scheduler.crawler.stats.get_value("focuscrawl/frontier/all_hosts_delayed") is None
    scheduler.close("finished")


@pytest.mark.parametrize(("ready", "waits"), [("mean", False), ("longest", True)])
def test_a_host_is_ready_at_its_mean_delay_or_at_the_jitters_longest(
    ready: str, waits: bool
) -> None:
    scheduler = scheduler_with(600.0, ready)
    slots = scheduler.crawler.engine.downloader.slots  # type: ignore[union-attr]
    # Scrapy's slot of a.test with its default jitter (0.5 to 1.5 x 600 s), its last request
    # sent 700 s ago: past the mean delay, within the longest
    slots["a.test"] = slot = Slot(1, 600.0, 0.5)
    slot.lastseen = time.monotonic() - 700.0
    assert scheduler._waiting("a.test") is waits
    slot.lastseen = time.monotonic() - 500.0  # within the shortest delay: waits either way
    assert scheduler._waiting("a.test")
    scheduler.close("finished")
