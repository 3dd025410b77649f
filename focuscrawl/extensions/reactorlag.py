"""How long the crawl thread stalls: the reactor's lag, measured in the crawl itself.

A call scheduled every ``interval`` seconds runs late by exactly the time the reactor spent
in other work (parsing a page, scoring it, swapping in a retrained model, a thread holding
the GIL): that lateness is the longest time nothing could be fetched. :class:`ReactorLag`
records it as crawl stats, separately for the time an online retrain is running
(``RetrainingModel.retraining``):

* ``focuscrawl/reactor/lag_max_ms``, ``…/lag_p99_ms``, ``…/lag_mean_ms``,
  ``focuscrawl/reactor/lag_over_50ms`` (ticks that ran 50 ms or more late),
  ``focuscrawl/reactor/ticks``;
* ``focuscrawl/reactor/busy_lag_*``: the same for the part of each lag the crawl process
  itself was busy (its CPU time in the gap, any thread), which leaves out the time the OS ran
  other processes on an over-committed machine;
* each also with ``_retraining`` appended, over the ticks while a retrain was running.

:class:`ReactorLagStats` is the Scrapy extension (registered by the add-on) that runs it from
``spider_opened`` to ``spider_closed``; the retraining counters themselves are written by
:class:`~focuscrawl.pipelines.relevance.RelevancePipeline`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

STALL_MS = 50.0


class _Lag:
    __slots__ = ("count", "max", "over", "total", "values")

    def __init__(self) -> None:
        self.values: list[float] = []  # 100 a second: small for any crawl of hours
        self.count = 0
        self.total = 0.0
        self.max = 0.0
        self.over = 0

    def add(self, ms: float) -> None:
        self.count += 1
        self.values.append(ms)
        self.total += ms
        if ms > self.max:
            self.max = ms
        if ms >= STALL_MS:
            self.over += 1


class ReactorLag:
    """Tick every ``interval`` seconds on the reactor; lateness of each tick in ms."""

    def __init__(
        self,
        stats: StatsCollector,
        model: Callable[[], Any],
        interval: float = 0.01,
    ) -> None:
        self.stats = stats
        self.model = model  # the crawl's current model (a callable: the spider builds it late)
        self.interval = interval
        self.all = _Lag()
        self.retraining = _Lag()
        self.busy = _Lag()
        self.busy_retraining = _Lag()
        self._loop: Any = None
        self._expected = 0.0
        self._cpu = 0.0

    def start(self) -> None:
        from twisted.internet import task

        self._loop = task.LoopingCall(self._tick)
        self._expected = time.monotonic() + self.interval
        self._cpu = time.process_time()
        self._loop.start(self.interval, now=False)

    def _tick(self) -> None:
        now = time.monotonic()
        cpu = time.process_time()
        ms = max(0.0, (now - self._expected) * 1000)
        # the part of the lag this process was busy for (any of its threads): a lag the OS
        # caused by running other processes on an over-committed machine is not counted
        busy = min(ms, (cpu - self._cpu) * 1000)
        self._expected = now + self.interval
        self._cpu = cpu
        self.all.add(ms)
        self.busy.add(busy)
        if getattr(self.model(), "retraining", False):
            self.retraining.add(ms)
            self.busy_retraining.add(busy)

    def stop(self) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        self._loop = None
        for name, suffix, lag in (
            ("lag", "", self.all),
            ("lag", "_retraining", self.retraining),
            ("busy_lag", "", self.busy),
            ("busy_lag", "_retraining", self.busy_retraining),
        ):
            if not lag.count:
                continue
            prefix = f"focuscrawl/reactor/{name}"
            self.stats.set_value(f"{prefix}_max_ms{suffix}", round(lag.max, 1))
            self.stats.set_value(f"{prefix}_mean_ms{suffix}", round(lag.total / lag.count, 2))
            p99 = sorted(lag.values)[min(lag.count - 1, int(0.99 * lag.count))]
            self.stats.set_value(f"{prefix}_p99_ms{suffix}", round(p99, 1))
            self.stats.set_value(f"{prefix}_over_50ms{suffix}", lag.over)
            if name == "lag":
                self.stats.set_value(f"focuscrawl/reactor/ticks{suffix}", lag.count)


class ReactorLagStats:
    """Scrapy extension: :class:`ReactorLag` over the crawl, tagging the ticks while the
    spider's model retrains."""

    def __init__(self, crawler: Crawler) -> None:
        assert crawler.stats is not None
        self.lag = ReactorLag(crawler.stats, lambda: getattr(crawler.spider, "model", None))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReactorLagStats:
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_opened, signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.lag.start()

    def spider_closed(self, spider: Spider) -> None:
        self.lag.stop()
