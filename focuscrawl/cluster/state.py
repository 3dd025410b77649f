"""What a crawl keeps in Redis besides the frontier: its topic and its workers' stats.

No Scrapy here: plain functions over a ``redis.Redis`` client and a key prefix
(``focuscrawl:<spider>``, the frontier's prefix), so ``focuscrawl status`` and tests use them.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.frontier.quarantine import QuarantineRecord, read_redis_quarantine
from focuscrawl.frontier.shard_keys import frontier_prefixes
from focuscrawl.topic import Topic, TopicError, shared_topic

logger = logging.getLogger(__name__)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def publish_topic(client: Any, prefix: str, topic: Topic) -> bool:
    """Store the crawl's topic unless one is already there; True when this call stored it.

    Example and negative pages go as URLs only: a joining worker never reads a local file
    named by Redis, so this worker's local example files stay its own."""
    record = {
        "name": topic.name,
        "keywords": topic.keywords,
        "seeds": topic.seeds,
        "examples": topic.example_urls(),
        "negatives": topic.negative_urls(),
    }
    return bool(client.set(f"{prefix}:topic", json.dumps(record), nx=True))


def read_topic(client: Any, prefix: str) -> Topic:
    """The crawl's topic from Redis, checked as a local topic is (:func:`shared_topic`); a
    local path among its examples is left out, with a warning."""
    raw = client.get(f"{prefix}:topic")
    if raw is None:
        raise TopicError(
            f"no topic in Redis at {prefix}:topic: start the first worker with -a topic=... "
            "(and -a seeds=...), later workers join without them"
        )
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise TopicError(f"malformed topic at {prefix}:topic: {exc}") from None
    topic, left_out = shared_topic(data, f"{prefix}:topic")
    if left_out:
        logger.warning(
            "Topic from Redis: %d example or negative entries are not URLs and are not read "
            "(a joining worker reads no local file named in Redis)",
            len(left_out),
        )
    return topic


def write_worker(client: Any, prefix: str, worker: str, record: dict[str, Any]) -> None:
    pipe = client.pipeline(transaction=False)
    pipe.sadd(f"{prefix}:workers", worker)
    pipe.hset(f"{prefix}:worker:{worker}", mapping={k: json.dumps(v) for k, v in record.items()})
    pipe.execute()


@dataclass
class ClusterStatus:
    queued: int
    in_flight: int
    redelivered: int
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    topic: str = ""

    @property
    def pages(self) -> int:
        return sum(_count(w.get("pages")) for w in self.workers.values())

    @property
    def relevant(self) -> int:
        return sum(_count(w.get("relevant")) for w in self.workers.values())

    @property
    def harvest_rate(self) -> float:
        judged = sum(_count(w.get("judged")) for w in self.workers.values())
        return self.relevant / judged if judged else 0.0


def _count(value: Any) -> int:
    """A worker's counter; 0 for what another program wrote in its place."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, int(value))


def _field(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _topic_name(raw: bytes | None) -> str:
    try:
        name = json.loads(raw)["name"] if raw else ""
    except (ValueError, TypeError, KeyError):
        return "?"
    return name if isinstance(name, str) else "?"


def frontier_counts(client: Any, prefix: str) -> tuple[int, int]:
    """(queued, in flight) of the crawl's frontier, summed over its shards on a cluster."""
    shards = frontier_prefixes(client, prefix)
    pipe = client.pipeline(transaction=False)
    for shard in shards:
        pipe.get(f"{shard}:n")
        pipe.zcard(f"{shard}:lease")
    counts = pipe.execute()
    return sum(int(n or 0) for n in counts[0::2]), sum(int(n or 0) for n in counts[1::2])


def read_status(client: Any, prefix: str) -> ClusterStatus:
    """The crawl's status; on a Redis Cluster (``client`` a ``RedisCluster``) the frontier's
    counts are summed over its shards."""
    shards = frontier_prefixes(client, prefix)
    pipe = client.pipeline(transaction=False)
    for shard in shards:
        pipe.get(f"{shard}:n")
        pipe.zcard(f"{shard}:lease")
        pipe.hget(f"{shard}:stats", "frontier/redelivered")
    pipe.smembers(f"{prefix}:workers")
    pipe.get(f"{prefix}:topic")
    *counts, members, topic = pipe.execute()
    queued = sum(_count(_field(n or b"0")) for n in counts[0::3])
    in_flight = sum(int(n or 0) for n in counts[1::3])
    redelivered = sum(_count(_field(n or b"0")) for n in counts[2::3])
    workers: dict[str, dict[str, Any]] = {}
    for member in sorted(members):
        name = member.decode("utf-8", "replace")
        raw = client.hgetall(f"{prefix}:worker:{name}")
        workers[name] = {k.decode("utf-8", "replace"): _field(v) for k, v in raw.items()}
    return ClusterStatus(
        queued=queued,
        in_flight=in_flight,
        redelivered=redelivered,
        workers=workers,
        topic=_topic_name(topic),
    )


def now() -> float:
    return time.time()


def read_quarantine(client: Any, prefix: str) -> list[QuarantineRecord]:
    """Every quarantined URL of the crawl (of every shard on a Redis Cluster), oldest first."""
    found = [r for p in frontier_prefixes(client, prefix) for r in read_redis_quarantine(client, p)]
    return sorted(found, key=lambda r: r.time)
