"""Scrapy's ``HttpCompressionMiddleware``, with a stat for decompression bombs.

Scrapy (2.11.1+) decompresses gzip, deflate, brotli and zstd bodies 64 KiB at a time and stops
as soon as the output passes ``DOWNLOAD_MAXSIZE`` (``DOWNLOAD_WARNSIZE`` only logs), raising
``IgnoreRequest``: a 10 KB gzip body that would inflate to 10 GB costs at most
``DOWNLOAD_MAXSIZE`` of memory. It counts nothing, though, and the spider's errback cannot tell
that ``IgnoreRequest`` from others; this subclass counts it in
``focuscrawl/skip/decompressed_too_large``. The add-on puts it in place of Scrapy's, at 590.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.exceptions import IgnoreRequest

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response

STAT_TOO_LARGE = "focuscrawl/skip/decompressed_too_large"


class CountedHttpCompressionMiddleware(HttpCompressionMiddleware):
    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        try:
            if spider is None:  # Scrapy 2.13+ passes no spider (and warns if it gets one)
                return super().process_response(request, response)
            return super().process_response(request, response, spider)
        except IgnoreRequest:
            if self.stats is not None:
                self.stats.inc_value(STAT_TOO_LARGE)
            raise
