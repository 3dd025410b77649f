"""Per-host politeness shared by every worker of a cluster: concurrency and request rate in Redis.

A worker takes a *slot* for a host before downloading from it and gives it back when the
response (or failure) arrives. A host has at most ``concurrency`` slots taken across the
cluster, and two slots are taken at least ``delay`` seconds apart (the larger of the configured
delay and the host's robots.txt ``Crawl-delay``, capped at ``max_delay``). Slots are leases with
a deadline (Redis server time), so the slots of a worker that died free themselves.

Keys (``P`` = the crawl's prefix): ``P:pol:a:<host>`` zset token → slot deadline;
``P:pol:next`` hash host → earliest time of the next slot; ``P:pol:delay`` hash host → robots
``Crawl-delay``. On a Redis Cluster ``P`` is the host's frontier shard's prefix ``P:{tag}``
(:mod:`focuscrawl.frontier.redis_shards`): a host's slots, queue and de-dup live in one slot.
No Scrapy here; the downloader middleware is :mod:`.middleware`.
"""

from __future__ import annotations

import time
from typing import Any

from focuscrawl.frontier.shard_keys import guard_key

_PRELUDE = """
local P, host = ARGV[1], ARGV[2]
local conc, delay, hold = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local slots = P .. ':pol:a:' .. host
redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
local robots = tonumber(redis.call('HGET', P .. ':pol:delay', host) or '0')
if robots > delay then delay = robots end
local nxt = tonumber(redis.call('HGET', P .. ':pol:next', host) or '0')
"""

# returns "0" when the slot is taken ("0b": and the host is busy now), else seconds to wait
_ACQUIRE = (
    _PRELUDE
    + """
if redis.call('ZCARD', slots) >= conc then return '-1' end
if now < nxt then return tostring(nxt - now) end
redis.call('ZADD', slots, now + hold, ARGV[6])
redis.call('PEXPIRE', slots, math.ceil(hold * 1000))
redis.call('HSET', P .. ':pol:next', host, now + delay)
if delay > 0 or redis.call('ZCARD', slots) >= conc then return '0b' end
return '0'
"""
)

_BUSY = (
    _PRELUDE
    + """
if redis.call('ZCARD', slots) >= conc or now < nxt then return 1 end
return 0
"""
)


