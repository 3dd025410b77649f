"""What a crawl keeps in Redis besides the frontier: its topic and its workers' stats.

No Scrapy here: plain functions over a ``redis.Redis`` client and a key prefix
(``focuscrawl:<spider>``, the frontier's prefix), so ``focuscrawl status`` and tests use them.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.topic import Topic, TopicError


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def publish_topic(client: Any, prefix: str, topic: Topic) -> bool:
    """Store the crawl's topic unless one is already there; True when this call stored it."""
    record = {
        "name": topic.name,
        "keywords": topic.keywords,
        "seeds": topic.seeds,
        "examples": topic.examples,
        "negatives": topic.negatives,
    }
    return bool(client.set(f"{prefix}:topic", json.dumps(record), nx=True))


def read_topic(client: Any, prefix: str) -> Topic:
    raw = client.get(f"{prefix}:topic")
    if raw is None:
        raise TopicError(
            f"no topic in Redis at {prefix}:topic: start the first worker with -a topic=... "
            "(and -a seeds=...), later workers join without them"
        )
    try:
        data = json.loads(raw)
        return Topic(**data)
    except (ValueError, TypeError) as exc:
        raise TopicError(f"malformed topic at {prefix}:topic: {exc}") from None


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
        return sum(int(w.get("pages", 0)) for w in self.workers.values())

    @property
    def relevant(self) -> int:
        return sum(int(w.get("relevant", 0)) for w in self.workers.values())

    @property
    def harvest_rate(self) -> float:
        judged = sum(int(w.get("judged", 0)) for w in self.workers.values())
        return self.relevant / judged if judged else 0.0


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
        name = member.decode()
        raw = client.hgetall(f"{prefix}:worker:{name}")
        workers[name] = {k.decode(): json.loads(v) for k, v in raw.items()}
    return ClusterStatus(
        queued=int(queued or 0),
        in_flight=int(in_flight or 0),
        redelivered=int(redelivered or 0),
        workers=workers,
        topic=json.loads(topic)["name"] if topic else "",
    )


def now() -> float:
    return time.time()
