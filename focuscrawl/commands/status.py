"""``focuscrawl status``: the state of a Redis-backed crawl cluster."""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import asdict

from focuscrawl.change.signals import HostTrust
from focuscrawl.cli import CommandError
from focuscrawl.credentials import RedisAuthError, redact_text, redact_url, with_env_password
from focuscrawl.terminal import terminal_line

NAME = "status"
EXAMPLE = "focuscrawl status --redis-url redis://127.0.0.1:6379/0"
QUARANTINE_SHOWN = 20
TRUST_SHOWN = 20
HELP = "show a Redis crawl cluster: pages, harvest rate, queue size, in flight, per worker (--index: its search index)"


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
    parser.add_argument(
        "--change-prefix",
        default=os.environ.get("FOCUSCRAWL_CHANGE_REDIS_PREFIX") or "fc:chg",
        help="the change store's key prefix, whose hosts' signal trust is shown (default fc:chg)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--index",
        default=os.environ.get("FOCUSCRAWL_INDEX_URL") or "",
        metavar="PATH|URL",
        help="also show the search index (a SQLite path or a postgresql:// URL; default: "
        "FOCUSCRAWL_INDEX_URL): pages and the last crawls' counts",
    )


def index_status(location: str) -> dict[str, object]:
    """Pages and the last crawls of the index at ``location`` (either backend)."""
    from focuscrawl.commands.search import index_location, open_index
    from focuscrawl.index.backend import READ_ERRORS, describe

    index = open_index(index_location(location))
    try:
        return {"index": describe(location), "pages": len(index), "crawls": index.crawls(3)}
    except READ_ERRORS as exc:
        raise CommandError(str(exc)) from None
    finally:
        index.close()


def _print_index(info: dict[str, object]) -> None:
    print(f"index {terminal_line(str(info['index']))}: {info['pages']} pages")
    for crawl in info["crawls"]:  # type: ignore[attr-defined]
        counts = crawl.get("counts") or {}
        shown = {k: counts[k] for k in ("added", "replaced", "removed") if k in counts}
        state = "finished" if crawl.get("finished") else "running or stopped"
        print(f"  crawl {crawl['id']} ({state}): {shown}")


def run(args: argparse.Namespace) -> int:
    import redis

    from focuscrawl.cluster.state import read_quarantine, read_status
    from focuscrawl.frontier.connection import connect

    info = index_status(args.index) if args.index else None
    if not args.redis_url:
        if info is None:
            raise CommandError("no Redis: pass --redis-url or set REDIS_URL (or --index)")
        if args.json:
            print(json.dumps({"index": info}, indent=2, sort_keys=True))
        else:
            _print_index(info)
        return 0
    url = with_env_password(args.redis_url)
    prefix = args.prefix or f"focuscrawl:{args.spider}"
    try:
        client = connect(url, socket_connect_timeout=5)  # a Redis Cluster node too
    except ValueError as exc:  # a malformed URL: redis-py's message may quote it
        raise CommandError(
            f"bad Redis URL {redact_url(url)}: {redact_text(str(exc), url)}"
        ) from None
    try:
        status = read_status(client, prefix)
        quarantined = read_quarantine(client, prefix)
        trust = read_trust(client, args.change_prefix)
    except redis.AuthenticationError as exc:
        raise CommandError(str(RedisAuthError(url, exc))) from None
    except redis.RedisError as exc:
        raise CommandError(f"cannot read {redact_url(url)}: {redact_text(str(exc), url)}") from None
    finally:
        client.close()
    if args.json:
        out = asdict(status) | {
            "pages": status.pages,
            "relevant": status.relevant,
            "harvest_rate": round(status.harvest_rate, 4),
            "quarantined": [asdict(q) for q in quarantined],
            "signal_trust": {
                h: asdict(t) | {"state": t.state(), "checks": t.checks} for h, t in trust.items()
            },
        }
        if info is not None:
            out["index"] = info
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    # topic, worker names and states come from Redis: printed without control characters
    topic = terminal_line(status.topic)
    print(f"crawl {terminal_line(prefix)}" + (f"  topic: {topic}" if topic else ""))
    print(
        f"pages {status.pages}  relevant {status.relevant}  "
        f"harvest rate {status.harvest_rate:.3f}  queued {status.queued}  "
        f"in flight {status.in_flight}  redelivered {status.redelivered}  "
        f"quarantined {len(quarantined)}"
    )
    if info is not None:
        _print_index(info)
    for q in quarantined[-QUARANTINE_SHOWN:]:  # pages that killed a worker twice: never re-queued
        print(f"quarantined after {q.attempts} attempts: {terminal_line(q.url)[:200]}")
    for line in trust_lines(trust):
        print(line)
    if not status.workers:
        print("no workers have reported yet")
        return 0
    # states as long as "finished (closespider_pagecount)" keep the columns aligned
    states = {
        name: terminal_line(str(w.get("state", "?")))[:80] for name, w in status.workers.items()
    }
    width = max(22, *(len(state) for state in states.values()))
    print(f"{'worker':32} {'state':{width}} {'pages':>7} {'harvest':>8} {'updated':>9}")
    now = time.time()
    for name, w in status.workers.items():
        age = now - _number(w.get("updated"), now)
        print(
            f"{terminal_line(name)[:80]:32} {states[name]:{width}} "
            f"{int(_number(w.get('pages'), 0)):7d} "
            f"{_number(w.get('harvest_rate'), 0.0):8.3f} {age:8.0f}s"
        )
    return 0


def _number(value: object, default: float) -> float:
    """A worker's figure as a number; ``default`` for what another program wrote otherwise."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def read_trust(client: object, change_prefix: str) -> dict[str, HostTrust]:
    """The hosts' signal trust the workers keep in the change store's Redis (issue 31)."""
    from focuscrawl.change.signal_store import RedisSignalStore

    class _Store:  # the signal store reads through a change store's client and prefix
        prefix = change_prefix

        def __init__(self) -> None:
            self.client = client

    return RedisSignalStore(_Store()).trust()


def trust_lines(trust: dict[str, HostTrust]) -> list[str]:
    """One line per host (the most checked first, at most TRUST_SHOWN): its trust, evidence."""
    hosts = sorted(trust, key=lambda h: (-trust[h].checks, h))[:TRUST_SHOWN]
    return [
        f"signals {terminal_line(h)[:80]}: {trust[h].state()} ({trust[h].agreed} agreed, "
        f"{trust[h].missed} missed, {trust[h].false_moves} false of {trust[h].checks} checks)"
        for h in hosts
    ]
