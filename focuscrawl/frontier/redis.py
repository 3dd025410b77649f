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
* **Atomic.** push, pop, ack and requeue are Lua scripts (:mod:`focuscrawl.frontier.redis_scripts`), loaded once.
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
import hashlib
import logging
import math
import struct
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from focuscrawl.credentials import RedisAuthError, redact_text, redact_url
from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of, never_busy
from focuscrawl.frontier.prefetch import Prefetched
from focuscrawl.frontier.quarantine import Probation, QuarantineRecord, redis_record
from focuscrawl.frontier.redis_entry import (  # re-exported: tests and benches use them here
    _ZDICT,
    ENTRY_FORMAT,
    MAX_ENTRY_BYTES,
    decode_entry,
    encode_entry,
)
from focuscrawl.frontier.redis_health import (
    FrontierUnavailable,
    check_eviction_policy,
    cluster_refusal,
    is_oom,
)

logger = logging.getLogger(__name__)
__all__ = [
    "_ZDICT",
    "ENTRY_FORMAT",
    "MAX_ENTRY_BYTES",
    "RedisFrontier",
    "decode_entry",
    "encode_entry",
]

T = TypeVar("T")
_RESULTS = {r.value: r for r in PushResult}
HOSTS_PER_PEEK = 16  # hosts a pop reply names (the top ones, or those to ask busy about)
PUSH_CHUNK = 256  # pushes per Lua call in push_many
# socket timeouts of the frontier's connection (a URL's own socket_timeout=… wins): a Redis that
# hangs must not hold the reactor for ever
SOCKET_TIMEOUTS = {"socket_connect_timeout": 5.0, "socket_timeout": 30.0}
PushItem = tuple[Any, ...]  # (url, score, fingerprint, data) or (..., force)


def load_scripts() -> dict[str, str]:
    """The Lua scripts by name, each with the shared prelude in front."""
    from focuscrawl.frontier.redis_scripts import LUA

    text = LUA
    chunks: dict[str, list[str]] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("--@"):
            name = line[3:].strip()
            chunks[name] = []
        elif name:
            chunks[name].append(line)
    prelude = "\n".join(chunks.pop("prelude"))
    return {n: prelude + "\n" + "\n".join(body) for n, body in chunks.items()}


def bucket_bits_for(capacity: int) -> int:
    """Enough de-dup buckets for about 32 fingerprints each at ``capacity`` URLs (listpack-sized)."""
    return max(4, min(28, math.ceil(math.log2(max(capacity, 16) / 32))))


def bloom_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """(bits, hashes) of a Bloom filter holding ``capacity`` items at ``error_rate``."""
    bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    hashes = max(1, round(bits / capacity * math.log(2)))
    return bits, hashes


def bloom_offsets(fingerprint: bytes, bits: int, hashes: int) -> str:
    """``key:offset`` bit positions of ``fingerprint`` (double hashing), keys of 2**31 bits."""
    digest = hashlib.blake2b(fingerprint, digest_size=16).digest()
    h1 = int.from_bytes(digest[:8], "big")
    h2 = int.from_bytes(digest[8:], "big") | 1
    out = []
    for i in range(hashes):
        pos = (h1 + i * h2) % bits
        out.append(f"{pos >> 31}:{pos & 0x7FFFFFFF}")
    return ",".join(out)


