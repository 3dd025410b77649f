"""How a crawl's Redis keys are sharded over a Redis Cluster: hash tags spread evenly over the
16,384 slots, the shard of a host, a node's URL, the frontier's shard prefixes. Plain functions
(redis-py's CRC16 only), shared by the sharded frontier, the politeness, the change store and
``focuscrawl status``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

SLOTS = 16384
SHARDS_PER_MASTER = 16


def guard_key(prefix: str) -> str:
    """A key of ``prefix``'s slot that never exists, declared by every script that touches keys
    it does not declare (the frontier's, the politeness's). While the slot is being migrated
    (``redis-cli --cluster reshard``, live) Redis then refuses the script with ``TRYAGAIN``
    (some declared keys there, some not) instead of running it on half-moved data: a script
    runs only on the node that holds all of its slot's keys, and the frontier sends it again
    once the slot is settled. Without it a script ran on the source with keys already moved
    away (read as empty, written again there): the reshard stopped on ``BUSYKEY``."""
    return f"{prefix}:guard"


def shard_tags(n: int) -> list[str]:
    """``n`` hash tags, the k-th in the k-th of ``n`` equal slot ranges: shards spread over the
    masters as evenly as their slot ranges (about n ln n CRC16s to find)."""
    from redis.crc import key_slot

    tags: list[str | None] = [None] * n
    missing, j = n, 0
    while missing:
        tag = f"f{j:x}"
        k = key_slot(tag.encode()) * n // SLOTS
        if tags[k] is None:
            tags[k] = tag
            missing -= 1
        j += 1
    return [t for t in tags if t is not None]


def shard_of(host: str, n: int) -> int:
    """The shard of a host: a stable hash (the same in every worker and Python process)."""
    from redis.crc import key_slot

    return (key_slot(host.encode()) * 0x9E3779B1 + len(host)) % n if n > 1 else 0


def node_url(url: str, host: str, port: int) -> str:
    """``url`` with its host and port replaced (scheme, credentials, db and options kept)."""
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    netloc = f"{auth}@{host}:{port}" if auth else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def frontier_prefixes(client: Any, prefix: str) -> list[str]:
    """The key prefixes of a crawl's frontier: ``[prefix]`` on one Redis; on a cluster, one
    per shard (``P:{tag}``, the layout its first worker wrote in ``P:cluster``)."""
    shards = client.hget(f"{prefix}:cluster", "shards")
    if not shards:
        return [prefix]
    return [f"{prefix}:{{{tag}}}" for tag in shard_tags(int(shards))]
