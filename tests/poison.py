"""Test only: a spider middleware that kills its process when a given page reaches the spider,
as an OOM kill or a segfault in a parser would (``os._exit``: no cleanup, no close, no ack).

Enable with ``-s SPIDER_MIDDLEWARES={"tests.poison.PoisonMiddleware": 50}`` and
``-s TEST_POISON=<part of the URL>`` (the test puts the repository on ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

EXIT_CODE = 86
MARK = "POISONED"  # written to stderr just before the process dies


class PoisonMiddleware:
    def __init__(self, part: str) -> None:
        self.part = part

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PoisonMiddleware:
        part = crawler.settings.get("TEST_POISON")
        if not part:
            raise NotConfigured("TEST_POISON is not set")
        return cls(part)

    def process_spider_input(self, response: Response, spider: Any = None) -> None:
        if self.part in response.url:
            sys.stderr.write(f"{MARK} {response.url}\n")
            sys.stderr.flush()
            os._exit(EXIT_CODE)
