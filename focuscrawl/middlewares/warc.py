"""Archive every fetched response and its request as WARC (``FOCUSCRAWL_WARC_DIR``; empty: off).

A downloader middleware at order 755: its ``process_response`` runs after the address guard's
peer check (760) and before decompression (590), redirects (600) and retries (550), so it
stores the body as it came off the wire (``Content-Encoding`` kept, chunking undone) and every
hop of a redirect. Records go
to a :class:`~focuscrawl.archive.warc.WarcSeries` (rotated at ``FOCUSCRAWL_WARC_MAX_BYTES``,
with a CDXJ index per file; ``revisit`` records for 304 and unchanged pages). Stats:
``focuscrawl/warc/response``, ``.../revisit``, ``.../request``, ``.../files``, ``.../errors``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from twisted.web.http import RESPONSES

from focuscrawl.archive.warc import Exchange, WarcSeries

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class WarcMiddleware:
    def __init__(self, series: WarcSeries, stats: StatsCollector) -> None:
        self.series = series
        self.stats = stats
        self.failed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcMiddleware:
        folder = crawler.settings.get("FOCUSCRAWL_WARC_DIR") or ""
        if not folder:
            # off unless configured: a DEBUG line, not Scrapy's "Disabled" warning on every crawl
            logger.debug("off: FOCUSCRAWL_WARC_DIR is not set")
            raise NotConfigured
        name = crawler.spidercls.name if crawler.spidercls else "crawl"
        series = WarcSeries(
            Path(folder),
            prefix=crawler.settings.get("FOCUSCRAWL_WARC_PREFIX") or name,
            max_bytes=crawler.settings.getint("FOCUSCRAWL_WARC_MAX_BYTES"),
            info=f"focuscrawl crawl of spider {name}",
        )
        assert crawler.stats is not None
        mw = cls(series, crawler.stats)
        crawler.signals.connect(mw.spider_opened, signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signals.spider_closed)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        self.series.open()
        logger.info("WARC: writing to %s", self.series.folder)

    def spider_closed(self, spider: Spider) -> None:
        self.series.close()
        self.stats.set_value("focuscrawl/warc/files", len(self.series.files))
        if self.series.files:
            logger.info(
                "WARC: %d files in %s (%d responses, %d revisits)",
                len(self.series.files), self.series.folder,
                self.series.written["response"], self.series.written["revisit"],
            )  # fmt: skip

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if self.failed:
            return response
        try:
            kind = self.series.write(_exchange(request, response))
        except OSError as exc:  # a full disk: stop archiving, say so once, crawl on
            self.failed = True
            self.stats.inc_value("focuscrawl/warc/errors")
            logger.error("WARC: writing failed (%s); archiving stops for this crawl", exc)
            return response
        self.stats.inc_value(f"focuscrawl/warc/{kind}")
        self.stats.inc_value("focuscrawl/warc/request")
        return response


def _exchange(request: Request, response: Response) -> Exchange:
    return Exchange(
        url=response.url,
        status=response.status,
        reason=RESPONSES.get(response.status, b"").decode("latin-1"),
        response_headers=_pairs(response.headers),
        body=response.body,
        method=request.method,
        request_headers=tuple(_pairs(request.headers)),
        protocol=response.protocol or "HTTP/1.1",
        ip=str(response.ip_address) if response.ip_address else None,
        date=datetime.now(UTC),
    )


def _pairs(headers: object) -> list[tuple[str, str]]:
    out = []
    for name, values in headers.items():  # type: ignore[attr-defined]
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        for value in values:
            out.append((key, value.decode("latin-1") if isinstance(value, bytes) else str(value)))
    return out
