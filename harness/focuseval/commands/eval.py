"""``focuscrawl eval``: crawl test-web topics with several strategies; report harvest and recall."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.cli import CommandError
from focuscrawl.defaults import STRATEGIES

NAME = "eval"
EXAMPLE = "focuscrawl eval --corpus wikispeedia --topic subject.Science.Biology.Birds --strategies bfs,sharksearch-blocks --pages 1000"
HELP = "evaluate crawl strategies on the local test web (harvest rate, target recall, plots)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from focuseval.harness import EVAL_CORPORA

    parser.add_argument("--corpus", choices=EVAL_CORPORA, default="wikispeedia")
    parser.add_argument(
        "--topic",
        action="append",
        default=None,
        help="Wikispeedia category (e.g. subject.Science.Biology.Birds), its short name (Birds) "
        "or a set (tuned, dev, heldout), or synthetic topic (e.g. birds); repeatable",
    )
    parser.add_argument(
        "--strategies",
        default="bfs,bestfirst",
        help=f"comma-separated strategies, of: {', '.join(STRATEGIES)}",
    )
    parser.add_argument(
        "--pages", type=int, default=2000, help="pages per crawl (CLOSESPIDER_PAGECOUNT)"
    )
    parser.add_argument("--out", type=Path, default=Path("reports"), help="report folder")
    parser.add_argument(
        "--corpora",
        type=Path,
        default=None,
        help="corpora folder (default: FOCUSCRAWL_CORPORA or ../shared/corpora)",
    )
    parser.add_argument("--hosts", type=int, default=None, help="number of 127.0.0.x hosts")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed per crawl")


def run(args: argparse.Namespace) -> int:
    from focuseval.harness import run_evaluation

    topics = args.topic or (
        ["subject.Science.Biology.Birds"] if args.corpus == "wikispeedia" else ["birds"]
    )
    strategies: list[str | None] = [s.strip() for s in args.strategies.split(",") if s.strip()]
    if not strategies:
        raise CommandError("--strategies is empty")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise CommandError(
            f"--strategies: unknown {', '.join(map(str, unknown))}; one of {', '.join(STRATEGIES)}"
        )
    if args.pages < 1:
        raise CommandError("--pages must be at least 1")
    try:
        reports = run_evaluation(
            args.corpus,
            topics,
            strategies,
            args.pages,
            args.out,
            args.corpora,
            args.hosts,
            args.timeout,
        )
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    for report in reports:
        print(f"{report['topic']}: {report['files']['markdown']} {report['files']['png']}")
        for name, s in report.get("references", {}).items():
            at500 = s["checkpoints"].get("500")
            cell = "n/a" if at500 is None else f"recall {at500['target_recall']:.3f}"
            print(f"  {name + ' (ref)':12s} {s['fetched']:5d} pages, at 500: {cell}")
        for name, s in report["strategies"].items():
            at500 = s["checkpoints"].get("500")
            cell = (
                "n/a"
                if at500 is None
                else f"harvest {at500['harvest_rate']:.3f}, recall {at500['target_recall']:.3f}"
            )
            x = s.get("x_oracle", {}).get("500")
            vs = "" if x is None else f", ×oracle {x:.2f}"
            print(
                f"  {name:12s} {s['fetched']:5d} pages, at 500: {cell}{vs}; final harvest {s['harvest_rate']:.3f}, recall {s['target_recall']:.3f}, exit {s['returncode']}"
            )
    print(f"report: {args.out / 'report.md'}")
    return 0
