"""Pages wait for their visit's write: the Redis change store's batched writes, made durable.

The Redis change store writes a visit behind (queued, sent with the next read or in a batch,
:mod:`focuscrawl.change.store_redis`): cheap, but a SIGKILL lost the queued visits of pages
already acknowledged. :class:`VisitWrites` keeps the batching and moves the acknowledgement
after the write: once a visit is queued, ``wait(item)`` hands the acknowledgement middleware a
Deferred (signal ``item_write_pending``) and a reactor timer writes the queue
(``store.flush()``) ``delay`` seconds later, or at once when ``batch`` visits wait. The
Deferreds fire after the write's reply; a write that fails on Redis away or full keeps them
waiting (tried again on the next timer, the pages unacknowledged meanwhile); any other failure
fails them (the pages held back, fetched again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet import defer

from focuscrawl.change.store import StoreError
from focuscrawl.pipelines.store_wait import transient_store_error
from focuscrawl.signals import item_write_pending

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IDelayedCall

logger = logging.getLogger(__name__)

MAX_RETRY_DELAY = 5.0  # seconds between tries while Redis is away


class VisitWrites:
    def __init__(
        self,
        crawler: Crawler | None,
        store: Any,
        delay: float = 0.05,
        batch: int = 32,
        on_error: Callable[[StoreError], None] | None = None,
    ) -> None:
        self.crawler = crawler
        self.store = store  # has ``queued`` and ``flush()`` (RedisChangeStore)
        self.delay = delay
        self.batch = max(1, batch)
        self.on_error = on_error
        self.waiting: list[defer.Deferred[Any]] = []
        self._timer: IDelayedCall | None = None
        self._retry = delay

    @staticmethod
    def writes_behind(store: Any) -> bool:
        return hasattr(store, "queued") and hasattr(store, "flush")

    def wait(self, item: Any) -> None:
        """After ``store.record``: if the visit is queued, its page waits for the write."""
        if not self.store.queued:
            self._release()  # the store wrote it (and what was queued before) already
            return
        answer: defer.Deferred[Any] = defer.Deferred()
        self.waiting.append(answer)
        if self.crawler is not None:
            self.crawler.signals.send_catch_log(
                item_write_pending, item=item, deferred=answer, spider=None
            )
        if len(self.waiting) >= self.batch:
            self.write()
        elif self._timer is None:
            self._schedule(self.delay)

    def _schedule(self, delay: float) -> None:
        from twisted.internet import reactor

        self._timer = reactor.callLater(delay, self.write)  # type: ignore[attr-defined]

    def write(self) -> None:
        """Write the queued visits now; the pages waiting for them go on."""
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()
            self._timer = None
        if not self.waiting:
            return
        try:
            self.store.flush()
        except StoreError as exc:
            if transient_store_error(exc):  # Redis away or full: try again, pages wait
                logger.debug("change: %d visit(s) wait for Redis: %s", len(self.waiting), exc)
                self._retry = min(max(self._retry * 2, self.delay), MAX_RETRY_DELAY)
                self._schedule(self._retry)
                return
            self.fail(exc)
            if self.on_error is not None:
                self.on_error(exc)
            return
        self._retry = self.delay
        self._release()

    def _release(self) -> None:
        waiting, self.waiting = self.waiting, []
        for answer in waiting:
            answer.callback(None)

    def fail(self, exc: BaseException) -> None:
        """The store failed: the pages waiting for its writes are held back."""
        waiting, self.waiting = self.waiting, []
        for answer in waiting:
            answer.errback(exc)

    def close(self) -> None:
        """The spider closes: write what is queued (pages still waiting are held back)."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        try:
            if self.waiting:
                self.store.flush()
        except StoreError as exc:
            self.fail(exc)
            return
        self._release()
