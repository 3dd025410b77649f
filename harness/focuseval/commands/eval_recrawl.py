"""``focuscrawl eval-recrawl``: the recrawl experiments of issue 6 (``focuscrawl eval --recrawl``).

- ``six``: the six-cycle table on the evolving synthetic web (10..50 changed pages) for
  refetch-all, last-modified, size, hash, document index and simhash — simulated over the Site
  objects (the HTTP exchange with the test server's conditional-GET rules, no sockets);
- ``freshness``: uniform vs change-rate vs cluster sampling at equal budget, with the ceiling of
  an oracle that knows every rate;
- ``apfc``: precision/recall of ``significant`` on the 421 real versions of the APFC page;
- ``versions``: on the website-versions corpus (HTML pairs), the share of pairs flagged among those
  whose visible text differs and among those whose visible text is equal, tuned vs held-out sites;
- ``markdown``: the same on the corpus's Markdown regions rendered to HTML (more held-out sites);
- ``noise``: the share of versions flagged against themselves with noise injected;
- ``speed``: ms per compare on ~200 KB pages (the change work on a parsed page, and in full).

Every technique (last-modified, size, hash, document index, simhash, the ``simhash`` package,
content-diff: ours) runs on the same fingerprints of the same versions.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from focuscrawl.cli import CommandError

if TYPE_CHECKING:
    from focuseval.recrawl import Score

NAME = "eval-recrawl"
EXAMPLE = "focuscrawl eval-recrawl"
HELP = "recrawl experiments: six-cycle table, freshness at equal budget, real-data precision/recall"
PARTS = ("six", "freshness", "apfc", "versions", "markdown", "noise", "speed")
CORPUS_PARTS = ("apfc", "versions", "markdown", "noise", "speed")


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
    parser.add_argument(
        "--paths", type=int, default=None, help="versions/noise: first N watched pages only"
    )


def run_six(pages: int, changed: list[int]) -> None:
    from focuseval.evolving import synthetic_evolving
    from focuseval.recrawl import SIX_TECHNIQUES, run_six_cycles, six_cycle_table

    for n in changed:
        web = synthetic_evolving(n_pages=pages, changed=n)
        rows = {t: run_six_cycles(web, t) for t in SIX_TECHNIQUES}
        print(
            f"\n### {n} changed pages of {len(web.pages)} (cells: body KB / pages fetched / "
            "items sent to the index)\n"
        )
        print(six_cycle_table(rows))
        sim = {r.cycle: r for r in rows["simhash"]}
        for tech in ("doc-index", "content-diff"):
            doc = {r.cycle: r for r in rows[tech]}
            print(
                f"\n{tech} caught {doc['significant'].victims_indexed}/{n} significant changes, "
                f"{doc['delete'].victims_indexed}/{n} deletions, sent "
                f"{doc['insignificant'].indexed} items for {n} insignificant changes"
            )
        print(f"simhash caught {sim['significant'].victims_indexed}/{n} significant changes")


def run_freshness(budget: float, cycles: int, pages: int) -> None:
    from focuseval.recrawl import SCENARIOS, optimal_freshness, simulate_freshness

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


def _corpora(corpora: Path | None) -> Path:
    from focuseval.corpora import corpora_dir

    root = corpora or corpora_dir()
    if root is None:
        raise CommandError("the change corpora need FOCUSCRAWL_CORPORA or --corpora")
    return root


def _score_row(name: str, s: Score) -> str:
    return f"| {name} | {s.tp} | {s.fp} | {s.fn} | {s.tn} | {s.precision:.3f} | {s.recall:.3f} |"


def run_apfc(corpora: Path | None, limit: int | None) -> None:
    from focuseval.change_versions import score_labelled
    from focuseval.recrawl import APFC_URL, apfc_versions

    t = time.perf_counter()
    scores = score_labelled(apfc_versions(_corpora(corpora), limit=limit), APFC_URL)
    print(f"\n### APFC: `significant` vs the labels ({time.perf_counter() - t:.0f} s)\n")
    print("| technique | TP | FP | FN | TN | precision | recall |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, s in scores.items():
        print(_score_row(name, s))
    ours = scores["content-diff"]
    print(f"\ncontent-diff false positives (versions): {', '.join(ours.false_positives) or 'none'}")


def _rate(flagged: int, n: int) -> str:
    return f"{flagged / n:.3f} ({flagged}/{n})" if n else "–"


def run_versions(corpora: Path | None, paths: int | None, markdown: bool = False) -> None:
    from focuseval.change_versions import (
        TUNED_SITES,
        markdown_to_html,
        score_website_versions,
        website_versions,
    )

    t = time.perf_counter()
    versions = website_versions(_corpora(corpora), (".md",) if markdown else (".html",), paths)
    groups = score_website_versions(versions, render=markdown_to_html if markdown else None)
    what = "Markdown regions rendered to HTML" if markdown else "HTML pairs"
    print(
        f"\n### Website versions ({what}): flagged when the visible text differs / is equal "
        f"({time.perf_counter() - t:.0f} s; tuned sites: {', '.join(sorted(TUNED_SITES))})\n"
    )
    names = list(next(iter(groups.values())))
    order = [g for g in ("tuned", "held-out") if g in groups]
    head = " | ".join(f"{g}: text differs | {g}: text equal" for g in order)
    print(f"| technique | {head} | all: text differs | all: text equal |")
    print("|---" * (2 * len(order) + 3) + "|")
    for name in names:
        cells = []
        tp = pos = fp = neg = 0
        for g in order:
            s = groups[g][name]
            cells += [_rate(s.tp, s.tp + s.fn), _rate(s.fp, s.fp + s.tn)]
            tp, pos, fp, neg = tp + s.tp, pos + s.tp + s.fn, fp + s.fp, neg + s.fp + s.tn
        print(f"| {name} | {' | '.join(cells)} | {_rate(tp, pos)} | {_rate(fp, neg)} |")
    for g in order:
        ours = groups[g]["content-diff"]
        print(f"\ncontent-diff, {g}, missed ({len(ours.false_negatives)}):")
        for name in ours.false_negatives:
            print(f"  {name}")
        for name in ours.false_positives:
            print(f"  flagged with equal text: {name}")


def run_noise(corpora: Path | None, paths: int | None) -> None:
    from focuseval.change_versions import score_injected_noise, website_versions
    from focuseval.recrawl import APFC_URL, apfc_versions

    root = _corpora(corpora)
    bodies = [
        (f"https://{v.site}.example/{v.path}", v.body) for v in website_versions(root, paths=paths)
    ]
    bodies += [(APFC_URL, v.body) for v in apfc_versions(root)]
    t = time.perf_counter()
    scores = score_injected_noise(bodies)
    print(
        f"\n### Injected noise: {len(bodies)} versions against themselves with random ids, "
        f"nonces, styles, comments and whitespace ({time.perf_counter() - t:.0f} s)\n"
    )
    print("| technique | flagged |")
    print("| --- | --- |")
    for name, s in scores.items():
        print(f"| {name} | {_rate(s.fp, s.fp + s.tn)} |")
    for name in scores["content-diff"].false_positives:
        print(f"  content-diff flagged: {name}")


def run_speed(corpora: Path | None) -> None:
    from focuseval.change_speed import speed_table

    print(speed_table(_corpora(corpora)))


def run(args: argparse.Namespace) -> int:
    parts = args.only or list(PARTS)
    try:
        if "six" in parts:
            run_six(args.pages, args.changed)
        if "freshness" in parts:
            run_freshness(args.budget, args.cycles, args.fresh_pages)
        from focuseval.corpora import corpora_dir

        have_corpora = bool(args.only or args.corpora or corpora_dir() is not None)
        for part in (p for p in CORPUS_PARTS if p in parts):
            if not have_corpora:
                print(f"\n### {part}: skipped (no corpora: set FOCUSCRAWL_CORPORA or --corpora)")
            elif part == "apfc":
                run_apfc(args.corpora, args.limit)
            elif part in ("versions", "markdown"):
                run_versions(args.corpora, args.paths, markdown=part == "markdown")
            elif part == "noise":
                run_noise(args.corpora, args.paths)
            else:
                run_speed(args.corpora)
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    return 0
