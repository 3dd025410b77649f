"""A crawl of given URLs with the change-detection stack, run as its own process by the change
tests: ``python tests/watch_crawl.py OUT STATS MODE DATA [--index]`` with the URLs as JSON in
``$URLS``. ``OUT``/``STATS``: the items (JSON lines) and the crawl's stats, ``-`` for none;
``--index`` adds the index pipeline and judges every page relevant (0.8)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess

from focuscrawl.items import PageItem


class Watch(Spider):
    name = "watch"
    handle_httpstatus_list = [404, 410]

    def __init__(self, mode: str = "crawl", judged: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.mode = mode
        self.judged = judged

    async def start(self):  # type: ignore[no-untyped-def]
        for url in json.loads(os.environ["URLS"]):
            yield Request(url, dont_filter=True)

    def parse(self, response):  # type: ignore[no-untyped-def]
        page = response.meta.get("focuscrawl_page")
        judged = {"relevance": 0.8, "relevant": True} if self.judged else {}
        yield PageItem(
            url=response.url, status=response.status, fetched_at=time.time(),
            title=page.title if page else "", text=page.main_text if page else "", **judged,
        )  # fmt: skip


def main(argv: list[str]) -> None:
    out, stats_path, mode, data = argv[:4]
    index = "--index" in argv[4:]
    pipelines = {"focuscrawl.pipelines.change.ChangeDetectionPipeline": 300}
    if index:
        pipelines["focuscrawl.pipelines.index.IndexPipeline"] = 800
    settings: dict[str, Any] = {
        "LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False, "ROBOTSTXT_OBEY": False,
        "FOCUSCRAWL_DATA_DIR": data,
        "DOWNLOADER_MIDDLEWARES": {
            "focuscrawl.middlewares.partition.PartitionMiddleware": 90,
            "focuscrawl.middlewares.conditional_get.ConditionalGetMiddleware": 80,
        },
        "SPIDER_MIDDLEWARES": {
            "focuscrawl.middlewares.conditional_get.ChangeFingerprintMiddleware": 950
        },
        "ITEM_PIPELINES": pipelines,
    }  # fmt: skip
    if out != "-":
        settings["FEEDS"] = {out: {"format": "jsonlines"}}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(Watch)
    process.crawl(crawler, mode=mode, judged=index)
    process.start()
    if stats_path != "-":
        stats = crawler.stats.get_stats().items()
        with open(stats_path, "w") as f:
            json.dump({k: v for k, v in stats if isinstance(v, int | float | str)}, f)


if __name__ == "__main__":
    main(sys.argv[1:])
