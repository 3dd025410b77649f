from __future__ import annotations

import gc

from scrapy import Spider
from scrapy.utils.test import get_crawler

from focuscrawl.addon import EXTENSIONS
from focuscrawl.extensions.gcfreeze import GcFreeze


def _cycle() -> None:
    a: list[object] = []
    a.append(a)  # garbage only the cyclic collector frees


def test_freezes_on_open_counts_collections_and_unfreezes_on_close() -> None:
    crawler = get_crawler(Spider)
    ext = GcFreeze.from_crawler(crawler)
    spider = Spider("s")
    assert crawler.stats is not None
    crawler.stats.open_spider(spider)
    assert gc.get_freeze_count() == 0
    try:
        ext.spider_opened(spider)
        frozen = gc.get_freeze_count()
        assert frozen > 1000  # the interpreter's and the test run's start-up objects
        assert crawler.stats.get_value("focuscrawl/gc/frozen_objects") == frozen
        _cycle()
        assert gc.collect() >= 1  # objects made after the freeze are still collected
        gc.collect(0)
        ext.spider_closed(spider, "finished")
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
    assert ext.pauses not in gc.callbacks
    assert crawler.stats.get_value("focuscrawl/gc/collections") >= 2
    assert crawler.stats.get_value("focuscrawl/gc/full_collections") >= 1
    assert crawler.stats.get_value("focuscrawl/gc/pause_total_ms") >= 0.0
    assert crawler.stats.get_value("focuscrawl/gc/pause_max_ms") <= crawler.stats.get_value(
        "focuscrawl/gc/pause_total_ms"
    )


def test_addon_registers_it_before_the_stats_file() -> None:
    # the stats file is written on spider_closed by the first handler connected after ours
    order = EXTENSIONS["focuscrawl.extensions.gcfreeze.GcFreeze"]
    assert order is not None and order < EXTENSIONS["focuscrawl.extensions.statsfile.StatsFile"]
