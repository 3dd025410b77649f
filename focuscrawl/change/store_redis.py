"""The change store in Redis (when ``FOCUSCRAWL_REDIS_URL`` / ``REDIS_URL`` is set).

Key schema (``P`` = the prefix, ``FOCUSCRAWL_CHANGE_REDIS_PREFIX``, default ``fc:chg``)::

    P:meta        hash  schema → 2, created → unix time          (written by open())
    P:urls        set   every stored URL                          (iteration, count)
    P:p:<url>     hash  f → fingerprint JSON (compact, Fingerprints.to_dict)
                        h → visit history "1714000000.000 s;…" (last max_history visits)
                        x → features JSON

Each visit is written by one Lua script (atomic read-modify-write: append the visit, trim the
history, replace the fingerprints, merge the features, add the URL to the set). The script first
checks that ``P:meta`` still exists: a Redis restarted without persistence comes back empty, and
the next write then fails with :class:`StoreError` instead of silently starting a new history
(and every later call fails too, until the store is reopened). Connection errors are retried with
backoff (a restart with persistence is survived); when the server stays away, :class:`StoreError`
says so.

One round trip per page. A crawl reads a page's record twice (the conditional-GET middleware
before the request, the change pipeline after the response) and then records the visit. So:

- the store objects of one process that point at the same Redis and prefix share one connection
  (the middleware and the pipeline each open their own store);
- a record read from Redis is served once more from memory (the pipeline's read after the
  middleware's), and the ``record`` that follows it computes the new record locally;
- such a visit is written behind: queued, and sent in the same pipelined round trip as the next
  read that goes to Redis, or when ``WRITE_BATCH`` visits are queued or the oldest is
  ``WRITE_DELAY`` seconds old, or by ``records()`` / ``len()`` / ``due()`` / ``close()``. A write
  that fails on a connection error stays queued and is sent again (nothing is lost on a restart
  with persistence); one refused because the data is gone is the same clear error as before.

A ``record`` without a read just before it is written at once, as one call, and returns the record
as Redis now holds it.

Read ahead. The Redis frontier reads the change record of the URL it just popped in the same
``sendall`` as its next pop (:func:`prefetch_command`, on its own connection to the same Redis):
the middleware's ``get`` then finds the reply read, or reads it with the frontier's (no send of
its own), and it is served twice from memory (middleware, then pipeline). A prefetch is skipped
for a URL with a queued visit, and dropped when the URL is recorded before its reply arrives:
a record read ahead is never older than this process's own writes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.change.record import (
    DEFAULT_MAX_HISTORY,
    SCHEMA_VERSION,
    PageRecord,
    StoreError,
    decode_history,
    dump_fingerprints,
    encode_visit,
    keeps_fingerprints,
    parse_fingerprints,
)
from focuscrawl.credentials import RedisAuthError, redact_text, redact_url

logger = logging.getLogger(__name__)

#: queued visits that force a write; the age (seconds) of the oldest queued visit that does
WRITE_BATCH = 32
WRITE_DELAY = 1.0
#: after a timeout (a Redis that does not answer), calls fail at once for this long: each
#: would hold the reactor for the socket timeout
DOWN_FOR = 5.0
#: records kept for the read that follows (the middleware → pipeline hand-off), and how long
CACHE_SIZE = 1024
CACHE_TTL = 60.0

_RECORD = """
if redis.call('HEXISTS', KEYS[3], 'schema') == 0 then
  return redis.error_reply('FCLOST change store metadata is gone')
end
local h = redis.call('HGET', KEYS[1], 'h')
if (not h) or h == '' then h = ARGV[1] else h = h .. ';' .. ARGV[1] end
local n = 1
for _ in string.gmatch(h, ';') do n = n + 1 end
local extra = n - tonumber(ARGV[4])
while extra > 0 do
  h = string.sub(h, string.find(h, ';', 1, true) + 1)
  extra = extra - 1
end
redis.call('HSET', KEYS[1], 'h', h)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'f', ARGV[2]) end
if ARGV[3] ~= '' then
  local cur = redis.call('HGET', KEYS[1], 'x')
  local merged = {}
  if cur and cur ~= '' then merged = cjson.decode(cur) end
  for k, v in pairs(cjson.decode(ARGV[3])) do merged[k] = v end
  redis.call('HSET', KEYS[1], 'x', cjson.encode(merged))
