"""``RelevancePipeline``: the export decision for relevance.

The spider scores each page with the crawl's model and sets ``relevance``; this pipeline makes
sure every item carries ``relevance`` (a float in [0, 1]) and ``relevant`` (``relevance`` at least
the model's threshold, else ``FOCUSCRAWL_RELEVANCE_THRESHOLD``, 0 the uncalibrated one), counts
``focuscrawl/harvest/exported`` and ``focuscrawl/harvest/dropped_irrelevant``, and drops
irrelevant items from the export when ``FOCUSCRAWL_EXPORT_IRRELEVANT`` is false.
When the spider closes it writes the online-retraining counters of the crawl's model:
``focuscrawl/relevance/retrain_requests``, ``…/retrains``, ``…/retrain_failures``,
``…/retrain_worker_deaths``, ``…/retrain_fit_seconds`` (the longest fit). (The stalls they may
cause are measured by :mod:`focuscrawl.extensions.reactorlag`.)
An item whose ``relevance`` is missing or not a number is kept, marked irrelevant, and counted
in ``focuscrawl/harvest/bad_relevance``.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from focuscrawl import defaults
from focuscrawl.relevance.loading import UNCALIBRATED_THRESHOLD

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

# a retraining model's counters (RetrainingModel) and the stat names they are written as
RETRAIN_STATS = (
    ("requests", "retrain_requests"),
    ("retrains", "retrains"),
    ("failures", "retrain_failures"),
    ("worker_deaths", "retrain_worker_deaths"),
    ("max_fit_seconds", "retrain_fit_seconds"),
)


class RelevancePipeline:
    def __init__(
        self,
        stats: StatsCollector,
        threshold: float,
        export_irrelevant: bool,
        crawler: Crawler | None = None,
    ) -> None:
        self.stats = stats
        self.threshold = threshold
        self.export_irrelevant = export_irrelevant
        self.crawler = crawler

    def _model(self) -> Any:
        return getattr(getattr(self.crawler, "spider", None), "model", None)

    def close_spider(self, spider: Spider | None = None) -> None:
        model = self._model()
        for attr, name in RETRAIN_STATS:
            value = getattr(model, attr, None)
            if isinstance(value, int | float) and (value or attr == "retrains"):
                self.stats.set_value(f"focuscrawl/relevance/{name}", round(value, 3))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RelevancePipeline:
        s = crawler.settings
        assert crawler.stats is not None
        return cls(
            crawler.stats,
            threshold=defaults.read(s, "FOCUSCRAWL_RELEVANCE_THRESHOLD") or UNCALIBRATED_THRESHOLD,
            export_irrelevant=defaults.read(s, "FOCUSCRAWL_EXPORT_IRRELEVANT"),
            crawler=crawler,
        )

    def _threshold(self, spider: Spider | None) -> float:
        if spider is None and self.crawler is not None:
            spider = getattr(self.crawler, "spider", None)
        model = getattr(spider, "model", None)
        value = getattr(model, "threshold", None)
        return float(value) if isinstance(value, int | float) else self.threshold

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if "relevance" not in adapter.field_names():
            return item  # not a page item: not ours to judge
        raw = adapter.get("relevance")
        try:
            relevance = float(raw)
            if not math.isfinite(relevance):
                raise ValueError(raw)
        except (TypeError, ValueError):
            self.stats.inc_value("focuscrawl/harvest/bad_relevance")
            logger.warning(
                "item %s has no usable relevance (%r): marked irrelevant", adapter.get("url"), raw
            )
            relevance = 0.0
        relevance = min(1.0, max(0.0, relevance))
        relevant = relevance >= self._threshold(spider)
        adapter["relevance"] = relevance
        adapter["relevant"] = relevant
        if not relevant and not self.export_irrelevant:
            self.stats.inc_value("focuscrawl/harvest/dropped_irrelevant")
            raise DropItem(f"irrelevant ({relevance:.3f}): {adapter.get('url')}")
        self.stats.inc_value("focuscrawl/harvest/exported")
        return item
