"""``focuscrawl testweb``: serve the synthetic or the Wikispeedia test web on loopback."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "testweb"
EXAMPLE = "focuscrawl testweb --corpus hostile --port 8123"
HELP = "serve a local multi-host test web (synthetic, evolving, Wikispeedia, dressed or hostile) until interrupted"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        choices=[
            "synthetic",
            "evolving",
            "evolving-signals",
            "wikispeedia",
            "dressed",
            "hostile",
            "hostile-mix",
            "mirrored",
            "jsweb",
        ],
        default="synthetic",
        help="dressed: the Wikispeedia articles inside real sites' chrome (64 hosts and a 404 "
        "host); hostile: ordinary pages among hostile pages, wire tricks and traps (hostile-mix: "
        "with the synthetic web, for the soak bench)",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=None,
        help="corpora folder (default: FOCUSCRAWL_CORPORA or ../shared/corpora)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port shared by all hosts; 0 picks a free one"
    )
    parser.add_argument("--hosts", type=int, default=None, help="number of 127.0.0.x hosts")
    parser.add_argument("--seed", type=int, default=7, help="generator seed of the synthetic web")
    parser.add_argument(
        "--pages", type=int, default=0, help="pages of the synthetic web (0: its default, 3000)"
    )
    parser.add_argument(
        "--latency-ms",
        type=int,
        default=0,
        help="every response waits this long before it is sent (a distant server)",
    )


def run(args: argparse.Namespace) -> int:
    from focuseval.testweb import run_foreground

    try:
        run_foreground(
            args.corpus,
            args.port,
            args.hosts,
            args.corpora,
            args.seed,
            args.pages,
            args.latency_ms,
        )
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    return 0
