"""Set the work mark (:mod:`focuscrawl.frontier.workmark`) around each page's work, clear it
after, so that a death counts only against the page the process was working on.

The work of a page runs in pieces on the reactor thread, and between its pieces other pages run
or nothing does (downloads). Each piece marks the page and clears the mark when it returns:

* the downloader middlewares' ``process_response`` chain (decompression, partition, render):
  :class:`WorkStartDownloaderMiddleware` runs first (order 995), :class:`WorkEndDownloaderMiddleware`
  last (order 5);
* the spider middlewares' ``process_spider_input`` and the callback
  (:class:`WorkMarkSpiderMiddleware`, outermost) and each step of its output (parse, scoring,
  links): marked before every ``next()`` (a write only when another piece took the slot in
  between: a page's 50 links cost no 100 writes), cleared when the output ends;
* the item pipelines' ``process_item`` chain (:class:`WorkStartPipeline`, order 1, and
  :class:`WorkEndPipeline`, order 999; a pipeline that answers later leaves the rest to the
  next mark).

With a JOBDIR (``JOBDIR/working.mark``) or Redis (``working-<pid>.mark`` in JOBDIR or the data
directory) and a quarantine (``FOCUSCRAWL_QUARANTINE_AFTER`` > 0). A page whose chain stops early (a redirect, a dropped item) leaves its mark until the next
piece marks or clears: a death in that gap blames it once, which alone quarantines nothing.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from focuscrawl.frontier.factory import work_mark_path
from focuscrawl.frontier.requests import FP_META
from focuscrawl.frontier.workmark import WorkMark, payload

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

_MARKS: weakref.WeakKeyDictionary[Any, _Shared] = weakref.WeakKeyDictionary()
MAX_PENDING_ITEMS = 10_000  # items on their way to the pipelines (bounded: a reset forgets them)


class _Shared:
    """One crawler's mark, shared by its middlewares and pipelines; opened at spider_opened
    (after the frontier read what a death left in it)."""

    def __init__(self, path: str) -> None:
        self.mark = WorkMark(path)
        self.items: dict[int, bytes] = {}  # id(item) → its page's fingerprint
        self.opened = False

    def open(self, spider: Any = None) -> None:
        if not self.opened:
            self.opened = True
            os.makedirs(os.path.dirname(self.mark.path) or ".", exist_ok=True)
            self.mark.open()

    def close(self, spider: Any = None) -> None:
        self.mark.close()


def shared_mark(crawler: Crawler) -> _Shared:
    """The crawler's mark, or NotConfigured (no JOBDIR nor Redis, or no quarantine)."""
    shared = _MARKS.get(crawler)
    if shared is None:
        path = work_mark_path(crawler.settings)
        if path is None:
            raise NotConfigured("the work mark needs a JOBDIR or Redis, and a quarantine")
        shared = _MARKS[crawler] = _Shared(path)
        crawler.signals.connect(shared.open, signals.spider_opened)
        crawler.signals.connect(shared.close, signals.spider_closed)
    return shared


def fingerprint_of(request: Request | None) -> bytes | None:
    """The mark of a request's page: its frontier fingerprint and host (None: not a frontier
    entry's request)."""
    fp = request.meta.get(FP_META) if request is not None else None
    if not isinstance(fp, str):
        return None
    try:
        raw = bytes.fromhex(fp)
    except ValueError:
        return None
    return payload(raw, urlparse_cached(request).hostname or "")


class _Component:
    def __init__(self, shared: _Shared) -> None:
        self.shared = shared
        self.mark = shared.mark

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Any:
        return cls(shared_mark(crawler))


class WorkStartDownloaderMiddleware(_Component):
    def process_response(self, request: Request, response: Response, spider: Any = None) -> Any:
        self.mark.mark(fingerprint_of(request))
        return response


class WorkEndDownloaderMiddleware(_Component):
    def process_response(self, request: Request, response: Response, spider: Any = None) -> Any:
        self.mark.clear()
        return response


class WorkMarkSpiderMiddleware(_Component):
    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        self.mark.mark(fingerprint_of(response.request))

    def _note(self, fp: bytes | None, result: Any) -> None:
        if fp is not None and result is not None and not isinstance(result, Request):
            items = self.shared.items
            if len(items) >= MAX_PENDING_ITEMS:
                items.clear()
            items[id(result)] = fp

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        fp = fingerprint_of(response.request)
        it = iter(result)
        while True:
            self.mark.mark(fp)  # no write unless another page's piece took the slot
            try:
                r = next(it)
            except StopIteration:
                self.mark.clear()  # the output ended
                return
            except BaseException:
                self.mark.clear()
                raise
            self._note(fp, r)
            yield r

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        fp = fingerprint_of(response.request)
        it = result.__aiter__()
        while True:
            self.mark.mark(fp)
            try:
                r = await it.__anext__()
            except StopAsyncIteration:
                self.mark.clear()
                return
            except BaseException:
                self.mark.clear()
                raise
            self._note(fp, r)
            yield r

    def process_spider_exception(
        self, response: Response, exception: Exception, spider: Spider | None = None
    ) -> None:
        self.mark.clear()


class WorkStartPipeline(_Component):
    def process_item(self, item: Any, spider: Any = None) -> Any:
        self.mark.mark(self.shared.items.pop(id(item), None))
        return item


class WorkEndPipeline(_Component):
    def process_item(self, item: Any, spider: Any = None) -> Any:
        self.mark.clear()
        return item
