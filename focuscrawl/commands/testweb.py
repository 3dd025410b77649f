"""``focuscrawl testweb``: serve the synthetic or the Wikispeedia test web on loopback."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "testweb"
HELP = "serve a local multi-host test web (synthetic, evolving or Wikispeedia) until interrupted"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus", choices=["synthetic", "evolving", "wikispeedia"], default="synthetic"
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


def run(args: argparse.Namespace) -> int:
    from focuscrawl.evaluation.testweb import run_foreground

    try:
        run_foreground(args.corpus, args.port, args.hosts, args.corpora, args.seed)
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    return 0