end
redis.call('SADD', KEYS[2], ARGV[5])
if ARGV[6] == '1' then return redis.call('HMGET', KEYS[1], 'f', 'h', 'x') end
return 1
"""

_LOST = "FCLOST"


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else value


class _Shared:
    """One connection per (Redis URL, prefix) in a process, and what it has queued and read."""

    def __init__(self, client: Any, cluster: bool = False) -> None:
        self.client = client
        self.cluster = cluster  # a Redis Cluster: keys carry their URL shard's hash tag
        self.refs = 0
        self.pending: list[tuple[str, list[Any]]] = []  # (url, script ARGV) not yet written
        self.pending_since = 0.0
        # url → (read at, record or None, serves from memory left)
        self.cache: OrderedDict[str, tuple[float, PageRecord | None, int]] = OrderedDict()
        # url → how to read its prefetched record's reply (see prefetch_command)
        self.awaited: dict[str, Callable[[], None]] = {}
        self.lost: StoreError | None = None
        self.down_until = 0.0  # a connection failed: calls fail fast until then


_SHARED: dict[tuple[str, str], _Shared] = {}
_SHARED_LOCK = threading.Lock()


class RedisChangeStore:
    def __init__(
        self,
        url: str,
        prefix: str = "fc:chg",
        max_history: int = DEFAULT_MAX_HISTORY,
        retries: int = 5,
        cluster: bool = False,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.max_history = max_history
        self.retries = retries
        # a Redis Cluster: records sharded by URL hash over CLUSTER_SHARDS hash tags
        self.cluster = cluster
        self._tags: list[str] = []
        self._shared: _Shared | None = None

    def _prefix_of(self, url: str) -> str:
        """The prefix of ``url``'s keys: the store's, or on a cluster its URL shard's
        (``P:{tag}``: the record, its shard's URL set and meta in one slot)."""
        if not self.cluster:
            return self.prefix
        if not self._tags:
            self._tags = _cluster_tags()
        from redis.crc import key_slot

        return f"{self.prefix}:{{{self._tags[key_slot(url.encode()) % len(self._tags)]}}}"

    def _prefixes(self) -> list[str]:
        if not self.cluster:
            return [self.prefix]
        if not self._tags:
            self._tags = _cluster_tags()
        return [f"{self.prefix}:{{{tag}}}" for tag in self._tags]

    def key(self, url: str) -> str:
        return f"{self._prefix_of(url)}:p:{url}"

    def _eval_record(self, pipe: Any, url: str, args: list[Any]) -> None:
        at = self._prefix_of(url)
        keys = (f"{at}:p:{url}", f"{at}:urls", f"{at}:meta")
        options: dict[str, Any] = {}
        if self.cluster:  # the node named: else redis-py's cluster pipeline asks the server
            # for the keys of every EVAL (COMMAND GETKEYS), one round trip per visit
            options["target_nodes"] = pipe.get_node_from_key(keys[0])
        pipe.execute_command("EVAL", _RECORD, 3, *keys, *args, **options)  # no cluster eval()

    @property
    def _meta(self) -> str:
        return f"{self.prefix}:meta"

    @property
    def _urls(self) -> str:
        return f"{self.prefix}:urls"

    # --- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        if self._shared is not None:
            return
        import redis

        with _SHARED_LOCK:
            shared = _SHARED.get((self.url, self.prefix))
            try:
                client = shared.client if shared is not None else self._connect()
            except redis.RedisError as exc:
                raise self._error(exc) from exc
            try:
                for prefix in self._prefixes():
                    self._open_meta(client, f"{prefix}:meta")
            except (redis.RedisError, StoreError) as exc:
                if shared is None:
                    client.close()
                if isinstance(exc, StoreError):
                    raise
                if isinstance(exc, redis.AuthenticationError):  # the same line as the frontier's
                    refused = RedisAuthError(self.url, exc)
                    raise StoreError(str(refused)) from refused
                raise StoreError(
                    f"cannot reach the Redis change store at {redact_url(self.url)}: "
                    f"{redact_text(str(exc), self.url)}"
                ) from exc
            if shared is None:
                shared = _SHARED[(self.url, self.prefix)] = _Shared(client, self.cluster)
            shared.refs += 1
            shared.lost = None  # reopened: a lost store starts afresh (see _call)
            shared.cache.clear()
        self._shared = shared

    def _connect(self) -> Any:
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        from focuscrawl.frontier.connection import connect

        return connect(
            # short: a crawl waits for an outage without blocking (pipelines.store_wait)
            self.url,
            self.cluster,
            retry=Retry(ExponentialBackoff(cap=0.1, base=0.05), min(self.retries, 1)),
            socket_connect_timeout=5.0,
            socket_timeout=30.0,
        )

    def _open_meta(self, client: Any, meta: str) -> None:
        schema = client.hget(meta, "schema")
        if schema is not None and int(schema) > SCHEMA_VERSION:
            raise StoreError(
                f"Redis change store {self.prefix} has schema {int(schema)}, written by "
                f"a newer focuscrawl (this one reads up to {SCHEMA_VERSION})"
            )
        if schema is None:
            client.hset(meta, mapping={"schema": SCHEMA_VERSION, "created": time.time()})
        else:  # an older schema: the record layout is read-compatible, mark it upgraded
            client.hset(meta, "schema", SCHEMA_VERSION)

    def close(self) -> None:
        """Write what is queued, then let go of the connection (closed with its last user).

        Raises :class:`StoreError` when the queued visits cannot be written; they are lost
        only if this was the connection's last user (the error says how many).
        """
        shared = self._shared
        if shared is None:
            return
        self._shared = None
        with _SHARED_LOCK:
            shared.refs -= 1
            last = shared.refs <= 0
            if last:
                _SHARED.pop((self.url, self.prefix), None)
        try:
            self._flush(shared)
        except StoreError as exc:
            if not last:
                raise
            n = len(shared.pending)
            raise StoreError(f"{exc}; {n} visit(s) not written to the change store") from exc
        finally:
            if last:
                shared.client.close()

    @property
    def client(self) -> Any:
        return self._open().client

    def _open(self) -> _Shared:
        if self._shared is None:
            raise StoreError("the change store is not open: call open() first")
        if self._shared.lost is not None:
            raise self._shared.lost
        return self._shared

    def _error(self, exc: Exception) -> StoreError:
        import redis

        if isinstance(exc, redis.ResponseError):
            if _LOST in str(exc):
                return StoreError(
                    f"the Redis change store {self.prefix} at {redact_url(self.url)} lost its "
                    "data (server "
                    "restarted without persistence, or flushed); refusing to start a new history "
                    "silently. Restore it, or reopen the store to start afresh."
                )
            return StoreError(f"Redis change store error: {redact_text(str(exc), self.url)}")
        return StoreError(
            f"the Redis change store at {redact_url(self.url)} is unreachable: "
            f"{redact_text(str(exc), self.url)}"
        )

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.RedisError as exc:
            raise self._error(exc) from exc

    def _run(self, shared: _Shared, build: Any = None) -> list[Any]:
        """One round trip: the queued visits, then what ``build(pipe)`` adds; its results.

        Written visits leave the queue; one that failed on a connection error stays (sent again
        next time). Lost data makes the store unusable until reopened.
        """
        import redis

        pending = shared.pending
        if not pending and build is None:
            return []
        if shared.down_until > time.monotonic():  # failed a moment ago: fail fast, no network
            away = redis.ConnectionError("unreachable a moment ago")
            raise self._error(away) from away
        pipe = shared.client.pipeline(transaction=False)
        for url, args in pending:
            self._eval_record(pipe, url, args)
        if build is not None:
            build(pipe)
        try:
            results = pipe.execute(raise_on_error=False)
        except redis.RedisError as exc:  # nothing applied that we know of: keep the queue
            if isinstance(exc, redis.TimeoutError):  # slow to fail: the next calls fail fast
                shared.down_until = time.monotonic() + DOWN_FOR
            raise self._error(exc) from exc
        written, rest = results[: len(pending)], results[len(pending) :]
        failed = [r for r in written if isinstance(r, Exception)]
        # refused for want of memory (Redis at maxmemory), or not run on a Redis Cluster that
        # fails over (its node down, CLUSTERDOWN): queued again, nothing else is
        shared.pending = [p for p, r in zip(pending, written, strict=True) if _again(r)]
        if failed:
            error = self._error(failed[0])
            if _LOST in str(failed[0]):
                shared.lost = error
            logger.error(
                "change store: %d of %d queued visit(s) refused: %s",
                len(failed),
                len(written),
                error,
            )
            raise error from failed[0]
        for r in rest:
            if isinstance(r, Exception):
                raise self._error(r) from r
        return rest

    def _flush(self, shared: _Shared) -> None:
        if shared.pending:
            self._run(shared)

    def flush(self) -> None:
        """Write the queued visits now."""
        self._flush(self._open())

    @property
    def queued(self) -> int:
        """Visits recorded and not written yet (written behind; :meth:`flush` writes them)."""
        return len(self._shared.pending) if self._shared is not None else 0

    def is_queued(self, url: str) -> bool:
        """Whether a visit of ``url`` is queued, not written yet."""
        shared = self._shared
        return shared is not None and any(u == url for u, _ in shared.pending)

    # --- the ChangeStore interface ------------------------------------------------------------
    def _record(self, url: str, fp: Any, history: Any, feats: Any) -> PageRecord:
        try:
            fps = parse_fingerprints(_text(fp))
            features = json.loads(_text(feats) or "{}")
        except ValueError as exc:
            logger.warning("change store: unreadable record for %s skipped: %s", url, exc)
            fps, features = None, {}
        if not isinstance(features, dict):
            features = {}
        return PageRecord(url, fps, decode_history(_text(history)), features)

    def get(self, url: str) -> PageRecord | None:
        shared = self._open()
        wait = shared.awaited.get(url)
        if wait is not None:  # read ahead by the frontier: its reply is read with the frontier's
            try:
                wait()  # hands the record over (prefetched), unless it failed
            except Exception as exc:  # the frontier's problem: read it ourselves
                logger.debug("change store: prefetched record of %s not read: %s", url, exc)
            shared.awaited.pop(url, None)
        hit = shared.cache.get(url)
        if hit is not None and hit[2] > 0 and time.monotonic() - hit[0] < CACHE_TTL:
            shared.cache[url] = (hit[0], hit[1], hit[2] - 1)
            return hit[1]
        key = self.key(url)
        ((fp, history, feats),) = self._run(shared, lambda pipe: pipe.hmget(key, "f", "h", "x"))
        rec = None if fp is None and history is None else self._record(url, fp, history, feats)
        _cache(shared, url, rec, 1)
        return rec

    def prefetched(self, url: str, reply: list[Any]) -> None:
        """Hand over the reply of ``url``'s read ahead (``HMGET key f h x``): served from memory
        to the next two ``get`` calls, unless ``url`` was recorded since it was sent."""
        shared = self._shared
        if shared is None or shared.awaited.pop(url, None) is None:
            return
        fp, history, feats = reply
        rec = None if fp is None and history is None else self._record(url, fp, history, feats)
        _cache(shared, url, rec, 2)

    def record(
        self,
        url: str,
        fingerprints: Fingerprints | None,
        status: str,
        fetched_at: float,
        features: Mapping[str, Any] | None = None,
    ) -> PageRecord:
        visit = encode_visit(fetched_at, status)
        shared = self._open()
        fp = dump_fingerprints(fingerprints) if keeps_fingerprints(status) else ""
        feats = json.dumps(dict(features), separators=(",", ":")) if features else ""
        args = [visit, fp, feats, self.max_history, url]
        shared.awaited.pop(url, None)  # a read ahead in flight is older than this visit
        hit = shared.cache.pop(url, None)
        if hit is None or time.monotonic() - hit[0] >= CACHE_TTL:
            script_args = [*args, "1"]
            (out,) = self._run(shared, lambda pipe: self._eval_record(pipe, url, script_args))
            return self._record(url, *out)
        # just read: the new record follows from it, and the write goes behind
        old = hit[1]
        now = time.monotonic()
        if not shared.pending:
            shared.pending_since = now
        shared.pending.append((url, [*args, "0"]))
        if len(shared.pending) >= WRITE_BATCH or now - shared.pending_since >= WRITE_DELAY:
            self._run(shared)
        history = [*(old.history if old is not None else []), (float(visit.split()[0]), status)]
        kept = old.fingerprints if old is not None else None
        if fp:  # a visit with a body: its fingerprints replace the stored ones
            kept = fingerprints
        merged = dict(old.features) if old is not None else {}
        merged.update(features or {})
        return PageRecord(url, kept, history[-self.max_history :], merged)

    def records(self) -> Iterator[PageRecord]:
        shared = self._open()
        self._flush(shared)
        client = shared.client
        for prefix in self._prefixes():
            batch: list[str] = []
            for raw in self._call(lambda p=prefix: list(client.sscan_iter(f"{p}:urls", count=500))):
                batch.append(_text(raw))
                if len(batch) >= 500:
                    yield from self._fetch(batch)
                    batch = []
            if batch:
                yield from self._fetch(batch)

    def _fetch(self, urls: list[str]) -> Iterator[PageRecord]:
        pipe = self.client.pipeline(transaction=False)
        for url in urls:
            pipe.hmget(self.key(url), "f", "h", "x")
        for url, (fp, history, feats) in zip(urls, self._call(pipe.execute), strict=True):
            if fp is not None or history is not None:
                yield self._record(url, fp, history, feats)

    def __len__(self) -> int:
        shared = self._open()
        self._flush(shared)
        pipe = shared.client.pipeline(transaction=False)
        for prefix in self._prefixes():
            pipe.scard(f"{prefix}:urls")
        return sum(int(n) for n in self._call(pipe.execute))

    def due(self, now: float, budget: int = 0, policy: str = "change-rate", **kw: Any) -> list[str]:
        """The URLs to revisit now, best first (see :func:`focuscrawl.change.policy.due`)."""
        from focuscrawl.change.policy import due

        return due(self.records(), now, budget, policy, **kw)


#: URL shards of a change store on a Redis Cluster (fixed: every worker agrees without asking)
CLUSTER_SHARDS = 256


def _cluster_tags() -> list[str]:
    from focuscrawl.frontier.shard_keys import shard_tags

    return shard_tags(CLUSTER_SHARDS)


def _again(reply: Any) -> bool:
    """A visit's write to send again: refused (out of memory), or not done because a node of a
    Redis Cluster was down or failing over (a cluster pipeline hands these back as results)."""
    import redis

    from focuscrawl.frontier.redis_health import cluster_refusal, is_oom

    away = isinstance(reply, redis.ConnectionError | redis.TimeoutError)
    return away or is_oom(reply) or cluster_refusal(reply)


def _cache(shared: _Shared, url: str, rec: PageRecord | None, serves: int) -> None:
    shared.cache[url] = (time.monotonic(), rec, serves)
    shared.cache.move_to_end(url)
    while len(shared.cache) > CACHE_SIZE:
        shared.cache.popitem(last=False)


def prefetch_command(
    redis_url: str, url: str, wait: Callable[[], None]
) -> tuple[tuple[Any, ...], Callable[[Any], None]] | None:
    """A read ahead of ``url``'s change record, for a caller that sends commands to the same
    Redis on its own connection (the frontier, with its next pop): ``(command, deliver)``, or
    None when no change store of this process uses ``redis_url`` (or ``url`` has a visit queued,
    not written yet). The caller sends ``command`` and passes its reply to ``deliver``; a
    ``get(url)`` before that calls ``wait()``, which must read the reply (and deliver it).
    """
    with _SHARED_LOCK:
        found = [(prefix, s) for (u, prefix), s in _SHARED.items() if u == redis_url]
    if len(found) != 1:
        return None
    prefix, shared = found[0]
    if shared.lost is not None or any(u == url for u, _ in shared.pending):
        return None
    store = RedisChangeStore(redis_url, prefix, cluster=shared.cluster)
    store._shared = shared  # a view on the shared state, not a user of the connection
    if len(shared.awaited) >= CACHE_SIZE:
        shared.awaited.clear()
    shared.awaited[url] = wait
    return ("HMGET", store.key(url), "f", "h", "x"), lambda reply: store.prefetched(url, reply)
