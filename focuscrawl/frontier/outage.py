"""The crawl's pause while Redis is away or full, and the lease renewal of a Redis worker.

Neither waits on the reactor thread. While the frontier is unavailable
(:class:`~focuscrawl.frontier.redis_health.FrontierUnavailable`) the scheduler hands out no
request and keeps the links and acks it is given; :class:`FrontierOutage` logs one line, then
tries again on a reactor timer (back-off from ``first_delay`` to ``max_delay`` seconds): a PING
in a thread (a Redis behind a dead network costs the reactor nothing), then the frontier's
``resume()``. When that goes through, one line says how long the pause was and the crawl goes on.
A SIGINT or SIGTERM meanwhile closes the spider as usual: what was not sent stays leased in
Redis and comes back when the leases expire.

:class:`LeaseRenewal` restarts the leases of the entries a worker holds every third of the lease,
in one script call sent without waiting, so a slow page is never re-delivered to another worker
while this one still fetches it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from twisted.internet import task, threads

from focuscrawl.credentials import redact_text, redact_url
from focuscrawl.frontier.redis_health import FrontierUnavailable

logger = logging.getLogger(__name__)


def _ping(urls: list[str]) -> None:
    """PING the first of ``urls`` that answers (raises the last error when none does)."""
    import redis

    error: Exception | None = None
    for url in urls:
        client = redis.Redis.from_url(url, socket_connect_timeout=5.0, socket_timeout=5.0)
        try:
            client.ping()
            return
        except redis.RedisError as exc:
            error = exc
        finally:
            client.close()
    assert error is not None
    raise error


def _ping_urls(frontier: Any) -> list[str]:
    """Where to look for Redis: the frontier's URL and, on a Redis Cluster, the node of each
    of its shards (the node named in ``REDIS_URL`` may be the master that died: any master
    that answers will do, the shards then find their slots' new masters)."""
    urls = [frontier.url]
    for shard in getattr(frontier, "shards", ()):
        if shard.url not in urls:
            urls.append(shard.url)
    return urls


class FrontierOutage:
    """``begin(exc)`` pauses; ``on_back()`` (the scheduler's resend of what it kept) runs once
    the frontier's ``resume()`` went through; ``paused`` in between."""

    def __init__(
        self,
        frontier: Any,
        stats: Any,
        on_back: Callable[[], None],
        first_delay: float = 0.5,
        max_delay: float = 10.0,
        give_up_after: float = 0.0,
        on_give_up: Callable[[], None] | None = None,
    ) -> None:
        self.frontier = frontier
        self.stats = stats
        self.on_back = on_back
        self.give_up_after = give_up_after  # 0: never
        self.on_give_up = on_give_up
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.since: float | None = None
        self.kind = ""
        self._delay = first_delay
        self._call: Any = None
        self._closed = False

    @property
    def paused(self) -> bool:
        return self.since is not None

    def begin(self, exc: FrontierUnavailable) -> None:
        if self.since is None:
            self.since = time.monotonic()
            self._delay = self.first_delay
            self.stats.inc_value(f"focuscrawl/redis/pause/{exc.kind}")
            logger.error(
                "%s: crawl paused (no request is handed out; links and acks are kept and sent "
                "when it is back; nothing is lost); trying again every %.0fs at most",
                exc,
                self.max_delay,
            )
        elif exc.kind != self.kind:
            logger.error("%s: still paused", exc)
        self.kind = exc.kind
        self._schedule()

    def close(self) -> None:
        self._closed = True
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None

    def _schedule(self) -> None:
        if self._closed or (self._call is not None and self._call.active()):
            return
        waited = time.monotonic() - (self.since or time.monotonic())
        if self.give_up_after and waited > self.give_up_after and self.on_give_up is not None:
            logger.error(
                "Redis at %s unavailable for %.0fs (FOCUSCRAWL_REDIS_RETRY_TIMEOUT): stopping "
                "the crawl; run it again to go on",
                redact_url(self.frontier.url),
                waited,
            )
            self._closed = True
            self.on_give_up()
            return
        from twisted.internet import reactor

        self._call = reactor.callLater(self._delay, self._probe)  # type: ignore[attr-defined]
        self._delay = min(self._delay * 2, self.max_delay)

    def _probe(self) -> None:
        self._call = None
        if self._closed:
            return
        d = threads.deferToThread(_ping, _ping_urls(self.frontier))
        d.addCallbacks(lambda _: self._resume(), lambda f: self._still_away(f.value))

    def _still_away(self, exc: BaseException) -> None:
        logger.debug("Redis at %s still unreachable: %s", redact_url(self.frontier.url), exc)
        self._schedule()

    def _resume(self) -> None:
        if self._closed:
            return
        try:
            self.frontier.resume()
            self.on_back()
        except FrontierUnavailable as exc:
            self.kind = exc.kind
            self._schedule()
            return
        assert self.since is not None
        paused = time.monotonic() - self.since
        self.since = None
        self.stats.inc_value("focuscrawl/redis/paused_seconds", round(paused, 3))
        logger.warning(
            "Redis at %s is back after %.1fs: crawl resumed",
            redact_text(redact_url(self.frontier.url), self.frontier.url),
            paused,
        )


class LeaseRenewal:
    """Every ``lease / 3`` seconds, ``frontier.renew_leases()`` (errors are left to the next
    call that waits: an outage pauses the crawl there)."""

    def __init__(self, frontier: Any, lease: float) -> None:
        self.frontier = frontier
        self.interval = max(0.2, lease / 3)
        self._loop = task.LoopingCall(self._renew)

    def start(self) -> None:
        self._loop.start(self.interval, now=False)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def _renew(self) -> None:
        try:
            self.frontier.renew_leases()
        except FrontierUnavailable as exc:  # the scheduler meets it too, and pauses
            logger.debug("leases not renewed: %s", exc)
