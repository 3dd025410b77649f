"""The learned link judge's workers, sharing through Redis (:class:`~focuscrawl.strategy.policy.
JudgeShare`): one epoch counter, and the outcomes of the pages each worker judges.

- ``<prefix>:judge:epoch`` — the crawl's epoch, ``INCR``-ed by whichever worker re-scores: a
  re-scoring sits one epoch (``EPOCH_STEP``) above every score given before it by any worker,
  and a worker that joins late starts at the crawl's epoch, not at 0 (its links would sink
  below everything queued).
- ``<prefix>:judge:outcomes`` — a stream, one entry per worker epoch: ``w`` the worker, ``d`` a
  JSON list of ``[url, 0|1]``; capped (``MAXLEN ~``). Every worker reads the entries it has not
  read (at most :data:`READ_ENTRIES` per epoch) and learns the other workers' outcomes for the
  links it queued itself (a link found by one worker is mostly fetched by another: without
  them, a worker of three learns from a third of its own links' outcomes).

``share=False`` (``FOCUSCRAWL_JUDGE_SHARE=epoch``): the epoch only, each worker learning only
from the pages it fetches. Everything read is hostile: an entry that is not what a worker writes
is skipped and counted. Redis away: the epoch goes on locally and the outcomes wait (the policy
keeps them, capped) until Redis is back. No Scrapy here.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from focuscrawl.credentials import redact_text

logger = logging.getLogger(__name__)

STREAM_MAXLEN = 20_000  # outcome entries kept (one per worker epoch: ~25 pages each)
READ_ENTRIES = 200  # entries read per epoch at most
MAX_ENTRY = 1 << 20  # bytes of one entry's outcomes
MAX_URL = 8192
MAX_OUTCOMES = 10_000  # outcomes of one entry at most
MAX_EPOCH = 1 << 40  # a larger epoch in Redis is not a crawl's: held there


class RedisJudgeShare:
    def __init__(
        self, client: Any, prefix: str, worker: str, share: bool = True, url: str = ""
    ) -> None:
        """``client``: a ``redis.Redis`` or ``RedisCluster``; ``worker``: this worker's id (its
        own entries are skipped when read); ``url``: the Redis URL (its password masked in
        logs)."""
        self.client = client
        self.url = url
        self.share = share
        self.worker = worker
        self.epoch_key = f"{prefix}:judge:epoch"
        self.stream_key = f"{prefix}:judge:outcomes"
        self.last_id = "0"
        self.skipped = 0  # entries or outcomes read that were not what a worker writes
        self.errors = 0  # exchanges that failed (Redis away)
        self.sent = 0
        self.read = 0

    def start(self) -> int:
        import redis

        try:
            raw = self.client.get(self.epoch_key)
        except redis.RedisError as exc:
            self._failed(exc)
            return 0
        return _epoch_of(raw)

    def advance(self, mine: list[tuple[str, bool]]) -> tuple[int, list[tuple[str, bool]], bool]:
        import redis

        try:
            epoch = min(MAX_EPOCH, int(self.client.incr(self.epoch_key)))
        except (redis.RedisError, ValueError) as exc:
            self._failed(exc)
            return -1, [], False
        if not self.share:
            return epoch, [], True
        sent = True
        try:
            if mine:
                data = json.dumps([[u, int(r)] for u, r in mine], separators=(",", ":"))
                self.client.xadd(
                    self.stream_key,
                    {"w": self.worker, "d": data},
                    maxlen=STREAM_MAXLEN,
                    approximate=True,
                )
                self.sent += len(mine)
        except redis.RedisError as exc:
            self._failed(exc)
            sent = False
        try:
            got = self.client.xread({self.stream_key: self.last_id}, count=READ_ENTRIES)
        except redis.RedisError as exc:
            self._failed(exc)
            return epoch, [], sent
        return epoch, self._outcomes(got), sent

    def _outcomes(self, got: Any) -> list[tuple[str, bool]]:
        theirs: list[tuple[str, bool]] = []
        for _, entries in got or ():
            for entry_id, fields in entries:
                self.last_id = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
                if not isinstance(fields, dict):
                    self.skipped += 1
                    continue
                if fields.get(b"w", b"").decode("utf-8", "replace") == self.worker:
                    continue
                theirs.extend(self._decode(fields.get(b"d")))
        self.read += len(theirs)
        return theirs

    def _decode(self, raw: Any) -> list[tuple[str, bool]]:
        if not isinstance(raw, bytes) or len(raw) > MAX_ENTRY:
            self.skipped += 1
            return []
        try:
            items = json.loads(raw)
        except ValueError:
            self.skipped += 1
            return []
        if not isinstance(items, list) or len(items) > MAX_OUTCOMES:
            self.skipped += 1
            return []
        out: list[tuple[str, bool]] = []
        for item in items:
            if (
                isinstance(item, list)
                and len(item) == 2
                and isinstance(item[0], str)
                and len(item[0]) <= MAX_URL
                and item[0].startswith(("http://", "https://"))
                and item[1] in (0, 1)
            ):
                out.append((item[0], bool(item[1])))
            else:
                self.skipped += 1
        return out

    def _failed(self, exc: Exception) -> None:
        self.errors += 1
        if self.errors == 1 or self.errors % 100 == 0:
            logger.warning(
                "Link judge not shared with the other workers this epoch (%d so far; the "
                "outcomes are sent later): %s",
                self.errors,
                redact_text(str(exc), self.url),
            )


def _epoch_of(raw: Any) -> int:
    try:
        return min(MAX_EPOCH, max(0, int(raw))) if raw is not None else 0
    except (TypeError, ValueError):
        return 0
