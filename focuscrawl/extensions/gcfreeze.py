"""Keep Python's full garbage collections short: freeze the startup heap when the spider opens.

A crawl process holds about 150,000 container objects before it fetches anything (the modules,
classes and functions of Scrapy, Twisted, NumPy, SciPy, scikit-learn, and the loaded topic
model). CPython's oldest-generation collection walks all of them every time it runs, which in
a crawl is every ~100 pages: each such collection held the reactor for 70-140 ms, the longest
stalls of a crawl by far (``focuscrawl/reactor/busy_lag_max_ms``), and ~9% of its CPU time.

:class:`GcFreeze` collects once when it is built (with the spider, before the engine) and
moves every surviving object into the permanent generation (:func:`gc.freeze`) on
``spider_opened``, before the first request is sent, so later collections only walk what the
crawl itself creates. Objects created during the crawl are collected as before; frozen objects
are still freed by reference counting (only a reference cycle among start-up objects would
wait until ``spider_closed``, which unfreezes).

Stats: ``focuscrawl/gc/frozen_objects``, and over the crawl ``focuscrawl/gc/collections``,
``focuscrawl/gc/full_collections``, ``focuscrawl/gc/pause_max_ms`` (the longest collection) and
``focuscrawl/gc/pause_total_ms``. Turn it off with
``EXTENSIONS = {"focuscrawl.extensions.gcfreeze.GcFreeze": None}``.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector


class GcPauses:
    """Counts collections and their durations through :data:`gc.callbacks`."""

    def __init__(self) -> None:
        self.collections = 0
        self.full_collections = 0
        self.max_ms = 0.0
        self.total_ms = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        ms = (time.perf_counter() - self._start) * 1000
        self.collections += 1
        self.total_ms += ms
        self.max_ms = max(self.max_ms, ms)
        if info.get("generation") == 2:
            self.full_collections += 1

    def install(self) -> None:
        if self not in gc.callbacks:
            gc.callbacks.append(self)

    def remove(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)


class GcFreeze:
    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats
        self.pauses = GcPauses()
        self.frozen = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GcFreeze:
        assert crawler.stats is not None
        ext = cls(crawler.stats)
        # the start-up's garbage is freed, not frozen: collected here, before the engine and
        # the reactor-lag clock exist (a full collection of this heap takes ~70 ms)
        gc.collect()
        crawler.signals.connect(ext.spider_opened, signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        gc.freeze()  # ~1 ms: moves the objects, walks none
        self.frozen = True
        self.stats.set_value("focuscrawl/gc/frozen_objects", gc.get_freeze_count())
        self.pauses.install()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.pauses.remove()
        if self.frozen:
            gc.unfreeze()  # another crawl in this process starts from a normal heap
            self.frozen = False
        p = self.pauses
        self.stats.set_value("focuscrawl/gc/collections", p.collections)
        self.stats.set_value("focuscrawl/gc/full_collections", p.full_collections)
        self.stats.set_value("focuscrawl/gc/pause_max_ms", round(p.max_ms, 1))
        self.stats.set_value("focuscrawl/gc/pause_total_ms", round(p.total_ms, 1))
