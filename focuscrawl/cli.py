"""The ``focuscrawl`` command: one subcommand per module in :mod:`focuscrawl.commands`, and one
per module that an installed distribution registers in the ``focuscrawl.commands`` entry-point
group (the evaluation harness, ``focuseval``, adds ``demo``, ``testweb``, ``eval``, …).

A command module defines ``NAME``, ``HELP``, ``EXAMPLE``, ``add_arguments(parser)`` and
``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from importlib.metadata import entry_points
from types import ModuleType

import focuscrawl.commands as commands_pkg
from focuscrawl.errors import CommandError  # one class even when run as python -m

__all__ = ["CommandError", "build_parser", "main"]

#: entry-point group through which another distribution adds ``focuscrawl`` subcommands
COMMAND_GROUP = "focuscrawl.commands"

DESCRIPTION = (
    "focuscrawl's tools around the crawl: an offline demo, evaluations, the local test web, "
    "search and serving of the harvest, training of relevance models, cluster status."
)


def _command_modules() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{commands_pkg.__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    # commands of other installed distributions (the evaluation harness): named by entry point,
    # loaded only here, so the crawler itself never imports them
    own = {m.NAME for m in mods}
    for ep in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        mod = ep.load()
        if mod.NAME not in own and hasattr(mod, "run"):
            mods.append(mod)
            own.add(mod.NAME)
    return sorted(mods, key=lambda m: m.NAME)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="focuscrawl",
        description=DESCRIPTION,
        epilog="example:\n  focuscrawl demo\n\nThe crawl itself is `scrapy crawl topical -a topic=...`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for mod in _command_modules():
        p = sub.add_parser(
            mod.NAME,
            help=mod.HELP,
            description=mod.HELP,
            epilog=f"example:\n  {mod.EXAMPLE}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
    )
    try:
        return int(args._run(args) or 0)
    except CommandError as exc:
        print(f"focuscrawl {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
