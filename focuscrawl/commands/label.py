"""``focuscrawl label``: label crawled pages on topic / off topic in a terminal, the pages the
relevance judge was least sure about first (as the review page of ``focuscrawl serve``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from focuscrawl.cli import CommandError
from focuscrawl.commands.search import default_index_path
from focuscrawl.terminal import terminal_line

NAME = "label"
EXAMPLE = "focuscrawl label --crawl-log crawl.jsonl"
HELP = "label crawled pages on/off topic, least certain first; a crawl learns from the labels"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--labels", type=Path, default=None, help="label file (default: "
                        "FOCUSCRAWL_LABELS, else labels.jsonl in FOCUSCRAWL_DATA_DIR)")  # fmt: skip
    parser.add_argument(
        "--crawl-log", type=Path, default=None, help="crawl log (default: FOCUSCRAWL_CRAWL_LOG)"
    )
    parser.add_argument("--index", default=None, help="index path or URL (titles, pages)")
    parser.add_argument("-n", type=int, default=20, help="pages to ask about (default 20)")
    parser.add_argument("--url", default=None, help="label this URL (with --on or --off)")
    parser.add_argument("--redis", default=None, help="a cluster crawl's Redis URL: the labels "
                        "go to its stream <prefix>:labels (default: the file)")  # fmt: skip
    parser.add_argument("--prefix", default="focuscrawl:topical",
                        help="the crawl's FOCUSCRAWL_REDIS_PREFIX (default focuscrawl:topical)")  # fmt: skip
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--on", action="store_true", help="--url is on topic")
    group.add_argument("--off", action="store_true", help="--url is off topic")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.index.backend import is_postgres
    from focuscrawl.relevance.labels import LabelError, add_label, read_labels
    from focuscrawl.web.review import review_candidates

    index = args.index or default_index_path()
    data_dir = Path(os.environ.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data")
    if not is_postgres(index):
        data_dir = Path(index).parent
    path = args.labels or Path(os.environ.get("FOCUSCRAWL_LABELS") or data_dir / "labels.jsonl")
    book: Any = None
    write: Callable[[str, bool], Any] = lambda url, on: add_label(path, url, on, "cli")  # noqa: E731
    where = str(path)
    if args.redis:
        from focuscrawl.cluster.labels import RedisLabelBook, add_redis_label
        from focuscrawl.credentials import redact_url
        from focuscrawl.frontier.connection import connect

        client = connect(args.redis)
        book = RedisLabelBook(client, args.prefix, args.redis)
        write = lambda url, on: add_redis_label(client, args.prefix, url, on, "cli")  # noqa: E731
        where = f"{redact_url(args.redis)} ({args.prefix}:labels)"
    if args.url is not None:
        if not (args.on or args.off):
            raise CommandError("--url needs --on or --off")
        try:
            write(args.url, args.on)
        except LabelError as exc:
            raise CommandError(str(exc)) from None
        print(f"labelled {'on' if args.on else 'off'} topic: {terminal_line(args.url)[:300]}")
        return 0
    log = args.crawl_log or (
        Path(os.environ["FOCUSCRAWL_CRAWL_LOG"]) if os.environ.get("FOCUSCRAWL_CRAWL_LOG") else None
    )
    if book is None:
        book = read_labels(path)
    else:
        book.read_all()
    present = is_postgres(index) or Path(index).exists()
    candidates = review_candidates(log, index if present else None, book, args.n)
    if not candidates:
        print("nothing to label: no crawl log or index with unlabelled pages")
        return 0
    print(
        f"{len(candidates)} pages, least certain first; y = on topic, n = off, s = skip, q = quit"
    )
    done = 0
    for c in candidates:
        judged = "on" if c["relevant"] else "off"
        title = terminal_line(c.get("title") or "")[:120]
        print(f"\n{terminal_line(c['url'])[:300]}\n  {title}\n  relevance {c['relevance']:.3f}, "
              f"judged {judged} topic [y/n/s/q] ", end="", flush=True)  # fmt: skip
        answer = sys.stdin.readline()
        if not answer:  # end of input
            break
        answer = answer.strip().lower()[:1]
        if answer == "q":
            break
        if answer in ("y", "n"):
            write(c["url"], answer == "y")
            done += 1
    print(f"\n{done} labels written to {where}")
    return 0
