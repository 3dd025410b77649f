"""Acknowledge a frontier entry once the spider's output for its response has been consumed.

The scheduler releases the entry (and, with Redis, its lease) on the ``request_done`` signal.
Sent only after every request the callback yielded has been handed to the scheduler, so a
worker that dies while parsing leaves the lease to expire and the page to be fetched again,
instead of losing the links it would have found. Failures are acknowledged by the spider's
errback; a callback that raises is acknowledged here too, so it is not re-delivered forever.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from focuscrawl.signals import request_done

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class FrontierAckMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierAckMiddleware:
        return cls(crawler)

    def _done(self, response: Response) -> None:
        self.crawler.signals.send_catch_log(
            request_done, request=response.request, spider=self.crawler.spider
        )

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        yield from result
        self._done(response)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for item in result:
            yield item
        self._done(response)

    def process_spider_exception(
        self, response: Response, exception: Exception, spider: Spider | None = None
    ) -> None:
        self._done(response)
