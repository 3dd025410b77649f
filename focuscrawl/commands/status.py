"""``focuscrawl status``: the state of a Redis-backed crawl cluster."""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict

from focuscrawl.cli import CommandError

NAME = "status"
HELP = "show a Redis crawl cluster: pages, harvest rate, queue size, in flight, per worker"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("FOCUSCRAWL_REDIS_URL") or os.environ.get("REDIS_URL") or "",
        help="Redis URL (default: FOCUSCRAWL_REDIS_URL or REDIS_URL)",
    )
    parser.add_argument("--spider", default="topical_redis", help="spider name of the crawl")
    parser.add_argument(
        "--prefix", default="", help="key prefix (default: focuscrawl:<spider>, as the workers)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import redis

    from focuscrawl.cluster.state import read_status

    if not args.redis_url:
        raise CommandError("no Redis: pass --redis-url or set REDIS_URL")
    prefix = args.prefix or f"focuscrawl:{args.spider}"
    client = redis.Redis.from_url(args.redis_url, socket_connect_timeout=5)
    try:
        status = read_status(client, prefix)
    except redis.RedisError as exc:
        raise CommandError(f"cannot read {args.redis_url}: {exc}") from exc
    finally:
        client.close()
    if args.json:
        out = asdict(status) | {
            "pages": status.pages,
            "relevant": status.relevant,
            "harvest_rate": round(status.harvest_rate, 4),
        }
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    print(f"crawl {prefix}" + (f"  topic: {status.topic}" if status.topic else ""))
    print(
        f"pages {status.pages}  relevant {status.relevant}  "
        f"harvest rate {status.harvest_rate:.3f}  queued {status.queued}  "
        f"in flight {status.in_flight}  redelivered {status.redelivered}"
    )
    if not status.workers:
        print("no workers have reported yet")
        return 0
    # states as long as "finished (closespider_pagecount)" keep the columns aligned
    width = max(22, *(len(str(w.get("state", "?"))) for w in status.workers.values()))
    print(f"{'worker':32} {'state':{width}} {'pages':>7} {'harvest':>8} {'updated':>9}")
    now = time.time()
    for name, w in status.workers.items():
        age = now - float(w.get("updated", now))
        print(
            f"{name:32} {str(w.get('state', '?')):{width}} {int(w.get('pages', 0)):7d} "
            f"{float(w.get('harvest_rate', 0.0)):8.3f} {age:8.0f}s"
        )
    return 0
