"""What a crawl needs from its Redis, and what it does when Redis cannot serve it.

* **No eviction.** The frontier, its leases and the change records have no TTL and must never be
  evicted: a Redis whose ``maxmemory-policy`` evicts (``allkeys-*``, ``volatile-*``) is refused
  at start with one line saying how to fix it (:func:`check_eviction_policy`). A managed Redis
  that refuses ``CONFIG`` (and ``INFO``) cannot be checked: a warning, and the crawl goes on.
* **Out of memory.** At ``maxmemory`` with ``noeviction``, Redis refuses a write that would grow
  its memory (``OOM command not allowed…``). A Lua script is refused whole when its first write
  would, and runs to its end once it has written: the frontier's scripts are atomic under OOM,
  and a page's links and its ack go in one script (``pushack``), so a refused page stays leased
  and its links are sent again (:func:`is_oom`).
* **Away.** A crawl's frontier does not wait for Redis on the reactor thread: it raises
  :class:`FrontierUnavailable` and keeps what it could not send; the scheduler pauses the crawl
  and tries again on a timer (:mod:`focuscrawl.frontier.outage`).
"""

from __future__ import annotations

import logging
from typing import Any

from focuscrawl.credentials import redact_text, redact_url

logger = logging.getLogger(__name__)

SAFE_POLICY = "noeviction"


class FrontierLost(RuntimeError):
    """Redis no longer holds this crawl's frontier: the epoch a worker opened it with is gone
    (a Redis restarted without persistence, a failover to an empty replica, a FLUSHALL). The
    crawl stops (``redis_lost``, exit status 5) rather than end as if it had finished."""


def lost_message(where: str) -> str:
    return (
        f"Redis lost the frontier ({where}: the crawl's epoch key is gone, the queue is empty): "
        "stopping instead of finishing. Redis restarted without persistence or failed over to "
        "an empty replica; run Redis with AOF (appendonly yes) and replicas, see docs/faults.md"
    )


class FrontierUnavailable(RuntimeError):
    """Redis cannot serve the frontier now (``kind``: ``unreachable`` or ``oom``); what the
    frontier could not send is kept and sent again by its ``resume()``."""

    def __init__(self, message: str, kind: str = "unreachable") -> None:
        super().__init__(message)
        self.kind = kind


class RedisPolicyError(RuntimeError):
    """The Redis evicts keys when full: it would delete frontier entries and change records."""


def is_oom(reply: Any) -> bool:
    """Whether a reply (or an exception) is Redis refusing a write at ``maxmemory``
    (``-OOM command not allowed when used memory > 'maxmemory'``; redis-py strips the code)."""
    if not isinstance(reply, Exception):
        return False
    import redis

    return isinstance(reply, redis.exceptions.OutOfMemoryError) or str(reply).startswith("OOM ")


def cluster_refusal(reply: Any) -> bool:
    """Whether a reply (or an exception) is a command refused, not run, while a Redis Cluster
    fails over or lost a replica: ``CLUSTERDOWN`` (a master down, its replica not promoted
    yet), ``TRYAGAIN``, ``MOVED``/``ASK`` (another node serves the slot now), ``READONLY``
    (the node is a replica now), ``NOREPLICAS`` (``min-replicas-to-write`` not met: a
    promoted master has no replica yet). Worth sending again later, never dropping."""
    if not isinstance(reply, Exception):
        return False
    import redis

    errors = redis.exceptions
    refused = (errors.ClusterDownError, errors.TryAgainError, errors.AskError, errors.ReadOnlyError)
    return isinstance(reply, refused) or str(reply).startswith("NOREPLICAS ")


def eviction_policy(client: Any) -> str | None:
    """The server's ``maxmemory-policy`` (``CONFIG GET``, else ``INFO memory``), or None when
    both are refused (a managed Redis with ``CONFIG`` disabled or renamed)."""
    import redis

    try:
        value = client.config_get("maxmemory-policy").get("maxmemory-policy")
        if value:
            return str(value.decode() if isinstance(value, bytes) else value)
    except redis.ResponseError as exc:
        logger.debug("CONFIG GET maxmemory-policy refused: %s", exc)
    try:
        value = client.info("memory").get("maxmemory_policy")
        return str(value) if value else None
    except redis.ResponseError as exc:
        logger.debug("INFO memory refused: %s", exc)
        return None


def check_eviction_policy(client: Any, url: str) -> str | None:
    """Refuse an evicting Redis (:class:`RedisPolicyError`); the policy, or None (unknown)."""
    policy = eviction_policy(client)
    where = redact_url(url)
    if policy is None:
        logger.warning(
            "Redis at %s does not say its maxmemory-policy (CONFIG and INFO refused: a managed "
            "Redis?): make sure it is %s, or a full Redis may evict frontier entries",
            where,
            SAFE_POLICY,
        )
        return None
    if policy != SAFE_POLICY:
        raise RedisPolicyError(
            redact_text(
                f"Redis at {where} has maxmemory-policy {policy}: when full it evicts keys, and "
                f"would delete frontier entries and change records. Set it to {SAFE_POLICY} "
                f"(CONFIG SET maxmemory-policy {SAFE_POLICY}, redis.conf, or the managed "
                "service's parameter group); a full Redis then pauses the crawl instead",
                url,
            )
        )
    return policy
