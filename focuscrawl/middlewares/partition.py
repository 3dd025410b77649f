"""Parse each HTML response once; the spider reads the Page from ``response.meta``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request, Spider
from scrapy.http import Response, TextResponse

from focuscrawl.blocks import partition

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class PartitionMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PartitionMiddleware:
        return cls(crawler)

    def process_response(self, request: Request, response: Response, spider: Spider) -> Response:
        if isinstance(response, TextResponse) and b"html" in (
            response.headers.get("Content-Type") or b"text/html"
        ):
            request.meta["focuscrawl_page"] = partition(response.text, response.url)
        else:
            self.stats.inc_value("focuscrawl/partition/non_html")
        return response
