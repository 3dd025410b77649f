"""One queue under one key prefix on one Redis: the frontier's protocol over a :class:`Pipeline`.

A :class:`QueueShard` is what a worker knows of one prefix's queue (``P:hosts``, ``P:lease``,
… of :mod:`focuscrawl.frontier.redis_frontier`): the scripts called on it, the entries this
worker holds there (leases, the re-delivered ones on probation), the hosts at its top after
the last pop, and the pop sent ahead of need (:class:`PopAhead`). The one-Redis frontier is one
shard (:class:`~focuscrawl.frontier.redis_frontier.RedisFrontier`); the Redis Cluster frontier
(:class:`~focuscrawl.frontier.redis_shards.ShardedRedisFrontier`) keeps one per hash tag.
"""

from __future__ import annotations

import logging
import math
import os
import struct
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.credentials import redact_url
from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of
from focuscrawl.frontier.quarantine import Probation, QuarantineRecord
from focuscrawl.frontier.redis_entry import ENTRY_FORMAT, decode_entry, encode_entry
from focuscrawl.frontier.redis_health import (
    FrontierLost,
    FrontierUnavailable,
    check_eviction_policy,
    lost_message,
)
from focuscrawl.frontier.rediswire.layout import bloom_offsets, bloom_size, bucket_bits_for
from focuscrawl.frontier.rediswire.pipeline import Command, Pipeline
from focuscrawl.frontier.rediswire.replies import (
    NOTHING,
    PopKind,
    PopReply,
    RequeueReply,
    push_result,
    push_results,
)
from focuscrawl.frontier.rediswire.scripts import SCRIPTS
from focuscrawl.frontier.shard_keys import guard_key

__all__ = ["HOSTS_PER_PEEK", "PUSH_CHUNK", "REQUEUE_BATCH", "PopAhead", "PushItem", "QueueShard"]

logger = logging.getLogger(__name__)

HOSTS_PER_PEEK = 16  # hosts a pop reply names (the top ones, or those to ask busy about)
PUSH_CHUNK = 256  # pushes per Lua call in push_many
REQUEUE_BATCH = 1000  # expired leases one requeue script handles
PushItem = tuple[Any, ...]  # (url, score, fingerprint, data) or (..., force)


class PopAhead:
    """The pop sent ahead of need: :attr:`sent`, and once its reply is read, :attr:`reply`
    (``None`` while unread, and for good when the batch failed: nothing then)."""

    __slots__ = ("reply", "sent")

    def __init__(self) -> None:
        self.sent = False
        self.reply: PopReply | None = None

    def send(self) -> None:
        self.sent, self.reply = True, None

    def fill(self, replies: list[Any]) -> None:
        reply = replies[0]
        self.reply = NOTHING if isinstance(reply, Exception) else PopReply.decode(reply)

    def clear(self) -> None:
        self.sent, self.reply = False, None

    @property
    def entry(self) -> PopReply | None:
        """The entry popped ahead, once its reply is read (it is this worker's next)."""
        reply = self.reply
        return reply if reply is not None and reply.is_entry else None


