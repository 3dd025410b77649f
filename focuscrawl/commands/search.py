"""``focuscrawl search "query"``: ranked results from a crawl's page index."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "search"
EXAMPLE = (
    'focuscrawl search "bald eagle nest" --index focuscrawl-data/index.sqlite (or postgresql://…)'
)
HELP = "search the page index of a crawl (BM25 combined with topical relevance)"


def default_index_path() -> Path | str:
    """``FOCUSCRAWL_INDEX_URL`` (a path or a ``postgresql://`` URL), else
    ``FOCUSCRAWL_INDEX_PATH``, else ``index.sqlite`` in ``FOCUSCRAWL_DATA_DIR`` (environment)."""
    from focuscrawl.defaults import DEFAULTS
    from focuscrawl.index.backend import is_postgres

    explicit = os.environ.get("FOCUSCRAWL_INDEX_URL") or os.environ.get("FOCUSCRAWL_INDEX_PATH")
    if explicit:
        return explicit if is_postgres(explicit) else Path(explicit)
    data_dir = os.environ.get("FOCUSCRAWL_DATA_DIR") or DEFAULTS["FOCUSCRAWL_DATA_DIR"]
    return Path(data_dir) / "index.sqlite"


def add_index_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        type=index_location,
        default=None,
        metavar="PATH|URL",
        help="index: a SQLite path or a postgresql:// URL (default: FOCUSCRAWL_INDEX_URL, "
        "FOCUSCRAWL_INDEX_PATH or FOCUSCRAWL_DATA_DIR/index.sqlite)",
    )


def index_location(text: str) -> Path | str:
    """``--index``'s value: a ``postgresql://`` URL as it is, anything else a path."""
    from focuscrawl.index.backend import is_postgres

    return text if is_postgres(text) else Path(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help='words, "quoted phrases", prefix* terms')
    add_index_arguments(parser)
    parser.add_argument("-n", "--limit", type=int, default=10, help="results to show (default 10)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument(
        "--relevance-weight",
        type=float,
        default=None,
        help="weight of topical relevance against BM25, 0..1 (default 0.5)",
    )
    parser.add_argument(
        "--authority-weight",
        type=float,
        default=None,
        help="weight of link authority, 0..1 (default 0)",
    )


def open_index(path: Path | str | None):  # type: ignore[no-untyped-def]
    from focuscrawl.index.backend import READ_ERRORS
    from focuscrawl.index.backend import open_index as open_store

    path = path or default_index_path()
    try:
        return open_store(path, readonly=True)
    except FileNotFoundError as exc:
        raise CommandError(f"{exc} (crawl first, or pass --index PATH|URL)") from None
    except ImportError as exc:  # psycopg missing: the postgres extra
        raise CommandError(f"{exc}: pip install 'focuscrawl[postgres]'") from None
    except READ_ERRORS as exc:  # messages carry no password
        raise CommandError(str(exc)) from None


def weights_from(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from focuscrawl.index import RankWeights

    defaults = RankWeights()
    try:
        return RankWeights(
            relevance=defaults.relevance
            if args.relevance_weight is None
            else args.relevance_weight,
            authority=defaults.authority
            if args.authority_weight is None
            else args.authority_weight,
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from focuscrawl.index import QueryError
    from focuscrawl.index.render import hit_dict, snippet_text
    from focuscrawl.terminal import json_terminal_safe, terminal_line

    if args.limit < 1:
        raise CommandError("-n must be at least 1")
    from focuscrawl.index.backend import IndexStoreError

    index = open_index(args.index)
    try:
        result = index.search(args.query, limit=args.limit, weights=weights_from(args))
    except (QueryError, IndexStoreError) as exc:
        raise CommandError(str(exc)) from exc
    finally:
        index.close()
    if args.json:
        out = {
            "query": result.query,
            "mode": result.mode,
            "hits": [hit_dict(h) for h in result.hits],
        }
        # crawled text: C1 controls and bidi overrides escaped, the same JSON for a program
        sys.stdout.write(json_terminal_safe(json.dumps(out, ensure_ascii=False)) + "\n")
        return 0
    if not result.hits:
        print(f"no results for {args.query!r}")
        return 0
    if result.mode == "or":
        print("(no page holds every word; showing pages with any of them)")
    bold, mark, reset = ("\x1b[1m", "\x1b[7m", "\x1b[0m") if sys.stdout.isatty() else ("", "[", "]")
    mark_end = reset if sys.stdout.isatty() else "]"
    for i, hit in enumerate(result.hits, 1):
        # crawled text, cleaned before our own highlighting escapes are added
        title, url = terminal_line(hit.title or hit.url), terminal_line(hit.url)
        print(f"{i:2d}. {bold}{title}{reset if bold else ''}")
        print(f"    {url}")
        print(f"    relevance {hit.relevance:.3f}  score {hit.score:.3f}")
        print(f"    {snippet_text(terminal_line(hit.snippet), mark, mark_end)}")
    return 0
