"""``focuscrawl eval-recrawl``: the recrawl experiments of issue 6 (``focuscrawl eval --recrawl``).

- ``six``: the six-cycle table on the evolving synthetic web (10..50 changed pages) for
  refetch-all, last-modified, size, hash, document index and simhash — simulated over the Site
  objects (the HTTP exchange with the test server's conditional-GET rules, no sockets);
- ``freshness``: uniform vs change-rate vs cluster sampling at equal budget, with the ceiling of
  an oracle that knows every rate;
- ``apfc``: precision/recall of ``significant`` on the 421 real versions of the APFC page.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "eval-recrawl"
HELP = "recrawl experiments: six-cycle table, freshness at equal budget, real-data precision/recall"
PARTS = ("six", "freshness", "apfc")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts")
    parser.add_argument("--pages", type=int, default=600, help="pages of the evolving web")
    parser.add_argument(
        "--changed",
        type=int,
        nargs="+",
        default=[10, 20, 30, 40, 50],
        help="pages touched by each mutation cycle",
    )
    parser.add_argument(
        "--budget", type=float, default=0.1, help="freshness: share revisited per cycle"
    )
    parser.add_argument("--cycles", type=int, default=120, help="freshness: cycles simulated")
    parser.add_argument("--fresh-pages", type=int, default=1000, help="freshness: pages")
    parser.add_argument(
        "--corpora", type=Path, default=None, help="corpora folder (FOCUSCRAWL_CORPORA)"
    )
    parser.add_argument("--limit", type=int, default=None, help="apfc: first N versions only")


def run_six(pages: int, changed: list[int]) -> None:
    from focuscrawl.evaluation.evolving import synthetic_evolving
    from focuscrawl.evaluation.recrawl import SIX_TECHNIQUES, run_six_cycles, six_cycle_table

    for n in changed:
        web = synthetic_evolving(n_pages=pages, changed=n)
        rows = {t: run_six_cycles(web, t) for t in SIX_TECHNIQUES}
        print(
            f"\n### {n} changed pages of {len(web.pages)} (cells: body KB / pages fetched / "
            "items sent to the index)\n"
        )
        print(six_cycle_table(rows))
        doc = {r.cycle: r for r in rows["doc-index"]}
        sim = {r.cycle: r for r in rows["simhash"]}
        print(
            f"\ndoc-index caught {doc['significant'].victims_indexed}/{n} significant changes, "
            f"{doc['delete'].victims_indexed}/{n} deletions, sent "
            f"{doc['insignificant'].indexed} items for {n} insignificant changes; simhash caught "
            f"{sim['significant'].victims_indexed}/{n} significant changes"
        )


def run_freshness(budget: float, cycles: int, pages: int) -> None:
    from focuscrawl.evaluation.recrawl import SCENARIOS, optimal_freshness, simulate_freshness

    print(
        f"\n### Freshness at equal budget ({budget:.0%} of {pages} pages per cycle, "
        f"{cycles} cycles, time-averaged)\n"
    )
    print(
        "| scenario | uniform | change-rate | cluster (two-phase) | cluster (one call, as the "
        "spider) | best / uniform | oracle ceiling / uniform |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, classes in SCENARIOS.items():
        res = {
            p: simulate_freshness(p, classes=classes, n_pages=pages, budget=budget, cycles=cycles)
            for p in ("uniform", "change-rate", "cluster", "cluster-one-call")
        }
        ceiling = optimal_freshness(classes, budget)
        best = max(res["change-rate"], res["cluster"], res["cluster-one-call"])
        print(
            f"| {name} | {res['uniform']:.3f} | {res['change-rate']:.3f} | {res['cluster']:.3f} "
            f"| {res['cluster-one-call']:.3f} | {best / res['uniform']:.2f}x "
            f"| {ceiling / res['uniform']:.2f}x |"
        )


def run_apfc(corpora: Path | None, limit: int | None) -> None:
    from focuscrawl.corpora import corpora_dir
    from focuscrawl.evaluation.recrawl import apfc_versions, score_versions

    root = corpora or corpora_dir()
    if root is None:
        raise CommandError("the APFC corpus needs FOCUSCRAWL_CORPORA or --corpora")
    t = time.perf_counter()
    scores = score_versions(
        apfc_versions(root, limit=limit),
        techniques=("hash", "size", "doc-index", "simhash"),
        package_bits=(0, 3),
    )
    print(f"\n### APFC: `significant` vs the labels ({time.perf_counter() - t:.0f} s)\n")
    print("| technique | TP | FP | FN | TN | precision | recall |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, s in scores.items():
        print(
            f"| {name} | {s.tp} | {s.fp} | {s.fn} | {s.tn} | {s.precision:.3f} | {s.recall:.3f} |"
        )
    doc = scores["doc-index"]
    print(f"\ndoc-index false positives (versions): {', '.join(doc.false_positives) or 'none'}")


def run(args: argparse.Namespace) -> int:
    parts = args.only or list(PARTS)
    try:
        if "six" in parts:
            run_six(args.pages, args.changed)
        if "freshness" in parts:
            run_freshness(args.budget, args.cycles, args.fresh_pages)
        if "apfc" in parts:
            from focuscrawl.corpora import corpora_dir

            if args.only or args.corpora or corpora_dir() is not None:
                run_apfc(args.corpora, args.limit)
            else:
                print("\n### APFC: skipped (no corpora: set FOCUSCRAWL_CORPORA or --corpora)")
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    return 0
