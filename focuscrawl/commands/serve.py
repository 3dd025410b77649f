"""``focuscrawl serve``: the search page and the crawl dashboard on a loopback address."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from focuscrawl.cli import CommandError
from focuscrawl.commands.search import add_index_arguments, default_index_path, weights_from

NAME = "serve"
EXAMPLE = "focuscrawl serve --index focuscrawl-data/index.sqlite --port 8080"
HELP = "serve the search page and the crawl dashboard on loopback (prints a JSON ready line)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arguments(parser)
    parser.add_argument(
        "--crawl-log",
        type=Path,
        default=None,
        help="crawl log JSON lines (default: FOCUSCRAWL_CRAWL_LOG)",
    )
    parser.add_argument(
        "--stats",
        type=Path,
        default=None,
        help="crawl stats JSON (default: FOCUSCRAWL_DATA_DIR/stats.json if present)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        default=None,
        help="the label file the review page writes (default: FOCUSCRAWL_LABELS, else "
        "labels.jsonl beside the index)",
    )
    parser.add_argument(
        "--redis",
        default=None,
        help="a cluster crawl's Redis URL: the review page reads and writes its labels there "
        "(the stream <prefix>:labels) instead of a label file",
    )
    parser.add_argument(
        "--prefix",
        default="focuscrawl:topical",
        help="the crawl's FOCUSCRAWL_REDIS_PREFIX (default focuscrawl:topical)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8300, help="port; 0 picks a free one (default 8300)"
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host header name to answer (repeatable; the bound address and localhost "
        "always work): requests for any other name get 421, against DNS rebinding",
    )
    parser.add_argument("--relevance-weight", type=float, default=None)
    parser.add_argument("--authority-weight", type=float, default=None)


def run(args: argparse.Namespace) -> int:
    from focuscrawl.web.app import Sources, make_server

    index = args.index or default_index_path()
    log = args.crawl_log or (
        Path(os.environ["FOCUSCRAWL_CRAWL_LOG"]) if os.environ.get("FOCUSCRAWL_CRAWL_LOG") else None
    )
    from focuscrawl.index.backend import describe, is_postgres

    near_index = None if is_postgres(index) else Path(index).parent
    stats_env = os.environ.get("FOCUSCRAWL_STATS_FILE")
    stats = args.stats or (
        Path(stats_env) if stats_env else near_index / "stats.json" if near_index else None
    )
    data_dir = near_index or Path(os.environ.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data")
    labels: Any = args.labels or Path(
        os.environ.get("FOCUSCRAWL_LABELS") or data_dir / "labels.jsonl"
    )
    if args.redis:
        from focuscrawl.cluster.labels import RedisLabelStore
        from focuscrawl.frontier.connection import connect

        labels = RedisLabelStore(connect(args.redis), args.prefix, args.redis)
    sources = Sources(
        index=index, crawl_log=log, stats=stats, weights=weights_from(args), labels=labels
    )
    try:
        server = make_server(sources, args.host, args.port, args.allowed_host)
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    # one JSON line once listening: scripts and tests wait on it, never on a timer
    sys.stdout.write(
        json.dumps(
            {"url": server.url, "index": describe(index), "crawl_log": str(log) if log else None}
        )
        + "\n"
    )
    sys.stdout.flush()
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
