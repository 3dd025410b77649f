"""``focuscrawl demo``: an offline focused crawl of the synthetic test web, with its figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "demo"
EXAMPLE = "focuscrawl demo --topic jazz --pages 300"
HELP = "offline demo: serve the synthetic test web, crawl one topic breadth-first and focused, print and plot both"


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
    from focuseval.harness import run_evaluation

    if args.pages < 1:
        raise CommandError("--pages must be at least 1")
    focused = args.strategy or "default"
    print(
        f"focuscrawl demo: serving the synthetic test web, crawling topic {args.topic!r} for "
        f"{args.pages} pages with the breadth-first baseline, then with {focused} ...",
        flush=True,
    )
    try:
        (report,) = run_evaluation(
            "synthetic", [args.topic], ["bfs", args.strategy], args.pages, args.out
        )
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    runs = report["strategies"]
    for name, s in runs.items():
        if s["returncode"] != 0 or s["fetched"] == 0:
            raise CommandError(
                f"the {name} crawl failed (exit {s['returncode']}, {s['fetched']} pages); "
                f"see {s['scrapy_log']}"
            )
    print(f"\n{'crawl':34} {'pages':>6} {'harvest rate':>13} {'target recall':>14} {'pages/s':>8}")
    for name, s in runs.items():
        label = "bfs (breadth-first baseline)" if name == "bfs" else f"{name} (focused)"
        print(
            f"{label:34} {s['fetched']:6d} {s['harvest_rate']:13.3f} {s['target_recall']:14.3f} "
            f"{s.get('pages_per_second', 0.0):8.1f}"
        )
    base, best = runs["bfs"], runs[focused]
    if base["harvest_rate"] and base["target_recall"]:
        print(
            f"focused / baseline: harvest rate {best['harvest_rate'] / base['harvest_rate']:.2f}x, "
            f"target recall {best['target_recall'] / base['target_recall']:.2f}x "
            f"(of {report['targets']} pages of topic {args.topic!r})"
        )
    print(f"report: {report['files']['markdown']}  plot: {report['files']['png']}")
    return 0
