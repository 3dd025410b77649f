"""``focuscrawl eval-classifiers``: the relevance classifier table on Wikispeedia."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "eval-classifiers"
EXAMPLE = "focuscrawl eval-classifiers --parts table"
HELP = (
    "relevance classifiers on Wikispeedia: cosine vs SVM (true negatives) vs PU-SVM vs PU "
    "ensemble, PSO vs BWPSO, topic drift, per-page cost"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--parts",
        default="table,pso,drift,speed,retrain",
        help="comma-separated: table, ceiling (fully supervised cross-validation), traintime, "
        "pso, drift, speed, retrain",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=None,
        help="corpora folder (default: FOCUSCRAWL_CORPORA or ../shared/corpora)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="re-render and re-partition the articles (else cached in "
        "FOCUSCRAWL_CACHE or ~/.cache/focuscrawl)",
    )
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    from focuseval.classifier_report import run_all
    from focuseval.classifiers import default_cache_dir
    from focuseval.corpora import corpora_dir

    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - {"table", "ceiling", "traintime", "pso", "drift", "speed", "retrain"}
    if unknown:
        raise CommandError(f"unknown --parts {', '.join(sorted(unknown))}")
    base = args.corpora or corpora_dir()
    if base is None:
        raise CommandError("no corpora folder: set FOCUSCRAWL_CORPORA or pass --corpora")
    root = base if (Path(base) / "links.tsv").is_file() else Path(base) / "wikispeedia"
    if not (root / "plaintext_articles.tar.gz").is_file():
        raise CommandError(f"no Wikispeedia corpus under {base}")
    text = run_all(
        root, cache_dir=None if args.no_cache else default_cache_dir(), parts=parts, seed=args.seed
    )
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0
