"""The Redis frontier sharded over a Redis Cluster: N
:class:`~focuscrawl.frontier.rediswire.shard.QueueShard` shards, one per hash tag, best-first
across them.

* **One slot per script.** Shard ``k`` keeps every key under ``P:{t_k}`` (``t_k`` a hash tag
  chosen so that the N shards spread evenly over the 16,384 slots, hence over the masters). A
  URL belongs to the shard of its host (:func:`shard_of`): a host's queue, its de-dup entries
  (queued score or seen) and its leases live in one slot, so every Lua script of the frontier
  (:mod:`focuscrawl.frontier.rediswire.scripts`) runs unchanged, atomically, on one master. The
  seen set is thereby sharded by a hash of the URL's host; the change store by a hash of the URL
  (:mod:`focuscrawl.change.store_redis`).
* **Best-first across shards.** The worker keeps the best score of each shard's head
  (``P:{t}:hosts``): learnt from each pop's reply (the head after it, read in the same round
  trip), from its own pushes (at once, from their scores), from the head reads sent with every
  batch of held links, and from two shards sampled at random every ``PROBE_EVERY`` pops (their
  heads read with the next pop: the power-of-two-choices probe that brings in other workers'
  pushes; a head read that rode along with another send counts as one). A pop goes to the
  shard with the best known head; a shard whose free hosts have nothing is passed over for the
  next best. With one worker the order is exactly the one-instance order except between equal
  scores on different shards (insertion order holds within a shard).
* **One wait per page** (a crawl's frontier, ``pop_ahead``): the next pop is sent ahead to the
  best shard with that shard's held links and acks and, when the popped URL's change record is
  on the same master, its ``prefetch`` read (else that read goes alone, without waiting, to a
  shard of the record's master). A page's links wait in their shards' outboxes (sent with the
  shard's next call, or all at ``HOLD_LINKS`` / ``HOLD_SECONDS``); its ack, until they are sent.
* **Failover.** Each shard talks to the master serving its slot on its own connection; when it
  fails, the shard asks the cluster (``CLUSTER SLOTS``) where its slot is now and sends again
  what was not acknowledged there
  (:meth:`~focuscrawl.frontier.rediswire.pipeline.Pipeline.relocated`).
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl import defaults
from focuscrawl.credentials import redact_url
from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of, never_busy
from focuscrawl.frontier.prefetch import Prefetched
from focuscrawl.frontier.quarantine import QuarantineRecord
from focuscrawl.frontier.redis_health import FrontierUnavailable
from focuscrawl.frontier.rediswire.pipeline import SOCKET_TIMEOUTS, Batch, Command
from focuscrawl.frontier.rediswire.replies import PopKind, push_results
from focuscrawl.frontier.rediswire.shard import REQUEUE_BATCH, PushItem, QueueShard
from focuscrawl.frontier.shard_keys import (  # re-exported
    SHARDS_PER_MASTER,
    frontier_prefixes,
    node_url,
    shard_of,
    shard_tags,
)
from focuscrawl.frontier.workmark import claim_dead_marks, host_of_payload

logger = logging.getLogger(__name__)

SAMPLE = 2  # shards whose head is read every PROBE_EVERY pops (other workers' pushes show up)
PROBE_EVERY = 4
PROBE_MAX = 64  # probes that find every head as tracked back off, up to one every PROBE_MAX pops
HOLD_LINKS = 512  # links and acks held (not sent) over all shards before every shard sends
HOLD_SECONDS = 0.5  # ... or when the oldest held link or ack is this old
# a shard's leases are checked again when its earliest lease expires, and at least this often
# (a lease taken since expires no sooner than the worker's ``lease`` after: when all workers
# share one lease, the first bound is exact; this one bounds the delay when they do not)
REQUEUE_IDLE_MAX = 30.0
_EMPTY = float("-inf")


class ShardedRedisFrontier:
    """The frontier contract over ``shards`` :class:`QueueShard` shards of a Redis Cluster
    (``shards=0``: 16 per master, fixed by the first worker in ``P:cluster``)."""

    def __init__(self, url: str, prefix: str, *, shards: int = 0, **shard_kw: Any) -> None:
        self.url = url
        self.prefix = prefix
        self.shard_count = shards
        self.shard_kw = shard_kw
        self.mark_dir: str | None = None  # where dead workers' work marks are (workmark)
        self.lease = float(shard_kw.get("lease", 300.0))
        self.retry_timeout = float(shard_kw.get("retry_timeout", 600.0))
        self.shards: list[QueueShard] = []
        self.quarantined: list[QuarantineRecord] = []
        self.pop_ahead = False  # on for a crawl's frontier (from_settings), see pop()
        # the change store's read of the URL just popped, sent with the next pop ahead (on the
        # connection of a shard on the record's master; see
        # focuscrawl.frontier.redis_frontier.RedisFrontier.prefetch)
        self.prefetch: Callable[[str, Callable[[], None]], Prefetched] | None = None
        self._ahead_k: int | None = None  # the shard the next pop was sent ahead to
        self._nonblocking = False
        self._cluster: Any = None
        self._head: list[float] = []  # best known score of each shard's head (-inf: empty)
        self._where: dict[bytes, int] = {}  # fp8 → shard of the entries this worker holds
        self._probes: list[int] = []  # shards whose head read was sent with the last pop
        self._pops = 0
        self._free_probes = 0  # heads read along with other sends since the last probe
        self._stale_slots = False  # a read ahead met MOVED/ASK: refresh the slot table
        self._every = PROBE_EVERY  # pops between probes now (see _probed)
        self._next_probe = PROBE_EVERY
        self._unread: set[int] = set()  # shards with pushes sent, replies not read
        # held: links queued in shards' outboxes (sent with the shard's next pop, or when
        # HOLD_LINKS / HOLD_SECONDS are reached); acks wait until their page's links are sent
        self._held_links = 0
        self._held_since = 0.0
        self._held: dict[int, _Held] = {}  # shard → links held for it (not in its outbox yet)
        self._acks: list[tuple[int, bytes, list[_Held]]] = []  # (shard, fp, links it follows)
        self._ready: dict[int, list[bytes]] = {}  # shard → acks whose links were sent
        self._next_requeue = 0.0
        self._requeue_at: list[float] = []  # per shard: when its leases are checked next
        self._rng = random.Random()

    @classmethod
    def from_settings(cls, settings: Any, spider_name: str) -> ShardedRedisFrontier:
        from focuscrawl.frontier.connection import frontier_options

        shards = defaults.read(settings, "FOCUSCRAWL_REDIS_SHARDS")
        frontier = cls(**frontier_options(settings, spider_name), shards=shards)
        frontier.pop_ahead = True  # its prefetch is handed in by the factory
        return frontier

    # -- the attributes the scheduler and its guard set or read ---------------------------
    @property
    def nonblocking(self) -> bool:
        return self._nonblocking

    @nonblocking.setter
    def nonblocking(self, value: bool) -> None:
        self._nonblocking = value
        for shard in self.shards:
            shard.nonblocking = value

    @property
    def redelivered(self) -> int:
        return sum(s.redelivered for s in self.shards)

    @property
    def sends(self) -> int:
        return sum(s.sends for s in self.shards)

    @property
    def waits(self) -> int:
        return sum(s.waits for s in self.shards)

    @property
    def bad_entries(self) -> int:
        return sum(s.bad_entries for s in self.shards)

    @property
    def refused(self) -> bool:
        return any(s.refused for s in self.shards)

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        from redis.cluster import RedisCluster

        self._cluster = RedisCluster.from_url(self.url, **SOCKET_TIMEOUTS)
        masters = len(self._cluster.get_primaries())
        wanted = self.shard_count or SHARDS_PER_MASTER * masters
        meta = f"{self.prefix}:cluster"
        self._cluster.hsetnx(meta, "shards", wanted)  # the first worker fixes the layout
        n = int(self._cluster.hget(meta, "shards"))
        capacity = int(self.shard_kw.get("capacity", 1_000_000))
        kw = {**self.shard_kw, "capacity": max(1, capacity // n)}
        self.shards = []
        for tag in shard_tags(n):
            shard = QueueShard(self._node_url(tag), f"{self.prefix}:{{{tag}}}", **kw)
            shard.relocate = self._relocator(tag)
            shard.wire.on_moved = self._slot_table_stale
            shard.nonblocking = self._nonblocking
            shard.open()
            self.shards.append(shard)
        self._head = [_EMPTY] * n
        self._requeue_at = [0.0] * n
        self._refresh(range(n))
        if self.mark_dir and self.shard_kw.get("quarantine_after"):
            for data in claim_dead_marks(self.mark_dir):
                shard = self.shards[shard_of(host_of_payload(data), n)]
                deaths = shard.blame(data)
                logger.info("a dead worker died working on %s (death %d)", data[:8].hex(), deaths)
        logger.info(
            "Redis Cluster frontier %s at %s: %d shards on %d masters, %d queued, %d in flight",
            self.prefix,
            redact_url(self.url),
            n,
            masters,
            len(self),
            self.in_flight(),
        )

    def _node_url(self, tag: str) -> str:
        node = self._cluster.get_node_from_key(f"{self.prefix}:{{{tag}}}:n")
        return node_url(self.url, node.host, int(node.port))

    def _relocator(self, tag: str) -> Callable[[], str]:
        def relocate() -> str:
            return self._slot_owner(f"{self.prefix}:{{{tag}}}:n")

        return relocate

    def _slot_owner(self, key: str) -> str:
        """The URL of the master serving ``key``'s slot now, asked (``CLUSTER SLOTS``) of every
        node known, dead ones skipped: the node named in the URL may be the one that died."""
        import redis
        from redis.crc import key_slot

        slot = key_slot(key.encode())
        known = [(n.host, int(n.port)) for n in self._cluster.get_nodes()]
        for host, port in known:
            node = redis.Redis.from_url(node_url(self.url, host, port), socket_connect_timeout=1.0)
            try:
                for first, last, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
                    if int(first) <= slot <= int(last):
                        owner = master[0].decode() if isinstance(master[0], bytes) else master[0]
                        return node_url(self.url, owner or host, int(master[1]))
            except (redis.RedisError, OSError):
                continue  # that node is down too: the next
            finally:
                node.close()
        raise redis.ConnectionError(f"no node of the cluster says who serves slot {slot}")

    def close(self) -> None:
        errors: list[Exception] = []
        if self.shards:
            try:
                self._send_held(force=True)
            except FrontierUnavailable as exc:
                errors.append(exc)
        self._ahead_k = None  # each shard puts back what it popped ahead
        for shard in self.shards:
            try:
                shard.close()
            except FrontierUnavailable as exc:
                errors.append(exc)
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if errors:
            raise errors[0]

    def flush(self) -> None:
        self._send_held(force=True)
        for shard in self.shards:
            shard.flush()
        self._unread.clear()

    def resume(self) -> None:
        for shard in self.shards:
            shard.resume()
        self._send_held(force=True)

    def renew_leases(self) -> None:
        for shard in self.shards:
            shard.renew_leases()

    # -- queue operations -----------------------------------------------------------------
    def _shard(self, url: str) -> int:
        return shard_of(host_of(url), len(self.shards))

    def _pushed(self, k: int, score: float, result: PushResult, host: str = "") -> None:
        if result in (PushResult.ADDED, PushResult.UPGRADED) and score > self._head[k]:
            self._head[k] = score
            if host:  # the shard's top host now: asked about first by its next pop
                self.shards[k].put_top_host(host)

    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult:
        k = self._shard(url)
        result = self.shards[k].push(url, score, fingerprint, data, force)
        self._pushed(k, float(score), result)
        return result

    def push_many(
        self,
        items: Sequence[PushItem],
        ack: Sequence[bytes] = (),
        on_results: Callable[[list[PushResult]], None] | None = None,
    ) -> list[PushResult] | None:
        """As :meth:`QueueShard.push_many`.

        Without ``on_results``: one call per shard touched, each waited for (the links of
        other shards first, then those of the acknowledged entries' shard with the acks).

        With ``on_results`` (a crawl's page): nothing is sent now. Each shard's links wait in
        its outbox and go out with the next call to that shard (its pop sent ahead, a head
        read, the lease requeue), or with every shard's once ``HOLD_LINKS``
        links or acks are held or the oldest is ``HOLD_SECONDS`` old: a few sends per master
        for many pages instead of one per shard touched per page. The heads these links
        raise count at once (their scores). A page's ack is queued only once every shard
        holding its links has sent them (a worker killed before loses no link: the page's
        lease expires and it is fetched again)."""
        groups: dict[int, list[int]] = {}
        for i, item in enumerate(items):
            groups.setdefault(self._shard(item[0]), []).append(i)
        if on_results is None:
            self._send_held(force=True)
            return self._push_many_now(items, groups, ack)
        results: list[PushResult | None] = [None] * len(items)
        pending = [len(groups)]

        def collect(k: int) -> Callable[[list[PushResult]], None]:
            def got(found: list[PushResult]) -> None:
                for i, result in zip(groups[k], found, strict=True):
                    results[i] = result
                    self._pushed(k, float(items[i][1]), result)
                pending[0] -= 1
                if pending[0] == 0:
                    on_results([r for r in results if r is not None])

            return got

        links: list[_Held] = []
        for k, found in groups.items():
            held = self._held.setdefault(k, _Held())
            held.items.extend(items[i] for i in found)
            held.callbacks.append((len(found), collect(k)))
            links.append(held)
            for i in found:  # counted now: a pop to this shard sends them first
                self._pushed(k, float(items[i][1]), PushResult.ADDED, host_of(items[i][0]))
        for fp in ack:
            k = self._where.pop(fp[:8], -1)
            if k < 0:  # not ours (held since a restart): every shard drops it, links first
                self._send_held(force=True)
                for shard in self.shards:
                    shard.ack(fp)
                continue
            self.shards[k].mark_acked(fp)
            self._acks.append((k, fp, links))
        self._hold(len(items) + len(ack))
        if not groups:
            on_results([])
        return None

    def _push_many_now(
        self, items: Sequence[PushItem], groups: dict[int, list[int]], ack: Sequence[bytes]
    ) -> list[PushResult]:
        acks: dict[int, list[bytes]] = {}
        for fp in ack:
            acks.setdefault(self._where.pop(fp[:8], -1), []).append(fp)
        for fp in acks.pop(-1, []):  # not ours (held since a restart): every shard drops it
            for shard in self.shards:
                shard.ack(fp)
        order = [k for k in groups if k not in acks] + list(acks)
        results: list[PushResult | None] = [None] * len(items)
        for k in order:
            chunk = [items[i] for i in groups.get(k, [])]
            found = self.shards[k].push_many(chunk, acks.get(k, ()))
            for i, result in zip(groups.get(k, []), found or [], strict=True):
                results[i] = result
                self._pushed(k, float(items[i][1]), result)
        return [r for r in results if r is not None]

    def _hold(self, n: int) -> None:
        if n:
            if not self._held_links:
                self._held_since = time.monotonic()
            self._held_links += n
        self._release_acks()
        self._send_held()

    def _release_acks(self) -> None:
        """Queue (in their shards' outboxes) the acks whose page's links were all sent."""
        if not self._acks:
            return
        ready: dict[int, list[bytes]] = {}
        keep = []
        for k, fp, after in self._acks:
            if all(held.batch is not None and held.batch.sent for held in after):
                ready.setdefault(k, []).append(fp)
            else:
                keep.append((k, fp, after))
        self._acks = keep
        for k, fps in ready.items():
            self._ready.setdefault(k, []).extend(fps)

    def _stage(self, k: int) -> None:
        """Put what shard ``k`` holds (links of many pages, acks) in its outbox, as one
        ``pushack`` per ``PUSH_CHUNK`` links (one script call, not one per page): it goes
        out with the shard's next send. Each page's results go to its ``on_results``."""
        held = self._held.pop(k, None)
        acks = self._ready.pop(k, [])
        if held is None and not acks:
            return
        shard = self.shards[k]
        commands = shard.pushack_commands(held.items if held is not None else [], acks)
        callbacks = held.callbacks if held is not None else []

        def split(replies: list[Any]) -> None:
            results = push_results(replies)
            at = 0
            for n, got in callbacks:
                got(results[at : at + n])
                at += n

        batch = shard.wire.queue(commands, split)
        if held is not None:
            held.batch = batch

    def _stage_all(self) -> None:
        for k in [*self._held, *self._ready]:
            self._stage(k)

    def _send_held(self, force: bool = False) -> None:
        """Every shard sends what it holds (without waiting) when ``force`` or past the
        limits; then the acks that waited for those links, in a second send."""
        if not self._held_links and not self._acks and not self._ready:
            return
        if (
            not force
            and self._held_links < HOLD_LINKS
            and time.monotonic() - self._held_since < HOLD_SECONDS
        ):
            return
        self._send_outboxes()
        self._release_acks()  # those go with their shards' next sends, or the next time here
        if force:
            self._send_outboxes()
        self._held_links = len(self._acks)
        self._held_since = time.monotonic()

    def _send_outboxes(self) -> None:
        """Send every shard's outbox, without waiting, each with a read of the shard's head
        (the heads the links raised, as Redis has them: a link already seen raises none)."""
        self._stage_all()
        for k, shard in enumerate(self.shards):
            if shard.wire.queued:
                shard.wire.execute([_head_command(shard)], self._set_head(k))
                self._unread.add(k)

    def push_replacing(self, item: PushItem, parent: bytes) -> PushResult:
        k = self._shard(item[0])
        where = self._where.pop(parent[:8], k)
        if where == k:
            result = self.shards[k].push_replacing(item, parent)
        else:  # the redirect's host is on another shard: push first, then acknowledge
            result = self.shards[k].push(*item)
            self.shards[where].ack(parent)
        self._pushed(k, float(item[1]), result)
        return result

    def pop(self, busy: HostBusy = never_busy) -> FrontierEntry | None:
        """The best entry of a free host on the shard with the best known head (and every
        ``PROBE_EVERY`` pops, the head of ``SAMPLE`` random shards, read at the next pop).

        With ``pop_ahead`` (a crawl's frontier), as on one Redis: the next entry is popped,
        without waiting, from the shard with the best known head as this one is returned,
        in one send with that shard's held links and acks and (when the popped URL's
        change-store record is on the same master) the ``prefetch`` read; so a pop costs no
        wait. That entry is leased from then on, and ``close()`` puts it back."""
        self.requeue_expired()
        self._read_probes()
        self._read_pushes()
        self._send_held()
        entry = self._take_ahead()
        if entry is None:
            entry = self._pop_best(busy)
        if entry is not None:
            # a failed send is kept and sent again (the next call meets the outage): this
            # entry is handed out all the same (else leased, renewed, and never fetched)
            with contextlib.suppress(FrontierUnavailable):
                self._probe()
                if self.pop_ahead:
                    self._send_ahead(busy, entry.url)
            self._release_acks()
        return entry

    def _read_pushes(self) -> None:
        """Read the replies of shards sent to without waiting, those that have arrived (the
        rest at a later pop, or with the shard's next call that waits)."""
        if not self._unread:
            return
        late = set()
        for k in self._unread:
            shard = self.shards[k]
            if not shard.wire.arrived():
                late.add(k)
            else:
                shard.wire.read_sent()
        self._unread = late

    def _pop_best(self, busy: HostBusy) -> FrontierEntry | None:
        tried: set[int] = set()
        while True:
            k = self._best(tried)
            if k is None:
                if tried or not self._refresh_all_found():
                    return None
                continue
            tried.add(k)
            entry = self._pop_shard(k, busy)
            if entry is not None:
                self._where[entry.fingerprint[:8]] = k
                return entry

    def _take_ahead(self) -> FrontierEntry | None:
        """The entry popped ahead (its reply read now if it was not), or None."""
        k = self._ahead_k
        if k is None:
            return None
        shard = self.shards[k]
        reply = shard.take_ahead()  # if this raises, the entry is taken at a later pop
        self._ahead_k = None
        if reply is None or not reply.is_entry:  # nothing free there then, or hosts to ask
            if reply is not None and reply.kind is PopKind.ASK:  # (at the pop that follows)
                shard.top_hosts = reply.hosts
            return None
        entry = shard.entry_of(reply)
        if entry is None:
            return None
        self._taken(k, entry)
        return entry

    def _taken(self, k: int, entry: FrontierEntry) -> None:
        self.shards[k].lease_taken(entry)
        self._where[entry.fingerprint[:8]] = k

    def _send_ahead(self, busy: HostBusy, url: str) -> None:
        """Pop the next entry, without waiting, from the shard with the best known head;
        with it (or on its own, to the record's master) the ``prefetch`` read of ``url``."""
        k = self._best(set())
        reader: list[Callable[[], None]] = []
        read = (
            self.prefetch(url, lambda: reader[0]() if reader else None) if self.prefetch else None
        )
        j = None
        if read is not None:
            command, deliver = read
            j = self._shard_on_master_of(str(command[1]), k)
            if j is not None:
                self._stage(j)
                reader.append(self.shards[j].wire.read_sent)
                self.shards[j].queue_read(command, deliver)
        if k is not None:
            self._stage(k)
            shard = self.shards[k]
            self._ahead_k = k
            shard.send_pop_ahead(busy, _head_command(shard), self._head_read(k))
        if j is not None and j != k:  # the record is on another master: sent now, no wait,
            shard = self.shards[j]  # with that shard's head read (counts as a probe)
            shard.wire.execute([_head_command(shard)], self._probed(j))
            self._unread.add(j)
            self._free_probes += 1

    def _head_read(self, k: int) -> Callable[[Any], None]:
        """The head read sent with a pop of shard ``k``: its best score after the pop."""

        def got(reply: Any) -> None:
            self._head[k] = _head_of(reply)

        return got

    def _slot_table_stale(self) -> None:
        """A read ahead met ``MOVED``/``ASK``: slots were resharded since the cluster client
        read its slot table (it refreshes only on a redirection it meets itself)."""
        self._stale_slots = True

    def _shard_on_master_of(self, key: str, prefer: int | None) -> int | None:
        """A shard whose connection goes to the master serving ``key``: ``prefer`` if it
        does, else one of that master's shards at random (its head is read in the same send:
        a probe that costs no send). From the cluster client's slot table: no call (one
        ``CLUSTER SLOTS`` once a read ahead found the table stale)."""
        try:
            if self._stale_slots:
                self._stale_slots = False
                self._cluster.nodes_manager.initialize()
            node = self._cluster.get_node_from_key(key)
        except Exception:  # noqa: BLE001 - no slot table now (failing over): no read ahead
            return None
        url = node_url(self.url, node.host, int(node.port))
        if prefer is not None and self.shards[prefer].url == url:
            return prefer
        there = [j for j, shard in enumerate(self.shards) if shard.url == url]
        return self._rng.choice(there) if there else None

    def _best(self, tried: set[int]) -> int | None:
        best, at = _EMPTY, None
        for k, head in enumerate(self._head):
            if head > best and k not in tried:
                best, at = head, k
        return at

    def _pop_shard(self, k: int, busy: HostBusy) -> FrontierEntry | None:
        """Pop from shard ``k``; its head after the pop comes in the same round trip."""
        self._stage(k)
        shard = self.shards[k]
        entry = shard.pop_now(busy, _head_command(shard), self._head_read(k))
        if entry is not None:
            shard.lease_taken(entry)
        return entry

    def _probe(self) -> None:
        """Every ``PROBE_EVERY`` pops, send the head read of ``SAMPLE`` random shards (read
        at the next pop): each costs its master a send, so not at every pop, and less often
        while they find nothing new (one worker alone: the tracked heads are exact)."""
        self._pops += 1
        if self._pops < self._next_probe:
            return
        self._next_probe = self._pops + max(self._every, PROBE_EVERY)
        if self._free_probes >= SAMPLE:  # heads read with other sends meanwhile
            self._free_probes -= SAMPLE
            return
        self._free_probes = 0
        n = len(self.shards)
        self._probes = self._rng.sample(range(n), min(SAMPLE, n))
        for k in self._probes:
            self._stage(k)
            shard = self.shards[k]
            shard.wire.execute([_head_command(shard)], self._probed(k))

    def _probed(self, k: int) -> Callable[[list[Any]], None]:
        """A probe's reply: a head other than the tracked one (another worker pushed or
        popped there) brings probing back to every ``PROBE_EVERY`` pops; else it backs off."""
        set_head = self._set_head(k)

        def got(replies: list[Any]) -> None:
            if _head_of(replies[0]) != self._head[k]:
                self._every = PROBE_EVERY
            elif self._every < PROBE_MAX:
                self._every *= 2
            set_head(replies)

        return got

    def _set_head(self, k: int) -> Callable[[list[Any]], None]:
        def got(replies: list[Any]) -> None:
            self._head[k] = _head_of(replies[0])
            host = _head_host(replies[0])
            if host:
                self.shards[k].put_top_host(host)

        return got

    def _read_probes(self) -> None:
        probes, self._probes = self._probes, []
        for k in probes:
            self.shards[k].wire.read_sent()

    def _refresh(self, shards: Any) -> None:
        """Read the heads of ``shards`` (sent to all, then read: one wait)."""
        shards = list(shards)
        for k in shards:
            self._stage(k)
            shard = self.shards[k]
            shard.wire.execute([_head_command(shard)], self._set_head(k))
        for k in shards:
            self.shards[k].wire.read_sent()

    def _refresh_all_found(self) -> bool:
        """Every shard's head read again (other workers' pushes); whether any has entries."""
        self._refresh(range(len(self.shards)))
        return any(h > _EMPTY for h in self._head)

    def ack(self, fingerprint: bytes) -> None:
        """Acknowledged without waiting: queued in the entry's shard, sent with the shard's
        next call (its pop, a head read, the lease requeue) or with every shard's held links
        and acks (``HOLD_LINKS``, ``HOLD_SECONDS``), many acks of a shard in one script."""
        k = self._where.pop(fingerprint[:8], None)
        if k is not None:
            self.shards[k].mark_acked(fingerprint)
            self._ready.setdefault(k, []).append(fingerprint)
            self._hold(1)
            return
        self._send_held(force=True)
        for shard in self.shards:  # not ours (a restarted worker's journal): wherever it is
            shard.ack(fingerprint)

    def seen(self, fingerprint: bytes) -> bool:
        return any(shard.seen(fingerprint) for shard in self.shards)

    def seen_url(self, url: str, fingerprint: bytes) -> bool:
        """Whether ``url`` was seen: one shard asked (its host's)."""
        return self.shards[self._shard(url)].seen(fingerprint)

    def _gather(
        self, command: Callable[[QueueShard], Command], only: Sequence[int] | None = None
    ) -> list[Any]:
        """``command`` sent to every shard (or to the shards ``only``), then every reply read
        (one wait); the replies in shard order (None: that shard failed)."""
        ks = list(range(len(self.shards))) if only is None else list(only)
        out: list[Any] = [None] * len(ks)

        def keep(i: int) -> Callable[[list[Any]], None]:
            def got(replies: list[Any]) -> None:
                out[i] = replies[0]

            return got

        for k in ks:  # what these shards hold goes with it
            self._stage(k)
        for i, k in enumerate(ks):
            self.shards[k].wire.execute([command(self.shards[k])], keep(i))
        for k in ks:
            self.shards[k].wire.read_sent()
        self._unread.difference_update(ks)
        self._release_acks()  # those whose links went with these sends
        return out

    def __len__(self) -> int:
        self._send_held(force=True)
        replies = self._gather(lambda s: s.count_command())
        n = sum(s.queued(r) for s, r in zip(self.shards, replies, strict=True) if r is not None)
        if self._ahead_k is not None:  # read by now: counted, it is this worker's next entry
            n += 1 if self.shards[self._ahead_k].ahead.entry else 0
        return n

    def in_flight(self) -> int:
        self._send_held(force=True)
        return sum(int(n) for n in self._gather(lambda s: ("ZCARD", f"{s.prefix}:lease")))

    def leased_elsewhere(self) -> int:
        """As :meth:`QueueShard.leased_elsewhere`, over every shard."""
        n = self.in_flight()
        return max(0, n - sum(shard.held_here() for shard in self.shards))

    def requeue_expired(self, force: bool = False) -> int:
        """Expired leases back in their shard's queue (or quarantine), at most once a
        ``requeue_interval``: one script per shard due, sent to all, then read (one wait).

        A shard is due when its earliest lease (as the last check found it) has expired, or
        ``min(lease, REQUEUE_IDLE_MAX)`` after that check: a lease taken there since expires
        no sooner (with the same ``lease`` in every worker). So a shard without leases, or
        whose leases run for minutes, costs its master one script per such period, not one
        a second (``force``: every shard now)."""
        now = time.monotonic()
        if not self.shards or (not force and now < self._next_requeue):
            return 0
        self._next_requeue = now + self.shards[0].requeue_interval
        if len(self._requeue_at) != len(self.shards):
            self._requeue_at = [0.0] * len(self.shards)
        ks = [k for k, at in enumerate(self._requeue_at) if force or at <= now]
        if not ks:
            return 0
        replies = self._gather(lambda s: s.requeue_command(), ks)
        longest = min(self.lease, REQUEUE_IDLE_MAX)
        n = 0
        for k, reply in zip(ks, replies, strict=True):
            shard = self.shards[k]
            if reply is None:  # failed (logged): the next round tries again
                continue
            due, moved = shard.apply_requeue(reply)
            wait = shard.requeue_wait
            self._requeue_at[k] = now + (wait if 0 <= wait < longest else longest)
            if due >= REQUEUE_BATCH:  # more than a batch expired: the rest now
                moved += shard.requeue_expired(force=True)
            if moved:
                n += moved
                self._refresh([k])
            if shard.quarantined:
                self.quarantined.extend(shard.quarantined)
                shard.quarantined = []
        return n


class _Held:
    """Links held for one shard (pages' ``push_many``), and once staged, their batch."""

    __slots__ = ("batch", "callbacks", "items")

    def __init__(self) -> None:
        self.items: list[PushItem] = []
        self.callbacks: list[tuple[int, Callable[[list[PushResult]], None]]] = []
        self.batch: Batch | None = None


def _head_command(shard: QueueShard) -> Command:
    """The read of a shard's head: its best host and that host's best score."""
    return ("ZRANGE", f"{shard.prefix}:hosts", 0, 0, "WITHSCORES")


def _head_host(reply: Any) -> str:
    """The host at the top of a shard from ``ZRANGE P:hosts 0 0 WITHSCORES`` (members are
    ``seq5 + host``), or ``""``."""
    if not reply:
        return ""
    pair = reply[0] if isinstance(reply[0], list) else reply
    member = pair[0]
    return member[5:].decode() if isinstance(member, bytes) else str(member)[5:]


def _head_of(reply: Any) -> float:
    """The best score of a shard from ``ZRANGE P:hosts 0 0 WITHSCORES`` (scores are -best)."""
    if not reply:
        return _EMPTY
    pair = reply[0] if isinstance(reply[0], list) else reply  # RESP3 pairs, or RESP2 flat
    return -float(pair[1]) + 0.0


__all__ = ["ShardedRedisFrontier", "frontier_prefixes", "node_url", "shard_of", "shard_tags"]