class QueueShard:
    """One prefix's queue on one Redis (see the module docstring). Built without I/O;
    :meth:`open` connects."""

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
        self.prefix = prefix
        self.lease = lease
        self.capacity = capacity
        self.bloom_error_rate = bloom_error_rate
        self.head_size = head_size
        self.retry_timeout = retry_timeout
        self.requeue_interval = requeue_interval
        self.redelivered = 0
        self.bad_entries = 0
        self.quarantine_after = quarantine_after  # 0: re-deliver forever, no probation
        self.quarantined: list[QuarantineRecord] = []  # by this worker, for the scheduler
        # from the last requeue: seconds until the earliest lease left expires (-1: none left)
        self.requeue_wait = -1.0
        self.top_hosts: list[str] = []  # the hosts at the top after the last pop
        self.ahead = PopAhead()
        # every command goes through one connection of our own, in order: a push sent without
        # waiting (push_many with on_results) is applied before anything sent after it, and
        # its reply is read, and handed to on_results, at the next call that waits
        self.wire = Pipeline(url, SCRIPTS, name=prefix, retry_timeout=retry_timeout)
        self.leased: set[bytes] = set()  # fp8 of entries popped and handed out, not acked
        self.probation = Probation()
        self._bucket_bits = 0
        self._bloom: tuple[int, int] | None = None
        self.epoch = 0  # the crawl's epoch in P:meta, read at open
        self.mark_dir: str | None = None  # where dead workers' work marks are (workmark)
        self._next_requeue = 0.0

    # -- the connection's state, as the scheduler and its guard see it --------------------
    @property
    def url(self) -> str:
        return self.wire.url

    @property
    def nonblocking(self) -> bool:
        return self.wire.nonblocking

    @nonblocking.setter
    def nonblocking(self, value: bool) -> None:
        self.wire.nonblocking = value

    @property
    def relocate(self) -> Callable[[], str] | None:
        return self.wire.relocate

    @relocate.setter
    def relocate(self, value: Callable[[], str] | None) -> None:
        self.wire.relocate = value

    @property
    def sends(self) -> int:
        return self.wire.sends

    @property
    def waits(self) -> int:
        return self.wire.waits

    @property
    def refused(self) -> bool:
        """Redis refused a batch of links (out of memory): held for :meth:`resume`."""
        return self.wire.refused

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        self.wire.connect()
        self.wire.retry(self._load_meta)
        self.wire.retry(lambda: check_eviction_policy(self.wire.client, self.url))
        (logger.debug if self.relocate else logger.info)(
            "Redis frontier %s at %s: %d queued, %d in flight",
            self.prefix,
            redact_url(self.url),
            len(self),
            self.in_flight(),
        )

    def _load_meta(self) -> None:
        client = self.wire.client
        meta_key = f"{self.prefix}:meta"
        wanted = {"bucket_bits": bucket_bits_for(self.capacity), "format": ENTRY_FORMAT}
        if self.bloom_error_rate > 0:
            bits, hashes = bloom_size(self.capacity, self.bloom_error_rate)
            wanted |= {"bloom_bits": bits, "bloom_hashes": hashes}
        # the epoch: set by the first worker of a crawl; gone when Redis lost the frontier
        wanted["epoch"] = int.from_bytes(os.urandom(6), "big") or 1
        for field, value in wanted.items():
            client.hsetnx(meta_key, field, value)  # the first worker fixes the layout
        meta = {k.decode(): int(v) for k, v in client.hgetall(meta_key).items()}
        self.epoch = meta["epoch"]
        if meta["format"] != ENTRY_FORMAT:
            raise RuntimeError(
                f"{meta_key} was written in entry format {meta['format']}, this focuscrawl "
                f"reads {ENTRY_FORMAT}: finish that crawl with its version or use another prefix"
            )
        self._bucket_bits = meta["bucket_bits"]
        if "bloom_bits" in meta:
            self._bloom = (meta["bloom_bits"], meta["bloom_hashes"])

    def close(self) -> None:
        if self.wire.is_open:
            try:
                self.wire.requeue_held()
                self.flush()
                self.release_ahead()
                self._release_leased()
            finally:
                self.wire.close()

    def release_ahead(self) -> None:
        """Put the entry popped ahead (if any) back in the frontier."""
        reply = self.take_ahead()
        if reply is not None and reply.is_entry:
            self.run("release", [reply.fp8])

    def _release_leased(self) -> None:
        """A graceful close: what this worker still holds goes back now, not as an attempt."""
        leased = sorted(self.leased)
        self.leased.clear()
        if leased:
            self.wire.execute([self.command("release", [fp8]) for fp8 in leased])

    def flush(self) -> None:
        """Send what is queued, wait for every reply, and hand the results over."""
        self.wire.flush()

    def resume(self) -> None:
        """Send again what Redis refused (OOM) or did not get (unreachable), and read every
        reply; :class:`FrontierUnavailable` while it still cannot."""
        self.wire.requeue_held()
        self.wire.execute([])
        if self.wire.refused:
            raise FrontierUnavailable(f"Redis at {redact_url(self.url)} is still full", "oom")

    # -- pushes ---------------------------------------------------------------------------
    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult:
        return push_result(self.run("push", self.push_args(url, score, fingerprint, data, force)))

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
        commands = self.pushack_commands(items, ack)
        for fp in ack:
            self.mark_acked(fp)
        if not items and not ack:
            commands = []
        if on_results is None:
            return push_results(self.wire.execute(commands))
        if commands:
            self.wire.queue(commands, lambda replies: on_results(push_results(replies)))
        return None

    def pushack_commands(self, items: Sequence[PushItem], acks: Sequence[bytes]) -> list[Command]:
        """``pushack`` calls of ``PUSH_CHUNK`` links each, the ``acks`` with the last."""
        chunks = [items[i : i + PUSH_CHUNK] for i in range(0, len(items), PUSH_CHUNK)] or [[]]
        return [
            self.pushack_command(chunk, acks if n == len(chunks) - 1 else (), acks_first=False)
            for n, chunk in enumerate(chunks)
        ]

    def pushack_command(
        self, items: Sequence[PushItem], acks: Sequence[bytes], acks_first: bool
    ) -> Command:
        """One ``pushack`` call: the pushes and the acks, applied together or not at all."""
        args: list[Any] = ["1" if acks_first else "0", len(acks)]
        for fp in acks:
            args += [fp[:8], self.offsets(fp)]
        for item in items:
            args += self.push_args(*item)
        return self.command("pushack", args)

    def push_replacing(self, item: PushItem, parent: bytes) -> PushResult:
        """Push a redirect or retry and acknowledge the request it replaces, in one script
        (the ack first: the new request may have the parent's fingerprint)."""
        self.mark_acked(parent)
        (reply,) = self.wire.execute([self.pushack_command([item], [parent], acks_first=True)])
        return push_result(reply[0])

    def push_args(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> list[Any]:
        score = float(score) + 0.0  # -0.0 → 0.0: packed scores are compared as bytes
        if math.isnan(score):
            raise ValueError(f"score of {url} is NaN")
        host = host_of(url)
        rest = encode_entry(url, fingerprint, data, host, score)
        return [host, repr(score), rest, "1" if force else "0", self.offsets(fingerprint)]

    # -- pops -----------------------------------------------------------------------------
    def ask_args(self, busy: HostBusy, ask: list[str], known: dict[str, bool]) -> list[Any]:
        """``popbest`` arguments: ``busy`` asked, in order, about ``ask`` up to a free host."""
        for host in ask:
            if host not in known:
                known[host] = busy(host)
                if not known[host]:
                    break
        # a suspect (re-delivered entry) in flight: the script passes over hosts whose next
        # entry is one, as over busy hosts
        suspects = "0" if self.quarantine_after and self.probation.blocking() else "1"
        args: list[Any] = [repr(self.lease), HOSTS_PER_PEEK, suspects]
        for host, is_busy in known.items():
            args += [host, "1" if is_busy else "0"]
        return args

    def pop_now(
        self,
        busy: HostBusy,
        along: Command | None = None,
        on_along: Callable[[Any], None] | None = None,
    ) -> FrontierEntry | None:
        """The best entry of a host that is not ``busy``, waited for; not leased to this
        worker's count yet (:meth:`lease_taken`). ``along``: a command sent with each
        ``popbest`` call, its reply handed to ``on_along``."""
        known: dict[str, bool] = {}
        ask = self.top_hosts
        while True:
            commands = [self.command("popbest", self.ask_args(busy, ask, known))]
            if along is None:
                (raw,) = self.wire.execute(commands)
            else:
                raw, extra = self.wire.execute([*commands, along])
                assert on_along is not None
                on_along(extra)
            reply = PopReply.decode(raw)
            if reply.kind is PopKind.NOTHING:
                return None
            if reply.kind is PopKind.ASK:
                ask = reply.hosts
                continue
            entry = self.entry_of(reply)
            if entry is not None:
                return entry
            known, ask = {}, self.top_hosts  # unreadable, dropped: the next one

    def entry_of(self, reply: PopReply) -> FrontierEntry | None:
        """The entry of a ``popbest`` entry reply; None (dropped, counted, acked) when it was
        not written by us. The reply's top hosts are asked about first at the next pop."""
        self.top_hosts = reply.hosts
        try:
            return decode_entry(reply.rest, struct.unpack(">d", reply.score8)[0], reply.host)
        # not written by us (or a forged entry that reaches into missing fields): drop it, go on
        except (ValueError, zlib.error, KeyError, TypeError, IndexError) as exc:
            self.bad_entries += 1
            logger.error("Dropped an unreadable frontier entry of %s: %s", reply.host, exc)
            self.run("ack", [reply.fp8, ""])
            return None

    def lease_taken(self, entry: FrontierEntry) -> None:
        """``entry`` is handed out: held by this worker (renewed, released at close)."""
        self.leased.add(entry.fingerprint[:8])
        if entry.attempts and self.quarantine_after:
            self.probation.delivered(entry.fingerprint[:8])

    def put_top_host(self, host: str) -> None:
        """``host`` at the top: first of the hosts the next pop asks ``busy`` about (a pop
        sent ahead past an unknown top host would come back asking, and wait)."""
        if not self.top_hosts or self.top_hosts[0] != host:
            self.top_hosts = [host, *(h for h in self.top_hosts if h != host)]

    def send_pop_ahead(
        self,
        busy: HostBusy,
        along: Command | None = None,
        on_along: Callable[[Any], None] | None = None,
    ) -> None:
        """Pop the next entry without waiting (with what is queued); its reply fills
        :attr:`ahead` when a later call reads it. ``along`` as in :meth:`pop_now`."""
        commands = [self.command("popbest", self.ask_args(busy, self.top_hosts, {}))]
        self.ahead.send()
        if along is None:
            self.wire.execute(commands, self.ahead.fill)
            return

        def got(replies: list[Any]) -> None:
            self.ahead.fill(replies[:1])
            assert on_along is not None
            on_along(replies[1])

        self.wire.execute([*commands, along], got)

    def queue_read(self, command: Command, deliver: Callable[[Any], None]) -> None:
        """A read queued in its own batch (a failed read costs the pop beside it nothing, and
        is never sent again: the key may be of another slot, on another master now)."""
        self.wire.queue([command], lambda replies: deliver(replies[0]), optional=True)

    def take_ahead(self) -> PopReply | None:
        """The reply of the pop sent ahead (read now if it was not), or None; the buffer is
        empty after."""
        if not self.ahead.sent:
            return None
        if self.ahead.reply is None:
            self.wire.execute([], send=False)  # its reply only: what is queued waits
        reply = self.ahead.reply
        self.ahead.clear()
        return reply

    def held_here(self) -> int:
        """Entries this worker holds here: handed out, and the one popped ahead."""
        return len(self.leased) + (1 if self.ahead.entry else 0)

    # -- acks, leases, counts -------------------------------------------------------------
    def ack(self, fingerprint: bytes) -> None:
        self.mark_acked(fingerprint)
        self.run("ack", [fingerprint[:8], self.offsets(fingerprint)])

    def mark_acked(self, fingerprint: bytes) -> None:
        """This worker no longer holds ``fingerprint`` (its ack is sent, or queued)."""
        self.leased.discard(fingerprint[:8])
        self.probation.done(fingerprint[:8])

    def seen(self, fingerprint: bytes) -> bool:
        return bool(self.run("seen", [fingerprint[:8], self.offsets(fingerprint)]))

    def __len__(self) -> int:
        n = self.queued(self.wire.call(self.count_command()))
        # read by now: the entry popped ahead is counted, it is this worker's next entry
        return n + (1 if self.ahead.entry else 0)

    def blame(self, fingerprint: bytes) -> int:
        """A dead worker died working on this entry: one more death (the ``blame`` script)."""
        return int(self.run("blame", [fingerprint[:8]]))

    def count_command(self) -> Command:
        """Entries queued and the crawl's epoch, in one script (as cheap as a ``GET``)."""
        return self.command("count", [])

    def queued(self, reply: Any) -> int:
        """The count of a :meth:`count_command` reply; :class:`FrontierLost` when the epoch
        this worker opened the crawl with is gone (checked whenever the crawl asks whether
        anything is left: before it would end as finished)."""
        n, epoch = reply
        if self.epoch and epoch != str(self.epoch).encode() and epoch != str(self.epoch):
            raise FrontierLost(lost_message(f"{self.prefix} at {redact_url(self.url)}"))
        return int(n or 0)

    def in_flight(self) -> int:
        return int(self.wire.call(("ZCARD", f"{self.prefix}:lease")))

    def leased_elsewhere(self) -> int:
        """Entries leased by other workers, or by an earlier run that stopped without giving
        them back (Redis was away, or it was killed): a crawl that ends now leaves them behind.
        Their leases expire (or their workers acknowledge them) and they come back to a pop."""
        n = self.in_flight()  # reads every reply first: the entry popped ahead is known
        return max(0, n - self.held_here())

    def renew_leases(self) -> None:
        """Restart the leases of the entries this worker holds (sent without waiting: the
        reply is read with the next call). A worker that stops renewing (it died) loses
        them after ``lease`` seconds."""
        held = set(self.leased)
        ahead = self.ahead.entry
        if ahead is not None:
            held.add(ahead.fp8)  # popped ahead, not handed out yet
        if held and self.wire.settled:
            command = self.command("renew", [repr(self.lease), *held])
            self.wire.execute([command], lambda replies: None)

    def requeue_expired(self, force: bool = False) -> int:
        """Put entries whose lease expired back in the frontier (at most once a second), or
        in quarantine at their ``quarantine_after``-th attempt (added to ``quarantined``)."""
        now = time.monotonic()
        if not force and now < self._next_requeue:
            return 0
        self._next_requeue = now + self.requeue_interval
        n = 0
        while True:
            due, moved = self.apply_requeue(self.wire.call(self.requeue_command()))
            n += moved
            if due < REQUEUE_BATCH:
                break
        return n

    def requeue_command(self) -> Command:
        return self.command("requeue", [REQUEUE_BATCH, self.quarantine_after])

    def apply_requeue(self, raw: list[Any]) -> tuple[int, int]:
        """A ``requeue`` reply taken in: (expired leases handled, re-queued)."""
        reply = RequeueReply(raw)
        self.requeue_wait = reply.wait
        self.quarantined.extend(reply.quarantined)
        if reply.moved:
            self.redelivered += reply.moved
            logger.warning("%d expired leases returned to the frontier (worker died?)", reply.moved)
        return reply.due, reply.moved

    # -- scripts --------------------------------------------------------------------------
    def offsets(self, fingerprint: bytes) -> str:
        """The Bloom filter bits of ``fingerprint`` (``""`` without a filter)."""
        if self._bloom is None:
            return ""
        return bloom_offsets(fingerprint[:8], *self._bloom)

    def command(self, name: str, args: list[Any]) -> Command:
        """The ``EVALSHA`` of script ``name``. It declares two keys of the prefix (every key a
        script touches shares the prefix's hash tag on a Redis Cluster: one slot, and a node
        that does not serve it answers ``MOVED`` instead of running it); the second never
        exists, so that a slot being migrated answers ``TRYAGAIN`` (see ``guard_key``)."""
        keys = (f"{self.prefix}:n", guard_key(self.prefix))
        return ("EVALSHA", SCRIPTS[name].sha, 2, *keys, *self.script_args(args))

    def script_args(self, args: list[Any]) -> list[Any]:
        """A script's ``ARGV``: the prefix and layout the prelude reads, then ``args``."""
        return [self.prefix, self._bucket_bits, self.head_size, *args]

    def run(self, name: str, args: list[Any]) -> Any:
        """Script ``name`` called (after what is queued), its reply waited for."""
        return self.wire.call(self.command(name, args))