class HostGate:
    """Cluster-wide per-host slots. ``open()`` connects; the constructor does no I/O."""

    def __init__(
        self,
        url: str,
        prefix: str,
        *,
        concurrency: int = 8,
        delay: float = 0.0,
        max_delay: float = 30.0,
        hold: float = 210.0,
        full_wait: float = 0.05,
        busy_ttl: float = 0.0,
        defer_release: bool = False,
        cluster: bool = False,
        shards: int = 0,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.concurrency = max(1, concurrency)
        self.delay = delay
        self.max_delay = max_delay
        self.hold = hold  # a slot not released within this many seconds frees itself
        self.full_wait = full_wait  # poll interval while every slot of a host is taken
        # busy() answers from memory for this long (the scheduler asks for every pop; acquire
        # still enforces the limits, so a stale "not busy" only makes one request wait)
        self.busy_ttl = busy_ttl
        self._busy_cache: dict[str, tuple[float, bool]] = {}
        # releases held until the next round trip (acquire, busy or flush()) and sent with it;
        # the owner calls flush() every so often so an idle worker's slots free up too
        self.defer_release = defer_release
        self._released: list[tuple[str, str]] = []
        self._releases_failed = False  # the last send of releases failed (see _execute)
        # this worker's tokens per host, taken or still waiting for a slot: a host with as many
        # as its concurrency is busy without asking Redis (a request waiting in acquire is not
        # yet in the downloader's slot, so the scheduler would pop more for the host)
        self._mine: dict[str, set[str]] = {}
        # a Redis Cluster: a host's keys live under its frontier shard's prefix (one slot)
        self.cluster = cluster
        self.shards = shards
        self._tags: list[str] = []
        self._client: Any = None
        self._acquire: Any = None
        self._busy: Any = None

    def open(self, client: Any = None) -> None:
        from focuscrawl.frontier.connection import connect

        self._client = client or connect(self.url, self.cluster)
        self._acquire = self._client.register_script(_ACQUIRE)
        self._busy = self._client.register_script(_BUSY)
        if self.cluster:  # the frontier's shard layout (the first of them to open fixes it)
            from focuscrawl.frontier.shard_keys import SHARDS_PER_MASTER, shard_tags

            wanted = self.shards or SHARDS_PER_MASTER * len(self._client.get_primaries())
            self._client.hsetnx(f"{self.prefix}:cluster", "shards", wanted)
            self._tags = shard_tags(int(self._client.hget(f"{self.prefix}:cluster", "shards")))

    def _prefix_of(self, host: str) -> str:
        """The prefix of ``host``'s keys: the crawl's, or on a cluster its frontier shard's."""
        if not self._tags:
            return self.prefix
        from focuscrawl.frontier.shard_keys import shard_of

        return f"{self.prefix}:{{{self._tags[shard_of(host, len(self._tags))]}}}"

    def _slots(self, host: str) -> str:
        return f"{self._prefix_of(host)}:pol:a:{host}"

    def close(self) -> None:
        if self._client is not None:
            import redis

            try:
                self.flush()
            except redis.RedisError:  # Redis away at the end: the slots' deadlines free them
                self._released = []
            self._client.close()
            self._client = None

    def _args(self, host: str) -> list[Any]:
        return [self._prefix_of(host), host, self.concurrency, repr(self.delay), repr(self.hold)]

    def acquire(self, host: str, token: str) -> float:
        """Take a slot of ``host`` for ``token``: 0.0 when taken, else seconds to wait first
        (``release`` the token once done, taken or not)."""
        self._mine.setdefault(host, set()).add(token)
        reply = self._call(self._acquire, [*self._args(host), token])
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        if text in ("0", "0b"):  # taken; whether the host is busy now comes with it
            if self.busy_ttl > 0:
                self._busy_cache[host] = (time.monotonic() + self.busy_ttl, text == "0b")
            else:
                self._busy_cache.pop(host, None)
            return 0.0
        self._busy_cache.pop(host, None)
        wait = float(text)
        return self.full_wait if wait < 0 else max(wait, 0.001)

    def release(self, host: str, token: str) -> None:
        cached = self._busy_cache.get(host)
        if cached is not None and cached[1]:  # a release frees: only "busy" may be stale now
            del self._busy_cache[host]
        mine = self._mine.get(host)
        if mine is not None:
            mine.discard(token)
            if not mine:
                del self._mine[host]
        if self.defer_release:
            self._released.append((host, token))
        else:
            self._client.zrem(self._slots(host), token)

    def flush(self) -> None:
        """Send the deferred releases now (kept, and sent again, if that fails)."""
        if self._released and self._client is not None:
            pipe = self._client.pipeline(transaction=False)
            released = self._queue_releases(pipe)
            self._execute(pipe, released)
            self._releases_failed = False

    def _queue_releases(self, pipe: Any) -> list[tuple[str, str]]:
        released, self._released = self._released, []
        for host, token in released:
            pipe.zrem(self._slots(host), token)
        return released

    def _execute(self, pipe: Any, released: list[tuple[str, str]]) -> list[Any]:
        """``pipe.execute()``; on an error the releases in it are queued again (a ``ZREM`` is
        idempotent): a slot whose release met a dead master or a failover is released once
        the slot's master answers, not left taken until its deadline."""
        import redis

        try:
            return pipe.execute()
        except redis.exceptions.NoScriptError:
            raise
        except redis.RedisError:
            self._released[:0] = released
            self._releases_failed = True
            raise

    def _call(self, script: Any, args: list[Any]) -> Any:
        """``script(args)``, with the deferred releases sent before it in the same round trip
        (not after a send of them failed: flush() sends them alone until they go through, so
        that a dead master of their slots does not fail this call too)."""
        # declared: a cluster runs it on the host's slot, never while that slot migrates
        keys = [self._slots(args[1]), guard_key(self._prefix_of(args[1]))]
        if not self._released or self._releases_failed:
            return script(keys=keys, args=args)
        import redis

        pipe = self._client.pipeline(transaction=False)
        released = self._queue_releases(pipe)
        # (a cluster pipeline too)
        pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        try:
            return self._execute(pipe, released)[-1]
        except redis.exceptions.NoScriptError:  # Redis restarted: the releases went through
            return script(keys=keys, args=args)

    def busy(self, host: str) -> bool:
        """True when a new request to ``host`` would have to wait (for the scheduler's pop)."""
        if len(self._mine.get(host, ())) >= self.concurrency:
            return True
        if self.busy_ttl <= 0:
            return bool(self._call(self._busy, self._args(host)))
        now = time.monotonic()
        cached = self._busy_cache.get(host)
        if cached is not None and cached[0] > now:
            return cached[1]
        if len(self._busy_cache) > 10_000:
            self._busy_cache.clear()
        answer = bool(self._call(self._busy, self._args(host)))
        self._busy_cache[host] = (now + self.busy_ttl, answer)
        return answer

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        seconds = min(max(seconds, 0.0), self.max_delay)
        self._client.hset(f"{self._prefix_of(host)}:pol:delay", host, repr(seconds))

    def in_use(self, host: str) -> int:
        return int(self._client.zcard(self._slots(host)))
