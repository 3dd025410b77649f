"""``focuscrawl index migrate SRC DST``: copy a page index (a SQLite file) into another (a
PostgreSQL database), pages, last changes and crawl records; ``DST`` is created when missing."""

from __future__ import annotations

import argparse
import sys

from focuscrawl.cli import CommandError

NAME = "index"
EXAMPLE = "focuscrawl index migrate focuscrawl-data/index.sqlite postgresql://crawler@db/harvest"
HELP = (
    "index tools: migrate SRC DST copies a SQLite index into PostgreSQL (or any index into another)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    migrate = sub.add_parser(
        "migrate", help="copy the index SRC into DST (pages already there are replaced)"
    )
    migrate.add_argument(
        "src", metavar="SRC", help="the index read: a SQLite path or a postgresql:// URL"
    )
    migrate.add_argument(
        "dst", metavar="DST", help="the index written: a postgresql:// URL or a SQLite path"
    )


def run(args: argparse.Namespace) -> int:
    from focuscrawl.commands.search import index_location, open_index
    from focuscrawl.index.backend import READ_ERRORS, WRITE_ERRORS, describe
    from focuscrawl.index.backend import open_index as open_store
    from focuscrawl.index.migrate import copy_index

    if describe(args.src) == describe(args.dst):
        raise CommandError("SRC and DST are the same index")
    src = open_index(index_location(args.src))
    try:
        try:
            dst = open_store(index_location(args.dst))
        except ImportError as exc:
            raise CommandError(f"{exc}: pip install 'focuscrawl[postgres]'") from None
        except READ_ERRORS as exc:
            raise CommandError(str(exc)) from None
        try:
            n = copy_index(src, dst, progress=lambda k: print(f"{k} pages copied", file=sys.stderr))
        except (*READ_ERRORS, *WRITE_ERRORS) as exc:
            dst.rollback()
            raise CommandError(f"migration stopped: {exc} (run it again: it resumes)") from None
        finally:
            dst.close()
    finally:
        src.close()
    print(f"{n} pages copied from {describe(args.src)} to {describe(args.dst)}")
    return 0
