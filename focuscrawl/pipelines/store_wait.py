"""Items wait while the Redis change store is away or full, instead of failing the crawl.

A change store error whose cause is Redis unreachable (a restart, a network cut) or out of
memory (``OOM command not allowed``) is *transient*: the change pipeline answers the item with a
Deferred and keeps it, in order, with every item that comes after it; a reactor timer tries the
first again with back-off (0.5 s to 10 s), and once it goes through the rest follow. One line
when the wait starts, one when it ends. Past ``give_up_after`` seconds the waiting items fail
and the crawl stops (``on_give_up``). Waiting items hold their pages back: not acknowledged, so
a crawl killed meanwhile fetches them again. Lost data (a Redis restarted empty) is not
transient: the pipeline stops the crawl as before.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from twisted.internet import defer

from focuscrawl.crawlstop import HeldItem
from focuscrawl.pipelines.settle import Answer

logger = logging.getLogger(__name__)


def transient_store_error(exc: BaseException) -> bool:
    """Whether a ``StoreError`` comes from Redis being away or full (worth waiting for)."""
    cause = exc.__cause__
    try:
        import redis
    except ImportError:  # no Redis client: a SQLite store's error, never transient
        return False
    if isinstance(cause, redis.ConnectionError | redis.TimeoutError | redis.BusyLoadingError):
        return True
    from focuscrawl.frontier.redis_health import cluster_refusal

    if cluster_refusal(cause):
        return True  # a Redis Cluster failing over (a master down, its replica not promoted)
    return isinstance(cause, redis.exceptions.OutOfMemoryError)


class StoreWait:
    def __init__(
        self,
        retry: Callable[[Any], Any],
        give_up_after: float = 600.0,
        on_give_up: Callable[[BaseException], None] | None = None,
        first_delay: float = 0.5,
        max_delay: float = 5.0,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.stopping = stopping  # the crawl stops: waiting items are held back, not waited for
        self.retry = retry  # runs the pipeline on one item again; raises a transient error
        self.give_up_after = give_up_after
        self.on_give_up = on_give_up
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.waiting: deque[tuple[Any, defer.Deferred[Any]]] = deque()
        self.retrying = False  # inside retry(): a transient error propagates to _tick
        self._since = 0.0
        self._delay = first_delay
        self._call: Any = None
        self.stopped = False

    def hold(self, item: Any, exc: BaseException | None = None) -> Answer:
        """Keep ``item`` until the store is back; its answer comes then."""
        answer: defer.Deferred[Any] = defer.Deferred()
        if not self.waiting and self._call is None:
            self._since = time.monotonic()
            self._delay = self.first_delay
            logger.error(
                "change store unavailable (%s): items wait (their pages are not acknowledged); "
                "trying again every %.0fs at most",
                exc,
                self.max_delay,
            )
            self._schedule()
        self.waiting.append((item, answer))
        return Answer(answer)

    def close(self) -> None:
        """The spider closes: waiting items are held back (their pages fetched again)."""
        self.stopped = True
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        self._fail_all(HeldItem(RuntimeError("the spider closed while the store was away")))

    def _schedule(self) -> None:
        from twisted.internet import reactor

        self._call = reactor.callLater(self._delay, self._tick)  # type: ignore[attr-defined]
        self._delay = min(self._delay * 2, self.max_delay)

    def _tick(self) -> None:
        self._call = None
        if self.stopping():  # a signal or a close: the pages of waiting items are fetched again
            self.stopped = True
            self._fail_all(HeldItem(RuntimeError("the crawl stopped while the store was away")))
            return
        while self.waiting and not self.stopped:
            item, answer = self.waiting[0]
            self.retrying = True
            try:
                out = self.retry(item)
            except Exception as exc:  # noqa: BLE001 (handed to the item's Deferred)
                if transient_store_error(exc):
                    self._still_away(exc)
                    return
                self.waiting.popleft()
                answer.errback(exc)
                continue
            finally:
                self.retrying = False
            self.waiting.popleft()
            answer.callback(out)
        if not self.stopped:
            logger.warning(
                "change store back after %.1fs: items go on", time.monotonic() - self._since
            )

    def _still_away(self, exc: BaseException) -> None:
        if self.give_up_after and time.monotonic() - self._since > self.give_up_after:
            logger.error(
                "change store unavailable for %.0fs: stopping the crawl (%s)",
                time.monotonic() - self._since,
                exc,
            )
            self.stopped = True
            self._fail_all(exc)
            if self.on_give_up is not None:
                self.on_give_up(exc)
            return
        self._schedule()

    def _fail_all(self, exc: BaseException) -> None:
        waiting, self.waiting = self.waiting, deque()
        for _, answer in waiting:
            answer.errback(exc)
