"""The Redis frontier sharded over a Redis Cluster: N :class:`RedisFrontier` shards, one per
hash tag, best-first across them.

* **One slot per script.** Shard ``k`` keeps every key under ``P:{t_k}`` (``t_k`` a hash tag
  chosen so that the N shards spread evenly over the 16,384 slots, hence over the masters). A
  URL belongs to the shard of its host (:func:`shard_of`): a host's queue, its de-dup entries
  (queued score or seen) and its leases live in one slot, so every Lua script of
  :mod:`focuscrawl.frontier.redis_scripts` runs unchanged, atomically, on one master. The seen
  set is thereby sharded by a hash of the URL's host; the change store by a hash of the URL
  (:mod:`focuscrawl.change.store_redis`).
* **Best-first across shards.** The worker keeps the best score of each shard's head
  (``P:{t}:hosts``): learnt from each pop's reply (the head after it, read in the same round
  trip), from its own pushes, and from two shards sampled at random at every pop (their heads
  read with the next pop: the power-of-two-choices probe that brings in other workers' pushes).
  A pop goes to the shard with the best known head; a shard whose free hosts have nothing is
  passed over for the next best. With one worker the order is exactly the one-instance order
  except between equal scores on different shards (insertion order holds within a shard).
* **Failover.** Each shard talks to the master serving its slot on its own connection; when it
  fails, the shard asks the cluster (``CLUSTER SLOTS``) where its slot is now and sends again
  what was not acknowledged there (:meth:`RedisFrontier._relocated`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.credentials import redact_url
from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of, never_busy
from focuscrawl.frontier.quarantine import QuarantineRecord
from focuscrawl.frontier.redis import SOCKET_TIMEOUTS, PushItem, RedisFrontier
from focuscrawl.frontier.redis_health import FrontierUnavailable
from focuscrawl.frontier.shard_keys import (  # re-exported
    SHARDS_PER_MASTER,
    frontier_prefixes,
    node_url,
    shard_of,
    shard_tags,
)

logger = logging.getLogger(__name__)

SAMPLE = 2  # shards whose head is read every PROBE_EVERY pops (other workers' pushes show up)
PROBE_EVERY = 4
_EMPTY = float("-inf")


class ShardedRedisFrontier:
    """The frontier contract over ``shards`` :class:`RedisFrontier` shards of a Redis Cluster
    (``shards=0``: 16 per master, fixed by the first worker in ``P:cluster``)."""

    def __init__(self, url: str, prefix: str, *, shards: int = 0, **shard_kw: Any) -> None:
        self.url = url
        self.prefix = prefix
        self.shard_count = shards
        self.shard_kw = shard_kw
        self.lease = float(shard_kw.get("lease", 300.0))
        self.retry_timeout = float(shard_kw.get("retry_timeout", 600.0))
        self.shards: list[RedisFrontier] = []
        self.quarantined: list[QuarantineRecord] = []
        self.pop_ahead = False  # accepted for symmetry; each pop waits for one round trip
        self.prefetch: Callable[[str, Callable[[], None]], Any] | None = None
        self._nonblocking = False
        self._cluster: Any = None
        self._head: list[float] = []  # best known score of each shard's head (-inf: empty)
        self._where: dict[bytes, int] = {}  # fp8 → shard of the entries this worker holds
        self._probes: list[int] = []  # shards whose head read was sent with the last pop
        self._pops = 0
        self._unread: set[int] = set()  # shards with pushes sent, replies not read
        self._next_requeue = 0.0
        self._rng = random.Random()

    @classmethod
    def from_settings(cls, settings: Any, spider_name: str) -> ShardedRedisFrontier:
        from focuscrawl.frontier.connection import frontier_options

        shards = settings.getint("FOCUSCRAWL_REDIS_SHARDS", 0)
        return cls(**frontier_options(settings, spider_name), shards=shards)

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
            shard = RedisFrontier(self._node_url(tag), f"{self.prefix}:{{{tag}}}", **kw)
            shard.relocate = self._relocator(tag)
            shard.nonblocking = self._nonblocking
            shard.open()
            self.shards.append(shard)
        self._head = [_EMPTY] * n
        self._refresh(range(n))
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
        for shard in self.shards:
            shard.flush()

    def resume(self) -> None:
        for shard in self.shards:
            shard.resume()

    def renew_leases(self) -> None:
        for shard in self.shards:
            shard.renew_leases()

    # -- queue operations -----------------------------------------------------------------
    def _shard(self, url: str) -> int:
        return shard_of(host_of(url), len(self.shards))

    def _pushed(self, k: int, score: float, result: PushResult) -> None:
        if result in (PushResult.ADDED, PushResult.UPGRADED) and score > self._head[k]:
            self._head[k] = score

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
        """As :meth:`RedisFrontier.push_many`, one call per shard touched: the links of other
        shards first, then those of the acknowledged entries' shard with the acks (one script
        there: links and ack applied together)."""
        groups: dict[int, list[int]] = {}
        for i, item in enumerate(items):
            groups.setdefault(self._shard(item[0]), []).append(i)
        acks: dict[int, list[bytes]] = {}
        for fp in ack:
            acks.setdefault(self._where.pop(fp[:8], -1), []).append(fp)
        for fp in acks.pop(-1, []):  # not ours (held since a restart): every shard drops it
            for shard in self.shards:
                shard.ack(fp)
        order = [k for k in groups if k not in acks] + list(acks)
        results: list[PushResult | None] = [None] * len(items)
        pending = [len(order)]

        def collect(k: int) -> Callable[[list[PushResult]], None]:
            def got(found: list[PushResult]) -> None:
                for i, result in zip(groups.get(k, []), found, strict=True):
                    results[i] = result
                    self._pushed(k, float(items[i][1]), result)
                pending[0] -= 1
                if pending[0] == 0 and on_results is not None:
                    on_results([r for r in results if r is not None])

            return got

        for k in order:
            chunk = [items[i] for i in groups.get(k, [])]
            found = self.shards[k].push_many(
                chunk, acks.get(k, ()), collect(k) if on_results else None
            )
            if found is not None:
                collect(k)(found)
            else:  # sent now, without waiting (a shard may not be popped from for long): the
                # replies are read before the next pop chooses its shard
                self.shards[k]._exec([], lambda replies: None)
                self._unread.add(k)
        if on_results is not None:
            if not order:
                on_results([])
            return None
        return [r for r in results if r is not None]

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
        ``PROBE_EVERY`` pops, the head of ``SAMPLE`` random shards, read at the next pop)."""
        self.requeue_expired()
        self._read_probes()
        unread, self._unread = self._unread, set()
        for k in unread:  # this worker's pushes: the heads they raised
            self.shards[k]._read_sent()
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
                self._probe()
                return entry

    def _best(self, tried: set[int]) -> int | None:
        best, at = _EMPTY, None
        for k, head in enumerate(self._head):
            if head > best and k not in tried:
                best, at = head, k
        return at

    def _pop_shard(self, k: int, busy: HostBusy) -> FrontierEntry | None:
        """Pop from shard ``k``; its head after the pop comes in the same round trip."""
        shard = self.shards[k]
        known: dict[str, bool] = {}
        ask = shard._top_hosts
        head = ("ZRANGE", f"{shard.prefix}:hosts", 0, 0, "WITHSCORES")
        while True:
            reply, top = shard._exec([shard._eval("popbest", shard._ask(busy, ask, known)), head])
            self._head[k] = _head_of(top)
            if not reply:
                return None
            if reply[0] == b"?":
                ask = [h.decode() for h in reply[1:]]
                continue
            entry = shard._entry_of(reply)
            if entry is None:  # unreadable, dropped: the next one
                continue
            shard._leased.add(entry.fingerprint[:8])
            if entry.attempts and shard.quarantine_after:
                shard._probation.delivered(entry.fingerprint[:8])
            return entry

    def _probe(self) -> None:
        """Every ``PROBE_EVERY`` pops, send the head read of ``SAMPLE`` random shards (read
        at the next pop): each costs its master a send, so not at every pop."""
        self._pops += 1
        if self._pops % PROBE_EVERY:
            return
        n = len(self.shards)
        self._probes = self._rng.sample(range(n), min(SAMPLE, n))
        for k in self._probes:
            shard = self.shards[k]
            command = ("ZRANGE", f"{shard.prefix}:hosts", 0, 0, "WITHSCORES")
            shard._exec([command], self._set_head(k))

    def _set_head(self, k: int) -> Callable[[list[Any]], None]:
        def got(replies: list[Any]) -> None:
            self._head[k] = _head_of(replies[0])

        return got

    def _read_probes(self) -> None:
        probes, self._probes = self._probes, []
        for k in probes:
            self.shards[k]._read_sent()

    def _refresh(self, shards: Any) -> None:
        """Read the heads of ``shards`` (sent to all, then read: one wait)."""
        shards = list(shards)
        for k in shards:
            shard = self.shards[k]
            command = ("ZRANGE", f"{shard.prefix}:hosts", 0, 0, "WITHSCORES")
            shard._exec([command], self._set_head(k))
        for k in shards:
            self.shards[k]._read_sent()

    def _refresh_all_found(self) -> bool:
        """Every shard's head read again (other workers' pushes); whether any has entries."""
        self._refresh(range(len(self.shards)))
        return any(h > _EMPTY for h in self._head)

    def ack(self, fingerprint: bytes) -> None:
        k = self._where.pop(fingerprint[:8], None)
        if k is not None:
            self.shards[k].ack(fingerprint)
            return
        for shard in self.shards:  # not ours (a restarted worker's journal): wherever it is
            shard.ack(fingerprint)

    def seen(self, fingerprint: bytes) -> bool:
        return any(shard.seen(fingerprint) for shard in self.shards)

    def seen_url(self, url: str, fingerprint: bytes) -> bool:
        """Whether ``url`` was seen: one shard asked (its host's)."""
        return self.shards[self._shard(url)].seen(fingerprint)

    def _gather(self, command: Callable[[RedisFrontier], tuple[Any, ...]]) -> list[Any]:
        out: list[Any] = [None] * len(self.shards)

        def keep(k: int) -> Callable[[list[Any]], None]:
            def got(replies: list[Any]) -> None:
                out[k] = replies[0]

            return got

        for k, shard in enumerate(self.shards):
            shard._exec([command(shard)], keep(k))
        for shard in self.shards:
            shard._read_sent()
        return out

    def __len__(self) -> int:
        return sum(int(n or 0) for n in self._gather(lambda s: ("GET", f"{s.prefix}:n")))

    def in_flight(self) -> int:
        return sum(int(n) for n in self._gather(lambda s: ("ZCARD", f"{s.prefix}:lease")))

    def requeue_expired(self, force: bool = False) -> int:
        """Every shard's expired leases back in its queue (or quarantine), at most once a
        ``requeue_interval``: one script per shard, sent to all, then read (one wait)."""
        now = time.monotonic()
        if not self.shards or (not force and now < self._next_requeue):
            return 0
        self._next_requeue = now + self.shards[0].requeue_interval
        replies = self._gather(lambda s: s._eval("requeue", [1000, s.quarantine_after]))
        n = 0
        for k, (shard, reply) in enumerate(zip(self.shards, replies, strict=True)):
            if reply is None:  # failed (logged): the next round tries again
                continue
            due, moved = shard._requeued(reply)
            if due >= 1000:  # more than a batch expired: the rest now
                moved += shard.requeue_expired(force=True)
            if moved:
                n += moved
                self._refresh([k])
            if shard.quarantined:
                self.quarantined.extend(shard.quarantined)
                shard.quarantined = []
        return n


def _head_of(reply: Any) -> float:
    """The best score of a shard from ``ZRANGE P:hosts 0 0 WITHSCORES`` (scores are -best)."""
    if not reply:
        return _EMPTY
    pair = reply[0] if isinstance(reply[0], list) else reply  # RESP3 pairs, or RESP2 flat
    return -float(pair[1]) + 0.0


__all__ = ["ShardedRedisFrontier", "frontier_prefixes", "node_url", "shard_of", "shard_tags"]
