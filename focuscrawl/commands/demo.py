"""``focuscrawl demo``: an offline focused crawl of the synthetic test web, with its figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "demo"
HELP = "offline demo: serve the synthetic test web, crawl one topic, print harvest rate and recall"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topic",
        default="birds",
        help="synthetic topic (birds, astronomy, chemistry, football, cooking, jazz, sailing, finance)",
    )
    parser.add_argument("--pages", type=int, default=500, help="pages to fetch")
    parser.add_argument(
        "--strategy", default=None, help="frontier strategy (default: FOCUSCRAWL_STRATEGY)"
    )
    parser.add_argument("--out", type=Path, default=Path("reports/demo"), help="report folder")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.evaluation.harness import run_evaluation

    if args.pages < 1:
        raise CommandError("--pages must be at least 1")
    print(
        f"focuscrawl demo: serving the synthetic test web, crawling topic {args.topic!r} for {args.pages} pages ...",
        flush=True,
    )
    try:
        (report,) = run_evaluation("synthetic", [args.topic], [args.strategy], args.pages, args.out)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    ((name, s),) = report["strategies"].items()
    if s["returncode"] != 0 or s["fetched"] == 0:
        raise CommandError(
            f"the crawl failed (exit {s['returncode']}, {s['fetched']} pages); see {s['scrapy_log']}"
        )
    print(f"strategy {name}: {s['fetched']} pages fetched in {s['seconds']:.0f} s")
    print(
        f"harvest rate  {s['harvest_rate']:.3f}  ({s['relevant']} relevant pages of {s['fetched']} fetched)"
    )
    print(
        f"target recall {s['target_recall']:.3f}  (of {report['targets']} pages of topic {args.topic!r})"
    )
    print(f"report: {report['files']['markdown']}  plot: {report['files']['png']}")
    return 0
