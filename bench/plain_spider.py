"""The baseline of the crawl benchmark: a plain Scrapy spider that follows every link (BFS)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import scrapy


class PlainSpider(scrapy.Spider):
    name = "plain"
    custom_settings = {
        "DEPTH_PRIORITY": 1,  # breadth-first, as Scrapy's docs recommend
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, seeds: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [s for s in seeds.split(",") if s]

    def parse(self, response: scrapy.http.Response) -> Iterator[Any]:
        if not isinstance(response, scrapy.http.TextResponse):
            return
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "t": round(time.time(), 3),  # when it was handled (the steady rate of a bench)
        }
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
