"""The change store in Redis (when ``FOCUSCRAWL_REDIS_URL`` / ``REDIS_URL`` is set).

Key schema (``P`` = the prefix, ``FOCUSCRAWL_CHANGE_REDIS_PREFIX``, default ``fc:chg``)::

    P:meta        hash  schema → 2, created → unix time          (written by open())
    P:urls        set   every stored URL                          (iteration, count)
    P:p:<url>     hash  f → fingerprint JSON (compact, Fingerprints.to_dict)
                        h → visit history "1714000000.000 s;…" (last max_history visits)
                        x → features JSON

``record`` is one Lua script (atomic read-modify-write: append the visit, trim the history,
replace the fingerprints, merge the features, add the URL to the set). The script first checks
that ``P:meta`` still exists: a Redis restarted without persistence comes back empty, and the
next write then fails with :class:`StoreError` instead of silently starting a new history.
Connection errors are retried with backoff (a restart with persistence is survived); when the
server stays away, :class:`StoreError` says so.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.change.store import (
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

logger = logging.getLogger(__name__)

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
return redis.call('HMGET', KEYS[1], 'f', 'h', 'x')
"""


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else value


class RedisChangeStore:
    def __init__(
        self,
        url: str,
        prefix: str = "fc:chg",
        max_history: int = DEFAULT_MAX_HISTORY,
        retries: int = 5,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.max_history = max_history
        self.retries = retries
        self._client: Any = None
        self._script: Any = None

    def key(self, url: str) -> str:
        return f"{self.prefix}:p:{url}"

    @property
    def _meta(self) -> str:
        return f"{self.prefix}:meta"

    @property
    def _urls(self) -> str:
        return f"{self.prefix}:urls"

    # --- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        if self._client is not None:
            return
        import redis
        from redis.backoff import ExponentialBackoff
        from redis.retry import Retry

        client = redis.Redis.from_url(
            self.url, retry=Retry(ExponentialBackoff(cap=2.0, base=0.05), self.retries)
        )
        try:
            schema = client.hget(self._meta, "schema")
            if schema is not None and int(schema) > SCHEMA_VERSION:
                raise StoreError(
                    f"Redis change store {self.prefix} has schema {int(schema)}, written by a "
                    f"newer focuscrawl (this one reads up to {SCHEMA_VERSION})"
                )
            if schema is None:
                client.hset(self._meta, mapping={"schema": SCHEMA_VERSION, "created": time.time()})
            else:  # an older schema: the record layout is read-compatible, mark it upgraded
                client.hset(self._meta, "schema", SCHEMA_VERSION)
        except redis.RedisError as exc:
            client.close()
            raise StoreError(f"cannot reach the Redis change store at {self.url}: {exc}") from exc
        self._client = client
        self._script = client.register_script(_RECORD)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    @property
    def client(self) -> Any:
        if self._client is None:
            raise StoreError("the change store is not open: call open() first")
        return self._client

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.ResponseError as exc:
            if "FCLOST" in str(exc):
                raise StoreError(
                    f"the Redis change store {self.prefix} at {self.url} lost its data (server "
                    "restarted without persistence, or flushed); refusing to start a new history "
                    "silently. Restore it, or reopen the store to start afresh."
                ) from exc
            raise StoreError(f"Redis change store error: {exc}") from exc
        except redis.RedisError as exc:
            raise StoreError(f"the Redis change store at {self.url} is unreachable: {exc}") from exc

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
        fp, history, feats = self._call(self.client.hmget, self.key(url), "f", "h", "x")
        if fp is None and history is None:
            return None
        return self._record(url, fp, history, feats)

    def record(
        self,
        url: str,
        fingerprints: Fingerprints | None,
        status: str,
        fetched_at: float,
        features: Mapping[str, Any] | None = None,
    ) -> PageRecord:
        visit = encode_visit(fetched_at, status)
        fp = dump_fingerprints(fingerprints) if keeps_fingerprints(status) else ""
        feats = json.dumps(dict(features), separators=(",", ":")) if features else ""
        out = self._call(
            self._script,
            keys=[self.key(url), self._urls, self._meta],
            args=[visit, fp, feats, self.max_history, url],
        )
        return self._record(url, *out)

    def records(self) -> Iterator[PageRecord]:
        client = self.client
        batch: list[str] = []
        for raw in self._call(lambda: list(client.sscan_iter(self._urls, count=500))):
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
        return int(self._call(self.client.scard, self._urls))

    def due(self, now: float, budget: int = 0, policy: str = "change-rate", **kw: Any) -> list[str]:
        """The URLs to revisit now, best first (see :func:`focuscrawl.change.policy.due`)."""
        from focuscrawl.change.policy import due

        return due(self.records(), now, budget, policy, **kw)
