"""Poison pages: a URL whose processing killed the crawler twice is quarantined, not retried.

A frontier entry is *delivered* when it is popped and *acknowledged* once its response's output
has been consumed (or its failure handled). A callback or pipeline that raises is acknowledged
too: Scrapy goes on. An entry delivered and never acknowledged is one whose process or worker
died while it was in flight (OOM, SIGKILL, a segfault in a parser). Each such delivery counts
one *attempt*:

* JOBDIR (:class:`~focuscrawl.frontier.memory.MemoryFrontier`): the journal already has a pop
  record and an ack record per page; a resume counts the pops without an ack (a graceful close
  writes a release record for what it still held, which does not count). The count is kept in
  the compacted journal.
* Redis (:class:`~focuscrawl.frontier.redis_frontier.RedisFrontier`): the count lives in the entry's
  flags byte, so the lease record carries it; the ``requeue`` script raises it when a lease expires,
  and keeps it in ``<prefix>:attempts`` too, from where a priority upgrade (which queues the
  pusher's fresh copy of the entry) takes it over. Per page: no round trip and no byte more; the ack
  script deletes one hash field (of a hash that is empty unless a worker died).

An entry that reaches ``quarantine_after`` attempts (``FOCUSCRAWL_QUARANTINE_AFTER``, 2) is not
delivered again: it is recorded (``JOBDIR/quarantine.jsonl``; the ``<prefix>:quarantine`` hash)
and stays *seen*, so a link found to it again is a duplicate.

Probation: a worker that dies kills every entry it has in flight, the poison and its innocent
neighbours alike, and re-delivered entries come back together. So a process holds at most one
re-delivered entry (a *suspect*) at a time: while one is in flight, hosts whose next entry is a
suspect are passed over, as a busy host is. A second death then counts a second attempt only
against the suspect it held, never against a bystander of the first death.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

logger = logging.getLogger(__name__)

QUARANTINE_FILE = "quarantine.jsonl"  # under JOBDIR, next to the frontier journal
# a suspect in flight longer than this no longer holds the others back (a request that was
# never acknowledged must not stall a crawl; downloads time out well before)
PROBATION_SECONDS = 300.0
# a Redis quarantine value: attempts, unix time, then the lease record of the entry
# (``hostlen host score8 entry``, see focuscrawl.frontier.redis_frontier)
REDIS_HEAD = struct.Struct(">Bd")


@dataclass(frozen=True, slots=True)
class QuarantineRecord:
    url: str
    fingerprint: str  # hex (the first 8 bytes for Redis entries)
    attempts: int
    time: float


class Probation:
    """The one suspect (re-delivered entry) a process may have in flight."""

    __slots__ = ("key", "since")

    def __init__(self) -> None:
        self.key: Any = None
        self.since = 0.0

    def blocking(self) -> bool:
        """True while a suspect is in flight: hold other suspects back."""
        if self.key is None:
            return False
        if time.monotonic() - self.since > PROBATION_SECONDS:
            self.key = None
            return False
        return True

    def delivered(self, key: Any) -> None:
        self.key = key
        self.since = time.monotonic()

    def done(self, key: Any) -> None:
        if key == self.key:
            self.key = None


def append_records(path: str, records: Iterable[QuarantineRecord]) -> None:
    """Append records as JSON lines. Written before the journal that would quarantine them again
    is replaced, so a kill in between repeats a line rather than losing one (readers dedupe)."""
    lines = b"".join(json.dumps(asdict(r), separators=(",", ":")).encode() + b"\n" for r in records)
    if not lines:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, lines)
    finally:
        os.close(fd)


def read_records(path: str) -> list[QuarantineRecord]:
    """The records of a quarantine file, one per fingerprint (the last), unreadable lines skipped."""
    out: dict[str, QuarantineRecord] = {}
    if not os.path.exists(path):
        return []
    with open(path, "rb") as fh:
        for line in fh:
            try:
                record = QuarantineRecord(**json.loads(line))
            except (ValueError, TypeError):
                continue
            out[record.fingerprint] = record
    return list(out.values())


def redis_record(fp8: bytes, value: bytes) -> QuarantineRecord:
    """Decode a ``<prefix>:quarantine`` value (written by the ``requeue`` script)."""
    from focuscrawl.frontier.redis_entry import decode_entry

    attempts, when = REDIS_HEAD.unpack_from(value)
    lease = value[REDIS_HEAD.size :]
    n = lease[0]
    host = lease[1 : 1 + n].decode("utf-8", "replace")
    score = struct.unpack(">d", lease[1 + n : 9 + n])[0]
    try:
        url = decode_entry(lease[9 + n :], score, host).url
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        url = f"<unreadable entry of {host}: {exc}>"
    return QuarantineRecord(url=url, fingerprint=fp8.hex(), attempts=attempts, time=when)


def read_redis_quarantine(client: Any, prefix: str) -> list[QuarantineRecord]:
    """Every quarantined URL of a Redis crawl (``client`` a ``redis.Redis``), oldest first."""
    raw = client.hgetall(f"{prefix}:quarantine")
    return sorted((redis_record(k, v) for k, v in raw.items()), key=lambda r: r.time)
