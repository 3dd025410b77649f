"""One connection to one Redis, every command on it in order: sent ahead, queued, read later.

A :class:`Pipeline` is what the frontier says to a Redis (or to the master serving one slot of
a Redis Cluster). Commands go out as batches (:class:`Batch`): a batch may be sent without
waiting (its replies handed to a callback at the next call that reads), or only queued (it
goes out with the next call that sends: one ``sendall`` for a page's links, its ack and the
next pop). Around that:

* **Retries.** While Redis is unreachable, a call logs and retries with exponential back-off
  until ``retry_timeout``, sending every unread batch again (the frontier's scripts are
  idempotent enough that nothing is lost); ``nonblocking`` raises
  :class:`~focuscrawl.frontier.redis_health.FrontierUnavailable` at once instead.
* **NOSCRIPT.** Commands that met a Redis without the scripts (it restarted) load them all and
  run again, in order.
* **OOM.** A batch sent ahead that Redis refused whole (``maxmemory``) is held; :attr:`refused`
  says so and :meth:`Pipeline.requeue_held` sends it again with the next call.
* **Failover.** A Redis Cluster node that refuses because it fails over (``CLUSTERDOWN``, …):
  every unread batch goes again; ``relocate`` names the node serving the slot now.
* **A read of another slot.** A batch queued ``optional`` (the change store's read ahead, sent
  to the master the cluster client's slot table names) that the node refuses (``MOVED``/``ASK``:
  the slot was resharded away, live) is only a missed read: delivered to nobody, the batches
  beside it go through, and ``on_moved`` tells the owner that its slot table is stale. (Before,
  that refusal sent every unread batch again, refused again at each resume: the crawl stalled.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from focuscrawl.credentials import RedisAuthError, redact_text, redact_url
from focuscrawl.frontier.redis_health import FrontierUnavailable, cluster_refusal, is_oom
from focuscrawl.frontier.rediswire.scripts import Script

__all__ = ["SOCKET_TIMEOUTS", "Batch", "Command", "Pipeline"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Command = tuple[Any, ...]
Replies = Callable[[list[Any]], None]
# socket timeouts of the frontier's connection (a URL's own socket_timeout=… wins): a Redis that
# hangs must not hold the reactor for ever
SOCKET_TIMEOUTS = {"socket_connect_timeout": 5.0, "socket_timeout": 30.0}


class Batch:
    """Commands queued or sent on a :class:`Pipeline` whose replies are not read yet."""

    __slots__ = ("commands", "later", "optional", "sent")

    def __init__(
        self, commands: list[Command], later: Replies | None, optional: bool = False
    ) -> None:
        self.commands = commands
        self.later = later
        self.optional = optional  # a read that may fail: never sent again, never held
        self.sent = False  # on the wire (its replies may not be read yet)

    def deliver(self, replies: list[Any]) -> None:
        if self.later is None:
            return
        failed = [r for r in replies if isinstance(r, Exception)]
        if failed and self.optional:  # a read ahead missed: its reader reads for itself
            logger.debug("Redis frontier: a read sent ahead failed: %s", failed[0])
            return
        if failed:  # a bug, not an outage (those are retried): say so, keep crawling
            logger.error(
                "Redis frontier: %d command(s) sent ahead failed: %s", len(failed), failed[0]
            )
            return
        self.later(replies)


class Pipeline:
    """Our own connection to the Redis at ``url`` (see the module docstring). ``name`` (the
    key prefix) is for logs; ``scripts`` are loaded again into a Redis that lost them."""

    def __init__(
        self,
        url: str,
        scripts: dict[str, Script],
        *,
        name: str = "",
        retry_timeout: float = 600.0,
    ) -> None:
        self.url = url
        self.scripts = scripts
        self.name = name
        self.retry_timeout = retry_timeout
        self.sends = 0  # sendall calls, and calls that waited for replies (benches count them)
        self.waits = 0
        # a crawl's frontier: never wait for Redis (raise FrontierUnavailable, see requeue_held)
        self.nonblocking = False
        # a shard of a Redis Cluster: the URL of the node serving its slot now (after a failover)
        self.relocate: Callable[[], str] | None = None
        # an optional read met MOVED/ASK: whoever chose this node for it has a stale slot table
        self.on_moved: Callable[[], None] | None = None
        self.client: Any = None  # a redis-py client on ``url`` (for plain calls), once open
        self.conn: Any = None  # the connection every batch goes on
        self._unread: list[Batch] = []  # sent, replies not read yet
        self._outbox: list[Batch] = []  # queued, not sent yet
        self._resend = False  # the connection failed: send every unread batch again
        self._held: list[Batch] = []  # batches Redis refused (OOM): sent again by requeue_held()

    # -- lifecycle ------------------------------------------------------------------------
    def connect(self) -> None:
        import redis

        self.client = redis.Redis.from_url(self.url, **SOCKET_TIMEOUTS)
        pool = self.client.connection_pool
        self.conn = pool.connection_class(**pool.connection_kwargs)

    @property
    def is_open(self) -> bool:
        return self.client is not None

    def close(self) -> None:
        """Disconnect (what is queued or unread is dropped: :meth:`flush` first)."""
        if self.client is not None:
            self.conn.disconnect()
            self.client.close()
            self.client = None

    def abandon(self) -> None:
        """Drop the connection as a killed worker would: nothing queued or held is sent."""
        self.conn.disconnect()
        self.client.close()

    def relocated(self) -> bool:
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
            self.name,
            redact_url(self.url),
            redact_url(url),
        )
        old = self.client
        self.url = url
        self.client = redis.Redis.from_url(url, **SOCKET_TIMEOUTS)
        pool = self.client.connection_pool
        self.conn.disconnect()
        self.conn = pool.connection_class(**pool.connection_kwargs)
        self._resend = True
        old.close()
        return True

    # -- what is queued, sent, held -------------------------------------------------------
    @property
    def pending(self) -> bool:
        """Whether batches are queued or their replies unread."""
        return bool(self._unread or self._outbox)

    @property
    def queued(self) -> bool:
        """Whether batches wait to go out with the next call that sends."""
        return bool(self._outbox)

    @property
    def refused(self) -> bool:
        """Redis refused a batch sent ahead (out of memory): held for :meth:`requeue_held`."""
        return bool(self._held)

    @property
    def settled(self) -> bool:
        """The last call went through, and nothing is held."""
        return not self._resend and not self._held

    def requeue_held(self) -> None:
        """The batches Redis refused go first with the next call that sends."""
        self._outbox[:0], self._held = self._held, []

    def flush(self) -> None:
        """Send what is queued, wait for every reply, and hand the results over."""
        if self._unread or self._outbox:
            self.execute([])

    def read_sent(self) -> None:
        """Read the replies of what was sent (what is queued waits for the next send)."""
        if self._unread:
            self.execute([], send=False)

    def arrived(self) -> bool:
        """Whether nothing sent is unread, or a reply waits on the connection (a failed one
        counts: reading it goes through the retries)."""
        if not self._unread:
            return True
        try:
            return bool(self.conn.can_read(timeout=0))
        except Exception:  # noqa: BLE001 - reading raises it again, where it is handled
            return True

    def queue(self, commands: list[Command], later: Replies, optional: bool = False) -> Batch:
        """Queue ``commands``: they go out with the next call that sends; ``later(replies)``
        runs when a later call reads them. The batch, to see when it is :attr:`Batch.sent`.
        ``optional``: reads whose failure costs nothing (see the module docstring)."""
        batch = Batch(commands, later, optional)
        if commands:
            self._outbox.append(batch)
        return batch

    # -- calls ----------------------------------------------------------------------------
    def call(self, command: Command) -> Any:
        """Send ``command`` (after what is queued) and return its reply."""
        (reply,) = self.execute([command])
        return reply

    def execute(
        self,
        commands: list[Command],
        later: Replies | None = None,
        send: bool = True,
    ) -> list[Any]:
        """Send ``commands`` on our connection, after those queued or sent before them.

        ``later`` given: return at once; ``later(replies)`` runs when a later call reads them;
        with ``send=False`` they are only queued, and go out with the next call that sends
        (one ``sendall`` for a page's links, its ack and the next pop). Else read every reply
        of what was sent (handing each to its ``later``) and return these; ``send=False``
        then reads without sending what is queued. While Redis is unreachable, retry with
        back-off (see :meth:`retry`), sending every unread command again; scripts a
        restarted Redis lost are loaded and run again."""
        sent = Batch(commands, later)
        if commands:
            self._outbox.append(sent)
        if later is not None and not send:
            return []

        def attempt() -> list[Any]:
            conn = self.conn
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
            replies = self.read_replies(sent)
            self._resend = False
            return replies

        return self.retry(attempt)

    def read_replies(self, upto: Batch) -> list[Any]:
        """Read the replies of every unread batch; hand each to its ``later``; return those
        of ``upto``. Batches leave the unread list only once all is read (an error before
        that sends them all again)."""
        import redis

        read: list[tuple[Batch, list[Any]]] = []
        for batch in self._unread:
            replies: list[Any] = []
            for _ in batch.commands:
                try:
                    replies.append(self.conn.read_response())
                except redis.exceptions.BusyLoadingError:
                    raise
                except redis.ResponseError as exc:  # the rest of the batch's replies follow
                    replies.append(exc)
            read.append((batch, replies))
        self._rerun_unloaded(read)
        down = next(
            (r for b, replies in read if not b.optional for r in replies if cluster_refusal(r)),
            None,
        )
        if down is not None:  # not run: every unread batch goes again once the cluster is back
            raise redis.ConnectionError(f"the Redis Cluster is failing over: {down}")
        del self._unread[: len(read)]
        mine: list[Any] = []
        for batch, replies in read:
            if batch is upto:
                mine = replies
            elif batch.optional:
                if self.on_moved is not None and any(cluster_refusal(r) for r in replies):
                    self.on_moved()
                batch.deliver(replies)
            elif batch.later is not None and any(is_oom(r) for r in replies):
                batch.sent = False
                self._held.append(batch)  # refused whole (one script a page): resent later
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

    def _rerun_unloaded(self, read: list[tuple[Batch, list[Any]]]) -> None:
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
        conn = self.conn
        loads = [("SCRIPT", "LOAD", script.text) for script in self.scripts.values()]
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

    def retry(self, call: Callable[[], T]) -> T:
        """Run ``call``; while Redis is unreachable, log and retry with exponential back-off."""
        import redis

        if self.client is None:
            raise RuntimeError("RedisFrontier used before open()")
        delay, waited, moved = 0.25, 0.0, False
        while True:
            try:
                return call()
            except redis.AuthenticationError as exc:  # retrying cannot help
                raise RedisAuthError(self.url, exc) from None
            except (
                redis.ConnectionError,
                redis.TimeoutError,
                redis.BusyLoadingError,
                # a Redis Cluster refusing the shard's command while its slot moves (live
                # resharding: MOVED, ASK, TRYAGAIN) or fails over (CLUSTERDOWN, READONLY):
                # the node serving the slot now is asked for, as after a failover
                redis.exceptions.AskError,
                redis.exceptions.TryAgainError,
                redis.exceptions.ClusterDownError,
                redis.exceptions.ReadOnlyError,
            ) as exc:
                url = self.url
                if self.relocate is not None:
                    try:
                        if self.relocated() and not moved:
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
