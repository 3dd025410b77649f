"""Acknowledge a frontier entry once the spider's output for its response has been consumed
and every item of it has been through the item pipelines.

The scheduler releases the entry (and, with Redis, its lease) on the ``request_done`` signal.
Sent only after every request the callback yielded has been handed to the scheduler *and* every
item it yielded has settled (``item_scraped``, ``item_dropped`` or ``item_error``): Scrapy passes
items to the pipelines in parallel tasks that may still run when the callback's output ends, and
the index pipeline answers an item only once its update is committed. So a crawler that dies
before then leaves the entry unacknowledged (JOBDIR: in flight; Redis: leased) and the page is
fetched again, instead of losing its links, its item or its index update.

An item that failed on a storage fault (dropped as :class:`~focuscrawl.crawlstop.HeldItem`, or
raising :class:`~focuscrawl.faults.StorageFault`: disk full, a read-only data directory) holds
its page back: never acknowledged, so the resumed crawl fetches
it again. Failures are acknowledged by the spider's errback; a callback or a pipeline that raises
anything else is acknowledged here too, so the page is not re-delivered forever.

A visit the change store writes behind (Redis: batched) holds its page until the write's reply
(``focuscrawl.signals.item_write_pending``): an acknowledged page's visit is always written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals

from focuscrawl.crawlstop import HeldItem
from focuscrawl.faults import StorageFault
from focuscrawl.signals import item_held, item_write_pending, request_done

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure


class _Output:
    """A response whose output is being consumed: its items not settled yet."""

    __slots__ = ("response", "items", "ended", "held")

    def __init__(self, response: Response) -> None:
        self.response = response
        self.items = 0
        self.ended = False
        self.held = False  # an item failed on a storage fault: never acknowledged


class FrontierAckMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._open: dict[int, _Output] = {}  # id(response) → its output
        self._items: dict[int, _Output] = {}  # id(item) → the output it belongs to

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierAckMiddleware:
        mw = cls(crawler)
        crawler.signals.connect(mw._connect_items, signals.spider_opened)
        crawler.signals.connect(mw._held, item_held)
        crawler.signals.connect(mw._write_pending, item_write_pending)
        return mw

    def _connect_items(self, spider: Spider) -> None:
        """Listen to the item signals after every other component does (handlers run in the
        order they were connected): the change pipeline records a visit on ``item_scraped``
        before the page is acknowledged here, so an acknowledged page is always recorded."""
        self.crawler.signals.connect(self._scraped, signals.item_scraped)
        self.crawler.signals.connect(self._dropped, signals.item_dropped)
        self.crawler.signals.connect(self._failed, signals.item_error)

    # -- output ---------------------------------------------------------------------------
    def _track(self, response: Response) -> _Output:
        out = self._open.get(id(response))
        if out is None or out.response is not response:
            out = self._open[id(response)] = _Output(response)
        return out

    def _count(self, out: _Output, result: Any) -> None:
        if result is not None and not isinstance(result, Request):
            out.items += 1  # before Scrapy sees it: its signal comes after this
            self._items[id(result)] = out

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        out = self._track(response)
        for r in result:
            self._count(out, r)
            yield r
        self._ended(response)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        out = self._track(response)
        async for r in result:
            self._count(out, r)
            yield r
        self._ended(response)

    def process_spider_exception(
        self, response: Response, exception: Exception, spider: Spider | None = None
    ) -> None:
        self._ended(response)

    def _ended(self, response: Response) -> None:
        out = self._track(response)
        out.ended = True
        self._maybe_done(out)

    # -- items ----------------------------------------------------------------------------
    def _held(self, item: Any, **kw: Any) -> None:
        out = self._items.get(id(item))
        if out is not None:
            out.held = True

    def _write_pending(self, item: Any, deferred: Any, **kw: Any) -> None:
        """The item's visit is queued in the change store: its page waits for the write."""
        out = self._items.get(id(item))
        if out is None:
            return
        out.items += 1  # one more thing to settle: the write's reply

        def written(result: Any, held: bool) -> Any:
            out.items -= 1
            out.held = out.held or held
            self._maybe_done(out)
            return None

        deferred.addCallbacks(written, written, callbackArgs=(False,), errbackArgs=(True,))

    def _settled(self, response: Response | None, held: bool = False, item: Any = None) -> None:
        self._items.pop(id(item), None)
        out = self._open.get(id(response)) if response is not None else None
        if out is None or out.response is not response:
            return  # not an item of a spider callback (or of a request we do not track)
        out.items -= 1
        out.held = out.held or held
        self._maybe_done(out)

    def _scraped(self, item: Any, response: Response | None = None, **kw: Any) -> None:
        self._settled(response, item=item)

    def _dropped(
        self,
        item: Any,
        response: Response | None = None,
        exception: BaseException | None = None,
        **kw: Any,
    ) -> None:
        self._settled(response, held=isinstance(exception, HeldItem), item=item)

    def _failed(
        self, item: Any, response: Response | None = None, failure: Failure | None = None, **kw: Any
    ) -> None:
        held = failure is not None and failure.check(StorageFault) is not None
        self._settled(response, held, item)

    def _maybe_done(self, out: _Output) -> None:
        if not out.ended or out.items > 0:
            return
        self._open.pop(id(out.response), None)
        if out.held:
            self.crawler.stats.inc_value("focuscrawl/frontier/held_by_storage_fault")
            return
        self.crawler.signals.send_catch_log(
            request_done, request=out.response.request, spider=self.crawler.spider
        )
