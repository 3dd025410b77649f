"""The Redis frontier: one best-first frontier shared by many workers, with leases.

Same semantics as :class:`~focuscrawl.frontier.memory.MemoryFrontier` (the contract suite), plus:

* **Leases.** ``pop`` moves the entry to an in-flight set with a deadline (Redis server time, so
  worker clocks do not matter); ``ack`` releases it. A lease that expires (its worker died)
  puts the entry back in the frontier, counted in ``<prefix>:stats`` ``frontier/redelivered``,
  with one more attempt in its flags byte; at ``quarantine_after`` attempts it goes to
  ``P:quarantine`` instead (see :mod:`focuscrawl.frontier.quarantine`). ``close()`` releases
  what the worker still holds (not an attempt).
* **No pickle.** Entries are bytes: ``fplen fp deflate(url \\0 json)`` (a preset dictionary of
  our JSON keys makes them about half as big). Nothing read from Redis is executed.
* **Compact de-duplication.** 8 bytes of the fingerprint, spread over small hashes that Redis keeps
  as listpacks (about 10 bytes per seen URL). Optionally a Bloom filter on plain bitmaps
  (``SETBIT``/``GETBIT``, no module) for URLs already fetched, at a configured false-positive rate.
* **Atomic.** push, pop, ack and requeue are Lua scripts (``frontier/rediswire/lua/``), loaded
  once; every call goes through the wire layer (:mod:`focuscrawl.frontier.rediswire`).
* **Redis down.** Every call retries with exponential back-off and a clear error log until
  ``retry_timeout`` passes; scripts are idempotent enough that a retried call loses nothing. A
  crawl's frontier (``nonblocking``, set by the scheduler) never waits: it raises
  :class:`~focuscrawl.frontier.redis_health.FrontierUnavailable`, keeps what it did not send,
  and sends it again at :meth:`RedisFrontier.resume` (the scheduler pauses meanwhile).
* **Redis full.** A page's links and its ack are one script (``pushack``): Redis at
  ``maxmemory`` refuses it whole, the batch is kept and sent again at ``resume()``; an evicting
  ``maxmemory-policy`` is refused at ``open()`` (see :mod:`focuscrawl.frontier.redis_health`).
* **Leases renewed.** :meth:`RedisFrontier.renew_leases` (the scheduler calls it on a timer)
  restarts the leases of the entries this worker holds, so a slow page is not re-delivered.

Key schema (``P`` = prefix, default ``focuscrawl:<spider>``):

=======================  ======  ===========================================================
key                      type    content
=======================  ======  ===========================================================
``P:hosts``              zset    one member per host with queued URLs: ``seq5 + host``, score
                                 ``-best score`` (ties in insertion order via ``seq5``)
``P:ht``                 hash    host → its current member in ``P:hosts``
``P:h:<host>``           zset    the host's head: ``seq5 + entry``, score ``-score``
``P:l:<host>:<level>``   list    entries of a lower score level (``score8 + entry``), unsorted
``P:lv:<host>``          zset    the levels that have a list
``P:thr``                hash    host → lowest level kept in the head
``P:s:<bucket>``         hash    de-dup index: field = fingerprint bytes 3–8; value = packed
                                 score (queued) or empty (seen)
``P:bloom:<n>``          string  Bloom filter bits (only with ``bloom_error_rate``)
``P:lease``              zset    fp8 → lease deadline (server time, seconds)
``P:inflight``           hash    fp8 → ``hostlen host score8 entry`` of popped, unacked entries
``P:attempts``           hash    fp8 → attempts of re-delivered entries (until acked)
``P:quarantine``         hash    fp8 → ``attempts(1) time(8) hostlen host score8 entry``
``P:n``                  string  number of queued URLs
``P:seq``                string  insertion counter
``P:meta``               hash    ``bucket_bits``, ``bloom_bits``, ``bloom_hashes`` (fixed at creation)
``P:stats``              hash    shared counters (see :mod:`focuscrawl.cluster.stats`)
=======================  ======  ===========================================================

A host's queue keeps its best entries exactly ordered in the head zset; when the head passes
``head_size`` entries, whole lower score levels (14-bit prefixes of the score) move out to
lists, and come back to the head, in insertion order, when the head empties. So ordering stays
exact while most queued entries sit in compact lists rather than in a skiplist.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from focuscrawl.frontier.base import FrontierEntry, HostBusy, never_busy
from focuscrawl.frontier.prefetch import Prefetched
from focuscrawl.frontier.redis_entry import (  # re-exported: tests and benches use them here
    _ZDICT,
    ENTRY_FORMAT,
    MAX_ENTRY_BYTES,
    decode_entry,
    encode_entry,
)
from focuscrawl.frontier.redis_health import FrontierUnavailable
from focuscrawl.frontier.rediswire.shard import PUSH_CHUNK, PushItem, QueueShard
from focuscrawl.frontier.workmark import claim_dead_marks

logger = logging.getLogger(__name__)

__all__ = [
    "_ZDICT",
    "ENTRY_FORMAT",
    "MAX_ENTRY_BYTES",
    "PUSH_CHUNK",
    "PushItem",
    "RedisFrontier",
    "decode_entry",
    "encode_entry",
]


class RedisFrontier(QueueShard):
    """The frontier contract on one Redis: one :class:`QueueShard`, popped best-first."""

    def __init__(self, url: str, prefix: str, **options: Any) -> None:
        super().__init__(url, prefix, **options)
        self.pop_ahead = False  # see pop(); on for a crawl's frontier (from_settings)
        # ``prefetch(url, wait)`` → (command, deliver) or None: a read sent with the next pop
        # for the URL just popped (the change store's record, see from_settings); ``wait``
        # reads its reply now
        self.prefetch: Callable[[str, Callable[[], None]], Prefetched] | None = None

    @classmethod
    def from_settings(cls, settings: Any, spider_name: str) -> RedisFrontier:
        from focuscrawl.frontier.connection import frontier_options

        frontier = cls(**frontier_options(settings, spider_name))
        frontier.pop_ahead = True  # its prefetch is handed in by the factory
        return frontier

    def open(self) -> None:
        super().open()
        if self.mark_dir and self.quarantine_after:
            for data in claim_dead_marks(self.mark_dir):
                deaths = self.blame(data)
                logger.info("a dead worker died working on %s (death %d)", data[:8].hex(), deaths)

    def pop(self, busy: HostBusy = never_busy) -> FrontierEntry | None:
        """The best entry of a host that is not ``busy``, in one round trip when the hosts
        at the top are those of the previous pop (``busy`` is asked, in order, about the hosts
        before the first free one; Redis scans past the busy ones and pops).

        With ``pop_ahead`` (a crawl's frontier), the next entry is popped as this one is
        returned, without waiting: the next ``pop`` finds its reply already read or in the
        socket, so a pop costs no wait. That entry is leased from then on (counted in
        ``len()``, not in ``in_flight()``'s own share), and ``close()`` puts it back."""
        self.requeue_expired()
        ahead = self.take_ahead()  # nothing free then, or a host to ask about: popped now
        entry = self.entry_of(ahead) if ahead is not None and ahead.is_entry else None
        if entry is None:
            entry = self.pop_now(busy)
        if entry is not None:
            self.lease_taken(entry)
            if self.pop_ahead:
                # a failed send is kept and sent again (the next call meets the outage): this
                # entry is handed out all the same (else leased, renewed, and never fetched)
                with contextlib.suppress(FrontierUnavailable):
                    self.send_ahead(busy, entry.url)
        return entry

    def send_ahead(self, busy: HostBusy, url: str = "") -> None:
        """Pop the next entry without waiting; with it, the ``prefetch`` read of ``url``."""
        read = self.prefetch(url, self.wire.read_sent) if self.prefetch and url else None
        if read is not None:  # its own batch: a failed read costs the pop nothing
            self.queue_read(*read)
        self.send_pop_ahead(busy)
