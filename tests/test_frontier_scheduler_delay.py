"""The scheduler under ``DOWNLOAD_DELAY``: a host within its delay yields to the best entry of
a host that can be fetched now (a request handed out for a waiting host would hold one of the
engine's ``CONCURRENT_REQUESTS`` in its downloader slot); when every queued host waits, the
best of all goes (rules ``mean``, ``longest``) or nothing until the first is ready (``drawn``,
the default: its draw travels with the request to the slot). No time passes in these tests: the
delay is longer than the test."""

from __future__ import annotations

import time
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.core.downloader import Slot
from scrapy.core.engine import ExecutionEngine
from scrapy.utils.test import get_crawler

from focuscrawl.frontier.scheduler import FocusScheduler
from focuscrawl.meta import DELAY_META


def scheduler_with(delay: float, ready: str = "mean", **settings: Any) -> FocusScheduler:
    crawler = get_crawler(
        Spider, {"DOWNLOAD_DELAY": delay, "FOCUSCRAWL_DELAY_READY": ready, **settings}
    )
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


def test_drawn_hands_out_nothing_while_every_queued_host_waits() -> None:
    scheduler = scheduler_with(600.0, "drawn")
    first, second = scheduler.next_request(), scheduler.next_request()
    assert [first.url, second.url] == ["http://a.test/1", "http://b.test/1"]  # type: ignore[union-attr]
    # the first request of a host goes at once: nothing to wait after, no draw carried
    assert DELAY_META not in first.meta  # type: ignore[union-attr]
    assert scheduler.next_request() is None  # a.test/2 waits for its host: not handed out
    assert scheduler.has_pending_requests()  # so the crawl is not idle
    assert scheduler.crawler.stats.get_value("focuscrawl/frontier/all_hosts_delayed") == 1
    # its first request was handed out and sent 901 s ago (past any draw of 300 to 900 s)
    slots = scheduler.crawler.engine.downloader.slots  # type: ignore[union-attr]
    slots["a.test"] = slot = Slot(1, 600.0, 0.5)
    slot.lastseen = time.monotonic() - 901.0
    scheduler._delays.handed("a.test", slot.lastseen)
    request = scheduler.next_request()
    assert request is not None and request.url == "http://a.test/2"
    assert 300.0 <= request.meta[DELAY_META] <= 900.0  # the draw its slot must wait
    scheduler.close("finished")


class _Timer:
    """The slot's pending look at its queue (Scrapy's ``CallLaterResult``), recording a cancel."""

    cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_a_request_makes_its_slot_wait_its_own_draw() -> None:
    scheduler = scheduler_with(
        600.0, "drawn", DOWNLOAD_SLOTS={"slow.test": {"delay": 900.0, "jitter": 0.0}}
    )
    slots = scheduler.crawler.engine.downloader.slots  # type: ignore[union-attr]
    slots["a.test"] = slot = Slot(1, 600.0, 0.5)
    slot.lastseen = time.monotonic() - 400.0
    slot.latercall = timer = _Timer()  # armed for the last request's draw (say 800 s)
    request = Request("http://a.test/2", meta={DELAY_META: 350.0, "download_slot": "a.test"})
    scheduler._on_reached_downloader(request)
    # the slot waits this request's draw, exactly: past it already, so it goes at once
    assert (slot.delay, slot.jitter) == (350.0, 0.0) and slot.download_delay() == 350.0
    assert timer.cancelled and slot.latercall is None
    assert DELAY_META not in request.meta  # read once: a retry draws again
    assert scheduler.crawler.stats.get_value("focuscrawl/frontier/slot_waits") is None
    # a request that carries no draw (robots.txt): the slot's own delay and jitter again
    scheduler._on_reached_downloader(
        Request("http://a.test/robots.txt", meta={"download_slot": "a.test"})
    )
    assert (slot.delay, slot.jitter) == (600.0, 0.5)
    slots["slow.test"] = slow = Slot(1, 1.0, 0.0)
    scheduler._on_reached_downloader(
        Request("http://slow.test/", meta={"download_slot": "slow.test"})
    )
    assert (slow.delay, slow.jitter) == (900.0, 0.0)  # DOWNLOAD_SLOTS' own delay
    # a delay outside the slot's own draw (0.5 to 1.5 x 600 s) is not taken: its own again
    for bad in (0.0, 100.0, 10_000.0, "350", float("nan")):
        hostile = Request("http://a.test/4", meta={DELAY_META: bad, "download_slot": "a.test"})
        scheduler._on_reached_downloader(hostile)
        assert (slot.delay, slot.jitter) == (600.0, 0.5)
    # handed out before its draw had passed (it will wait): counted
    slot.lastseen = time.monotonic() - 10.0
    early = Request("http://a.test/3", meta={DELAY_META: 350.0, "download_slot": "a.test"})
    scheduler._on_reached_downloader(early)
    assert scheduler.crawler.stats.get_value("focuscrawl/frontier/slot_waits") == 1
    scheduler.close("finished")


def test_autothrottle_keeps_the_slots_own_delay() -> None:
    scheduler = scheduler_with(600.0, "drawn", AUTOTHROTTLE_ENABLED=True)
    assert scheduler._delays.rule == "mean" and not scheduler._delays.draws
    scheduler.close("finished")
