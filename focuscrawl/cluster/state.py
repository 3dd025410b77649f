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


def read_status(client: Any, prefix: str) -> ClusterStatus:
    pipe = client.pipeline(transaction=False)
    pipe.get(f"{prefix}:n")
    pipe.zcard(f"{prefix}:lease")
    pipe.hget(f"{prefix}:stats", "frontier/redelivered")
    pipe.smembers(f"{prefix}:workers")
    pipe.get(f"{prefix}:topic")
    queued, in_flight, redelivered, members, topic = pipe.execute()
    workers: dict[str, dict[str, Any]] = {}
    for member in sorted(members):
        name = member.decode("utf-8", "replace")
        raw = client.hgetall(f"{prefix}:worker:{name}")
        workers[name] = {k.decode("utf-8", "replace"): _field(v) for k, v in raw.items()}
    return ClusterStatus(
        queued=_count(_field(queued or b"0")),
        in_flight=int(in_flight or 0),
        redelivered=_count(_field(redelivered or b"0")),
        workers=workers,
        topic=_topic_name(topic),
    )


def now() -> float:
    return time.time()
