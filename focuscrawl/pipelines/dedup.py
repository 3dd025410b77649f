"""Items of near-duplicate pages (``duplicate_of`` set by the spider, ``FOCUSCRAWL_DEDUP``).

A copy carries its original's ``relevance``, but it is not a second relevant page: after the
relevance pipeline (which recomputes ``relevant`` from ``relevance``) this one sets
``relevant`` to False, so the index does not hold the copy and the harvest counts the page
once. Counted in ``focuscrawl/dedup/exported``.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured


class DuplicatePipeline:
    def __init__(self, stats: Any) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> DuplicatePipeline:
        if not crawler.settings.getbool("FOCUSCRAWL_DEDUP"):
            raise NotConfigured  # no message: Scrapy logs none for an opted-out part
        return cls(crawler.stats)

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        if "duplicate_of" in adapter.field_names() and adapter.get("duplicate_of"):
            adapter["relevant"] = False
            self.stats.inc_value("focuscrawl/dedup/exported")
        return item
