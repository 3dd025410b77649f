"""``focuscrawl export-es``: the page index as Elasticsearch / OpenSearch bulk JSON lines."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from focuscrawl.cli import CommandError
from focuscrawl.commands.search import add_index_arguments, open_index

NAME = "export-es"
EXAMPLE = "focuscrawl export-es --index focuscrawl-data/index.sqlite > bulk.jsonl"
HELP = "export the page index as Elasticsearch/OpenSearch bulk JSON lines (--mapping: the mapping)"

_INDEX_NAME = re.compile(r"^[a-z0-9][a-z0-9_.+-]{0,254}$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_index_arguments(parser)
    parser.add_argument("-o", "--out", type=Path, default=None, help="output file (default stdout)")
    parser.add_argument(
        "--es-index", default="focuscrawl", help="target index name (default focuscrawl)"
    )
    parser.add_argument(
        "--mapping", action="store_true", help="print the index settings+mapping JSON instead"
    )


def run(args: argparse.Namespace) -> int:
    from focuscrawl.index.export import es_mapping, export_index

    if args.mapping:
        json.dump(es_mapping(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if not _INDEX_NAME.match(args.es_index) or args.es_index in (".", ".."):
        raise CommandError(
            f"invalid Elasticsearch index name {args.es_index!r} (lower case, no spaces)"
        )
    index = open_index(args.index)
    try:
        if args.out is None:
            n = export_index(index, sys.stdout, args.es_index)
        else:
            with args.out.open("w", encoding="utf-8") as out:
                n = export_index(index, out, args.es_index)
            print(f"{n} pages written to {args.out}", file=sys.stderr)
    finally:
        index.close()
    return 0