class RedisFrontier:
    def __init__(
        self,
        url: str,
        prefix: str,
        *,
        lease: float = 300.0,
        capacity: int = 1_000_000,
        bloom_error_rate: float = 0.0,
        head_size: int = 64,
        retry_timeout: float = 600.0,
        requeue_interval: float = 1.0,
        quarantine_after: int = 0,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.lease = lease
        self.capacity = capacity
        self.bloom_error_rate = bloom_error_rate
        self.head_size = head_size
        self.retry_timeout = retry_timeout
        self.requeue_interval = requeue_interval
        self.redelivered = 0
        self.bad_entries = 0
        self.sends = 0  # sendall calls, and calls that waited for replies (benches count them)
        self.waits = 0
        self.quarantine_after = quarantine_after  # 0: re-deliver forever, no probation
        self.quarantined: list[QuarantineRecord] = []  # by this worker, for the scheduler
        self._probation = Probation()
        self._leased: set[bytes] = set()  # fp8 of entries pop() returned, not acked
        self._client: Any = None
        self._scripts: dict[str, Any] = {}
        self._bucket_bits = 0
        self._bloom: tuple[int, int] | None = None
        self._next_requeue = 0.0
        # from the last requeue: seconds until the earliest lease left expires (-1: none left)
        self.requeue_wait = -1.0
        self._top_hosts: list[str] = []  # the hosts at the top after the last pop
        # every command goes through one connection of our own, in order: a push sent without
        # waiting (push_many with on_results) is applied before anything sent after it, and
        # its reply is read, and handed to on_results, at the next call that waits
        self._conn: Any = None
        self._shas: dict[str, str] = {}
        self._unread: list[_Sent] = []  # sent, replies not read yet
        self._outbox: list[_Sent] = []  # queued, not sent yet
        self.pop_ahead = False  # see pop(); on for a crawl's frontier (from_settings)
        # the pop sent ahead: None (none), [] (reply not read yet) or its reply
        self._ahead: list[Any] | None = None
        # ``prefetch(url, wait)`` → (command, deliver) or None: a read sent with the next pop
        # for the URL just popped (the change store's record, see from_settings); ``wait``
        # reads its reply now
        self.prefetch: Callable[[str, Callable[[], None]], Prefetched] | None = None
        # a shard of a Redis Cluster: the URL of the node serving its slot now (after a failover)
        self.relocate: Callable[[], str] | None = None
        # a crawl's frontier: never wait for Redis (raise FrontierUnavailable, see resume())
        self.nonblocking = False
        self._resend = False  # the connection failed: send every unread batch again
        self._held: list[_Sent] = []  # batches Redis refused (OOM): sent again by resume()

    @classmethod
    def from_settings(cls, settings: Any, spider_name: str) -> RedisFrontier:
        from focuscrawl.frontier.connection import frontier_options

        frontier = cls(**frontier_options(settings, spider_name))
        frontier.pop_ahead = True  # its prefetch is handed in by the factory
        return frontier

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        import redis

        self._client = redis.Redis.from_url(self.url, **SOCKET_TIMEOUTS)
        self._scripts = {
            name: self._client.register_script(src) for name, src in load_scripts().items()
        }
        self._shas = {name: script.sha for name, script in self._scripts.items()}
        pool = self._client.connection_pool
        self._conn = pool.connection_class(**pool.connection_kwargs)
        self._retry(self._load_meta)
        self._retry(lambda: check_eviction_policy(self._client, self.url))
        (logger.debug if self.relocate else logger.info)(
            "Redis frontier %s at %s: %d queued, %d in flight",
            self.prefix,
            redact_url(self.url),
            len(self),
            self.in_flight(),
        )

    def _relocated(self) -> bool:
        """A cluster shard's node failed: connect to the node that serves its slot now (a
        replica promoted in its place); what was not read is sent again there. Whether the
        shard moved."""
        import redis

        assert self.relocate is not None
        url = self.relocate()
        if url == self.url:
            return False
        logger.warning(
            "Frontier shard %s moved from %s to %s",
            self.prefix,
            redact_url(self.url),
            redact_url(url),
        )
        old = self._client
        self.url = url
        self._client = redis.Redis.from_url(url, **SOCKET_TIMEOUTS)
        pool = self._client.connection_pool
        self._conn.disconnect()
        self._conn = pool.connection_class(**pool.connection_kwargs)
        self._resend = True
        old.close()
        return True

    def _load_meta(self) -> None:
        meta_key = f"{self.prefix}:meta"
        wanted = {"bucket_bits": bucket_bits_for(self.capacity), "format": ENTRY_FORMAT}
        if self.bloom_error_rate > 0:
            bits, hashes = bloom_size(self.capacity, self.bloom_error_rate)
            wanted |= {"bloom_bits": bits, "bloom_hashes": hashes}
        for field, value in wanted.items():
            self._client.hsetnx(meta_key, field, value)  # the first worker fixes the layout
        meta = {k.decode(): int(v) for k, v in self._client.hgetall(meta_key).items()}
        if meta["format"] != ENTRY_FORMAT:
            raise RuntimeError(
                f"{meta_key} was written in entry format {meta['format']}, this focuscrawl "
                f"reads {ENTRY_FORMAT}: finish that crawl with its version or use another prefix"
            )
        self._bucket_bits = meta["bucket_bits"]
        if "bloom_bits" in meta:
            self._bloom = (meta["bloom_bits"], meta["bloom_hashes"])

    def close(self) -> None:
        if self._client is not None:
            try:
                self._outbox[:0], self._held = self._held, []
                self.flush()
                self._release_ahead()
                self._release_leased()
            finally:
                self._conn.disconnect()
                self._client.close()
                self._client = None

    def _release_ahead(self) -> None:
        """Put the entry popped ahead (if any) back in the frontier."""
        reply = self._ahead_reply()
        self._ahead = None
        if reply is not None and reply[0] == b"!":
            self._run("release", [reply[2][1:9]])

    def _release_leased(self) -> None:
        """A graceful close: what this worker still holds goes back now, not as an attempt."""
        leased = sorted(self._leased)
        self._leased.clear()
        if leased:
            self._exec([self._eval("release", [fp8]) for fp8 in leased])

    def flush(self) -> None:
        """Send what is queued, wait for every reply, and hand the results over."""
        if self._unread or self._outbox:
            self._exec([])

    # -- queue operations -----------------------------------------------------------------
    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult:
        result = self._run("push", self._push_args(url, score, fingerprint, data, force))
        return _RESULTS[result.decode()]

    def push_many(
        self,
        items: Sequence[PushItem],
        ack: Sequence[bytes] = (),
        on_results: Callable[[list[PushResult]], None] | None = None,
    ) -> list[PushResult] | None:
        """Push ``(url, score, fingerprint, data[, force])`` items, then acknowledge the ``ack``
        fingerprints, all in one round trip (a page's links and its own ack; seeding; benches).
        The pushes run before the acks: a worker that dies in between loses no link.

        With ``on_results``, the call returns at once (None): the commands are queued and go
        out with the next call that sends (the next pop: one ``sendall`` for both), Redis
        applies them before anything later of this frontier, and their results go to
        ``on_results`` when a later call reads them. A connection error sends them again
        (pushes and acks are idempotent). A worker killed before they went out loses no
        link: the page's ack was queued with them, so its lease expires and it is fetched
        again."""
        commands: list[tuple[Any, ...]] = []
        chunks = [items[i : i + PUSH_CHUNK] for i in range(0, len(items), PUSH_CHUNK)] or [[]]
        for n, chunk in enumerate(chunks):
            acks = ack if n == len(chunks) - 1 else ()  # with the last links: one script
            commands.append(self._pushack(chunk, acks, acks_first=False))
        for fp in ack:
            self._acked(fp)
        if not items and not ack:
            commands = []

        def results(replies: list[Any]) -> list[PushResult]:
            return [_RESULTS[r.decode()] for reply in replies for r in reply]

        if on_results is None:
            return results(self._exec(commands))
        if commands:
            self._exec(commands, lambda replies: on_results(results(replies)), send=False)
        return None

    def _pushack(
        self, items: Sequence[PushItem], acks: Sequence[bytes], acks_first: bool
    ) -> tuple[Any, ...]:
        """One ``pushack`` call: the pushes and the acks, applied together or not at all."""
        args: list[Any] = ["1" if acks_first else "0", len(acks)]
        for fp in acks:
            args += [fp[:8], self._offsets(fp)]
        for item in items:
            args += self._push_args(*item)
        return self._eval("pushack", args)

    def push_replacing(self, item: PushItem, parent: bytes) -> PushResult:
        """Push a redirect or retry and acknowledge the request it replaces, in one script
        (the ack first: the new request may have the parent's fingerprint)."""
        self._acked(parent)
        (reply,) = self._exec([self._pushack([item], [parent], acks_first=True)])
        return _RESULTS[reply[0].decode()]

    def renew_leases(self) -> None:
        """Restart the leases of the entries this worker holds (sent without waiting: the
        reply is read with the next call). A worker that stops renewing (it died) loses
        them after ``lease`` seconds."""
        held = set(self._leased)
        if self._ahead and self._ahead[0] == b"!":
            held.add(self._ahead[2][1:9])  # popped ahead, not handed out yet
        if held and not self._resend and not self._held:
            command = self._eval("renew", [repr(self.lease), *held])
            self._exec([command], lambda replies: None)

    @property
    def refused(self) -> bool:
        """Redis refused a batch of links (out of memory): held for :meth:`resume`."""
        return bool(self._held)

    def resume(self) -> None:
        """Send again what Redis refused (OOM) or did not get (unreachable), and read every
        reply; :class:`FrontierUnavailable` while it still cannot."""
        self._outbox[:0], self._held = self._held, []
        self._exec([])
        if self._held:
            raise FrontierUnavailable(f"Redis at {redact_url(self.url)} is still full", "oom")

    def _push_args(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> list[Any]:
        score = float(score) + 0.0  # -0.0 → 0.0: packed scores are compared as bytes
        if math.isnan(score):
            raise ValueError(f"score of {url} is NaN")
        host = host_of(url)
        rest = encode_entry(url, fingerprint, data, host, score)
        return [host, repr(score), rest, "1" if force else "0", self._offsets(fingerprint)]

    def pop(self, busy: HostBusy = never_busy) -> FrontierEntry | None:
        """The best entry of a host that is not ``busy``, in one round trip when the hosts
        at the top are those of the previous pop (``busy`` is asked, in order, about the hosts
        before the first free one; Redis scans past the busy ones and pops).

        With ``pop_ahead`` (a crawl's frontier), the next entry is popped as this one is
        returned, without waiting: the next ``pop`` finds its reply already read or in the
        socket, so a pop costs no wait. That entry is leased from then on (counted in
        ``len()``, not in ``in_flight()``'s own share), and ``close()`` puts it back."""
        self.requeue_expired()
        entry = self._take_ahead()
        if entry is None:
            entry = self._pop_now(busy)
        if entry is not None:
            self._leased.add(entry.fingerprint[:8])
            if entry.attempts and self.quarantine_after:
                self._probation.delivered(entry.fingerprint[:8])
            if self.pop_ahead:
                # a failed send is kept and sent again (the next call meets the outage): this
                # entry is handed out all the same (else leased, renewed, and never fetched)
                with contextlib.suppress(FrontierUnavailable):
                    self._send_ahead(busy, entry.url)
        return entry

    def _ask(self, busy: HostBusy, ask: list[str], known: dict[str, bool]) -> list[Any]:
        """``popbest`` arguments: ``busy`` asked, in order, about ``ask`` up to a free host."""
        for host in ask:
            if host not in known:
                known[host] = busy(host)
                if not known[host]:
                    break
        # a suspect (re-delivered entry) in flight: the script passes over hosts whose next
        # entry is one, as over busy hosts
        suspects = "0" if self.quarantine_after and self._probation.blocking() else "1"
        args: list[Any] = [repr(self.lease), HOSTS_PER_PEEK, suspects]
        for host, is_busy in known.items():
            args += [host, "1" if is_busy else "0"]
        return args

    def _pop_now(self, busy: HostBusy) -> FrontierEntry | None:
        known: dict[str, bool] = {}
        ask = self._top_hosts
        while True:
            reply = self._run("popbest", self._ask(busy, ask, known))
            if not reply:
                return None
            if reply[0] == b"?":
                ask = [h.decode() for h in reply[1:]]
                continue
            entry = self._entry_of(reply)
            if entry is not None:
                return entry
            return self._pop_now(busy)

    def _entry_of(self, reply: list[Any]) -> FrontierEntry | None:
        """The entry of a ``popbest`` reply ``{"!", host, rest, score8, top hosts...}``; None
        (dropped, counted, acked) when it was not written by us."""
        host, rest, score8 = reply[1].decode(), reply[2], reply[3]
        self._top_hosts = [h.decode() for h in reply[4:]]
        try:
            return decode_entry(rest, struct.unpack(">d", score8)[0], host)
        # not written by us (or a forged entry that reaches into missing fields): drop it, go on
        except (ValueError, zlib.error, KeyError, TypeError, IndexError) as exc:
            self.bad_entries += 1
            logger.error("Dropped an unreadable frontier entry of %s: %s", host, exc)
            self._run("ack", [rest[1:9], ""])
            return None

    def _send_ahead(self, busy: HostBusy, url: str = "") -> None:
        """Pop the next entry without waiting; with it, the ``prefetch`` read of ``url``."""
        args = self._ask(busy, self._top_hosts, {})
        commands = [self._eval("popbest", args)]
        self._ahead = []  # filled with the reply when it is read
        read = self.prefetch(url, self._read_sent) if self.prefetch and url else None
        if read is not None:  # its own batch: a failed read costs the pop nothing
            command, deliver = read
            self._exec([command], lambda replies: deliver(replies[0]), send=False)
        self._exec(commands, self._got_ahead)

    def _read_sent(self) -> None:
        """Read the replies of what was sent (what is queued waits for the next send)."""
        if self._unread:
            self._exec([], send=False)

    def _got_ahead(self, replies: list[Any]) -> None:
        reply = replies[0]
        self._ahead = reply if reply and not isinstance(reply, Exception) else [b"-"]

    def _ahead_reply(self) -> list[Any] | None:
        """The reply of the pop sent ahead (read now if it was not), or None."""
        if self._ahead is None:
            return None
        if not self._ahead:
            self._exec([], send=False)  # its reply only: what is queued waits for the next send
        return self._ahead

    def _take_ahead(self) -> FrontierEntry | None:
        reply = self._ahead_reply()
        self._ahead = None
        if not reply or reply[0] != b"!":  # nothing free then, or a host to ask about
            return None
        return self._entry_of(reply)

    def ack(self, fingerprint: bytes) -> None:
        self._acked(fingerprint)
        self._run("ack", [fingerprint[:8], self._offsets(fingerprint)])

    def _acked(self, fingerprint: bytes) -> None:
        self._leased.discard(fingerprint[:8])
        self._probation.done(fingerprint[:8])

    def seen(self, fingerprint: bytes) -> bool:
        return bool(self._run("seen", [fingerprint[:8], self._offsets(fingerprint)]))

    def __len__(self) -> int:
        (n,) = self._exec([("GET", f"{self.prefix}:n")])
        ahead = self._ahead  # read by now: counted, it is this worker's next entry
        return int(n or 0) + (1 if ahead and ahead[0] == b"!" else 0)

    def in_flight(self) -> int:
        (n,) = self._exec([("ZCARD", f"{self.prefix}:lease")])
        return int(n)

    def leased_elsewhere(self) -> int:
        """Entries leased by other workers, or by an earlier run that stopped without giving
        them back (Redis was away, or it was killed): a crawl that ends now leaves them behind.
        Their leases expire (or their workers acknowledge them) and they come back to a pop."""
        n = self.in_flight()  # reads every reply first: the entry popped ahead is known
        ahead = self._ahead
        return max(0, n - len(self._leased) - (1 if ahead and ahead[0] == b"!" else 0))

    def requeue_expired(self, force: bool = False) -> int:
        """Put entries whose lease expired back in the frontier (at most once a second), or
        in quarantine at their ``quarantine_after``-th attempt (added to ``quarantined``)."""
        now = time.monotonic()
        if not force and now < self._next_requeue:
            return 0
        self._next_requeue = now + self.requeue_interval
        n = 0
        while True:
            due, moved = self._requeued(self._run("requeue", [1000, self.quarantine_after]))
            n += moved
            if due < 1000:
                break
        return n

    def _requeued(self, reply: list[Any]) -> tuple[int, int]:
        """A ``requeue`` reply taken in: (expired leases handled, re-queued)."""
        due, moved, wait, *records = reply
        self.requeue_wait = float(wait)
        for fp8, value in zip(records[::2], records[1::2], strict=True):
            self.quarantined.append(redis_record(fp8, value))
        if int(moved):
            self.redelivered += int(moved)
            logger.warning("%d expired leases returned to the frontier (worker died?)", moved)
        return int(due), int(moved)

    # -- plumbing -------------------------------------------------------------------------
    def _offsets(self, fingerprint: bytes) -> str:
        if self._bloom is None:
            return ""
        return bloom_offsets(fingerprint[:8], *self._bloom)

    def _args(self, args: list[Any]) -> list[Any]:
        return [self.prefix, self._bucket_bits, self.head_size, *args]

    def _run(self, name: str, args: list[Any]) -> Any:
        (reply,) = self._exec([self._eval(name, args)])
        return reply

    def _eval(self, name: str, args: list[Any]) -> tuple[Any, ...]:
        """The ``EVALSHA`` of script ``name``. It declares one key of the prefix (every key a
        script touches shares the prefix's hash tag on a Redis Cluster: one slot, and a node
        that does not serve it answers ``MOVED`` instead of running it)."""
        return ("EVALSHA", self._shas[name], 1, f"{self.prefix}:n", *self._args(args))

    def _exec(
        self,
        commands: list[tuple[Any, ...]],
        later: Callable[[list[Any]], None] | None = None,
        send: bool = True,
    ) -> list[Any]:
        """Send ``commands`` on our connection, after those queued or sent before them.

        ``later`` given: return at once; ``later(replies)`` runs when a later call reads them;
        with ``send=False`` they are only queued, and go out with the next call that sends
        (one ``sendall`` for a page's links, its ack and the next pop). Else read every reply
        of what was sent (handing each to its ``later``) and return these; ``send=False``
        then reads without sending what is queued. While Redis is unreachable, retry with
        back-off (see :meth:`_retry`), sending every unread command again; scripts a
        restarted Redis lost are loaded and run again."""
        sent = _Sent(commands, later)
        if commands:
            self._outbox.append(sent)
        if later is not None and not send:
            return []

        def attempt() -> list[Any]:
            conn = self._conn
            if send:
                self._unread.extend(self._outbox)
                self._outbox = []
            if self._resend:  # the connection failed: everything unread goes again
                conn.disconnect()
                batches = self._unread
            else:
                batches = [b for b in self._unread if not b.sent]
            self._resend = True  # until this attempt has sent (and read) all it should
            every = [c for batch in batches for c in batch.commands]
            if every:
                conn.send_packed_command(conn.pack_commands(every), check_health=False)
                self.sends += 1
            for batch in batches:
                batch.sent = True
            if later is not None:
                self._resend = False
                return []
            self.waits += 1
            replies = self._read_all(sent)
            self._resend = False
            return replies

        return self._retry(attempt)

    def _read_all(self, upto: _Sent) -> list[Any]:
        """Read the replies of every unread batch; hand each to its ``later``; return those
        of ``upto``. Batches leave the unread list only once all is read (an error before
        that sends them all again)."""
        import redis

        read: list[tuple[_Sent, list[Any]]] = []
        for batch in self._unread:
            replies: list[Any] = []
            for _ in batch.commands:
                try:
                    replies.append(self._conn.read_response())
                except redis.exceptions.BusyLoadingError:
                    raise
                except redis.ResponseError as exc:  # the rest of the batch's replies follow
                    replies.append(exc)
            read.append((batch, replies))
        self._rerun_unloaded(read)
        down = next((r for _, replies in read for r in replies if cluster_refusal(r)), None)
        if down is not None:  # not run: every unread batch goes again once the cluster is back
            raise redis.ConnectionError(f"the Redis Cluster is failing over: {down}")
        del self._unread[: len(read)]
        mine: list[Any] = []
        for batch, replies in read:
            if batch is upto:
                mine = replies
            elif batch.later is not None and any(is_oom(r) for r in replies):
                batch.sent = False
                self._held.append(batch)  # refused whole (one script a page): resume() resends
            else:
                batch.deliver(replies)
        oom = next((r for r in mine if is_oom(r)), None)
        if oom is not None:  # (a batch held above is reported by ``refused``: this reply is ok)
            raise FrontierUnavailable(
                f"Redis at {redact_url(self.url)} is full (maxmemory): "
                f"{redact_text(str(oom), self.url)}",
                "oom",
            )
        for reply in mine:
            if isinstance(reply, Exception):
                raise reply
        return mine

    def _rerun_unloaded(self, read: list[tuple[_Sent, list[Any]]]) -> None:
        """Commands that met a Redis without our scripts (restarted): load them, run again
        (in their order; every reply before is read, so the connection is ours)."""
        import redis

        lost = [
            (replies, i)
            for _, replies in read
            for i, r in enumerate(replies)
            if isinstance(r, redis.exceptions.NoScriptError)
        ]
        if not lost:
            return
        commands = {id(replies): batch.commands for batch, replies in read}
        conn = self._conn
        loads = [("SCRIPT", "LOAD", script.script) for script in self._scripts.values()]
        again = [commands[id(replies)][i] for replies, i in lost]
        conn.send_packed_command(conn.pack_commands(loads + again), check_health=False)
        for _ in loads:
            conn.read_response()
        for replies, i in lost:
            try:
                replies[i] = conn.read_response()
            except redis.exceptions.BusyLoadingError:
                raise
            except redis.ResponseError as exc:
                replies[i] = exc

    def _retry(self, call: Callable[[], T]) -> T:
        """Run ``call``; while Redis is unreachable, log and retry with exponential back-off."""
        import redis

        if self._client is None:
            raise RuntimeError("RedisFrontier used before open()")
        delay, waited, moved = 0.25, 0.0, False
        while True:
            try:
                return call()
            except redis.AuthenticationError as exc:  # retrying cannot help
                raise RedisAuthError(self.url, exc) from None
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
                url = self.url
                if self.relocate is not None:
                    try:
                        if self._relocated() and not moved:
                            moved = True  # the slot's new master: sent there at once
                            continue
                    except (redis.RedisError, OSError) as again:  # the cluster is failing over
                        logger.debug("cluster not ready yet: %s", again)
                if self.nonblocking:  # the scheduler pauses, and calls resume() later
                    raise FrontierUnavailable(
                        f"Redis at {redact_url(url)} unreachable: {redact_text(str(exc), url)}"
                    ) from None
                if waited >= self.retry_timeout:
                    logger.error(
                        "Redis at %s still unreachable after %.0fs; giving up",
                        redact_url(self.url),
                        waited,
                    )
                    raise
                logger.error(
                    "Redis at %s unreachable (%s); retrying in %.1fs (nothing is lost: "
                    "the frontier lives in Redis)",
                    redact_url(self.url),
                    redact_text(str(exc), self.url),
                    delay,
                )
                time.sleep(delay)
                waited += delay
                delay = min(delay * 2, 10.0)


class _Sent:
    """Commands sent on the frontier's connection whose replies are not read yet."""

    __slots__ = ("commands", "later", "sent")

    def __init__(
        self, commands: list[tuple[Any, ...]], later: Callable[[list[Any]], None] | None
    ) -> None:
        self.commands = commands
        self.later = later
        self.sent = False

    def deliver(self, replies: list[Any]) -> None:
        if self.later is None:
            return
        failed = [r for r in replies if isinstance(r, Exception)]
        if failed:  # a bug, not an outage (those are retried): say so, keep crawling
            logger.error(
                "Redis frontier: %d command(s) sent ahead failed: %s", len(failed), failed[0]
            )
            return
        self.later(replies)
