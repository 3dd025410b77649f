from __future__ import annotations

import json
import time

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from focuscrawl.items import PageItem
from focuscrawl.pipelines.relevance import RelevancePipeline


def _pipeline(**settings):
    crawler = get_crawler(settings_dict=settings)
    return RelevancePipeline.from_crawler(crawler), crawler.stats


def test_marks_relevance_and_keeps_irrelevant_items_by_default():
    pipe, stats = _pipeline(FOCUSCRAWL_RELEVANCE_THRESHOLD=0.4)
    hit = pipe.process_item(PageItem(url="http://a.test/1", relevance=0.7))
    miss = pipe.process_item(PageItem(url="http://a.test/2", relevance=0.1, relevant=True))
    assert hit.relevant is True
    assert miss.relevant is False  # recomputed from the threshold, not trusted
    assert stats.get_value("focuscrawl/harvest/exported") == 2


def test_drops_irrelevant_items_when_export_irrelevant_is_off():
    pipe, stats = _pipeline(FOCUSCRAWL_EXPORT_IRRELEVANT=False, FOCUSCRAWL_RELEVANCE_THRESHOLD=0.4)
    with pytest.raises(DropItem, match="irrelevant"):
        pipe.process_item(PageItem(url="http://a.test/2", relevance=0.39))
    assert pipe.process_item(PageItem(url="http://a.test/1", relevance=0.4)).relevant
    assert stats.get_value("focuscrawl/harvest/dropped_irrelevant") == 1
    assert stats.get_value("focuscrawl/harvest/exported") == 1


def test_the_models_own_threshold_wins_over_the_setting():
    class Model:
        threshold = 0.5

    class Spider:
        model = Model()

    pipe, _ = _pipeline(FOCUSCRAWL_RELEVANCE_THRESHOLD=0.25)
    assert pipe.process_item(PageItem(url="u", relevance=0.3), Spider()).relevant is False
    assert pipe.process_item(PageItem(url="u", relevance=0.3)).relevant is True


@pytest.mark.parametrize("bad", [None, "high", float("nan")])
def test_unusable_relevance_is_counted_and_marked_irrelevant(bad):
    pipe, stats = _pipeline()
    item = pipe.process_item({"url": "u", "relevance": bad, "relevant": True})
    assert item["relevant"] is False and item["relevance"] == 0.0
    assert stats.get_value("focuscrawl/harvest/bad_relevance") == 1


def test_items_without_relevance_pass_untouched():
    pipe, stats = _pipeline(FOCUSCRAWL_EXPORT_IRRELEVANT=False)
    item = {"url": "u"}
    assert pipe.process_item(item) == {"url": "u"}
    assert stats.get_value("focuscrawl/harvest/exported") is None


def test_reactor_lag_stats_split_the_ticks_while_a_model_retrains():
    from focuscrawl.extensions.reactorlag import ReactorLag

    class Model:
        retraining = False

    model = Model()
    crawler = get_crawler()
    lag = ReactorLag(crawler.stats, lambda: model)
    for late_s, busy in ((0.0, False), (0.2, True), (0.07, True)):
        model.retraining = busy
        lag._expected = time.monotonic() - late_s  # the tick runs late_s after it was due
        lag._tick()
    lag.stop()
    stats = crawler.stats
    assert stats.get_value("focuscrawl/reactor/ticks") == 3
    assert stats.get_value("focuscrawl/reactor/ticks_retraining") == 2
    assert stats.get_value("focuscrawl/reactor/lag_over_50ms_retraining") == 2
    assert stats.get_value("focuscrawl/reactor/lag_max_ms") >= 200


def test_the_pipeline_writes_the_retraining_counters_when_the_spider_closes():
    class Model:
        retrains = 1
        failures = 0
        worker_deaths = 0
        max_fit_seconds = 2.5

    crawler = get_crawler()
    crawler.spider = type("S", (), {"model": Model()})()
    pipe = RelevancePipeline(crawler.stats, 0.25, True, crawler=crawler)
    pipe.close_spider()
    stats = crawler.stats
    assert stats.get_value("focuscrawl/relevance/retrains") == 1
    assert stats.get_value("focuscrawl/relevance/retrain_fit_seconds") == 2.5
    assert stats.get_value("focuscrawl/relevance/retrain_failures") is None


def test_a_crawl_with_online_retraining_records_its_timing_stats(tmp_path, testweb_synthetic):
    from tests.test_spider_topical import scrapy_crawl, topic_file

    stats_file = tmp_path / "stats.json"
    proc = scrapy_crawl(
        tmp_path,
        "-a",
        f"topic={topic_file(tmp_path, testweb_synthetic)}",
        "-s",
        "CLOSESPIDER_PAGECOUNT=300",
        "-s",
        "FOCUSCRAWL_RETRAIN_EVERY=100",
        "-s",
        f"FOCUSCRAWL_STATS_FILE={stats_file}",
        web=testweb_synthetic,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = json.loads(stats_file.read_text())
    assert "spider_exceptions" not in " ".join(stats), proc.stderr[-3000:]
    assert stats["focuscrawl/relevance/retrain_requests"] >= 1  # the worker was asked to fit
    assert stats.get("focuscrawl/relevance/retrain_worker_deaths") is None
    assert stats["focuscrawl/reactor/ticks"] > 0
    assert (
        0 <= stats["focuscrawl/reactor/busy_lag_max_ms"] <= stats["focuscrawl/reactor/lag_max_ms"]
    )
