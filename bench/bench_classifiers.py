"""Relevance classifiers on Wikispeedia: cosine (baseline, best threshold) vs SVM with true
negatives vs PU-SVM vs PU ensemble; PSO vs BWPSO; topic drift; per-page cost against lxml.

    .venv/bin/python bench/bench_classifiers.py
        [--parts table,ceiling,traintime,pso,drift,speed,retrain,crawlstall]
        [--categories Birds,Chemistry] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from focuseval.classifier_report import run_all
from focuseval.classifiers import default_cache_dir
from focuseval.corpora import corpora_dir


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--parts",
        default="table,pso,drift,speed,retrain,crawlstall",
        help="table, ceiling (fully supervised 5-fold CV: what any linear classifier on these "
        "features reaches), traintime (CPU s of PU training with and without self-training), "
        "pso, drift, speed (CPU ms/page vs lxml), retrain (simulated stall), "
        "crawlstall (reactor lag of a real test-web crawl with and without online retraining)",
    )
    p.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    p.add_argument("--no-cache", action="store_true", help="re-render and re-partition")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--categories",
        default="",
        help="comma-separated subset of the table's categories by name suffix (e.g. Birds,Chemistry)",
    )
    p.add_argument("--stall-pages", type=int, default=4000, help="crawlstall: pages per crawl")
    p.add_argument("--stall-every", type=int, default=1000, help="crawlstall: retrain every N")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    base = corpora_dir()
    if base is None:
        print("needs ../shared/corpora (set FOCUSCRAWL_CORPORA)", file=sys.stderr)
        return 2
    text = run_all(
        base / "wikispeedia",
        cache_dir=None if args.no_cache else default_cache_dir(),
        parts=[s.strip() for s in args.parts.split(",")],
        seed=args.seed,
        categories=[c.strip() for c in args.categories.split(",") if c.strip()],
        stall_pages=args.stall_pages,
        stall_every=args.stall_every,
    )
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
