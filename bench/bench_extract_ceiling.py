"""How far the partition's kind switch can take main-text F1 on wcxb-dev: measured ceilings.

The partition chooses one reading of a page by its kind (``blocks.fit``): the article's one
best container, a broad reading (every block no cue marks as boilerplate), a broad reading
with the item links (listings, collections). This bench scores, per page type and fold group:

- ``as built``: the kind the partition tells, as ``partition()`` returns the page;
- ``gold kind``: the same fits with the page's gold type as its kind (a perfect kind classifier);
- ``oracle``: per page, the best of the readings the fits can give (article, broad, broad with
  item links, all visible text): the ceiling of choosing among them, by any classifier.

A page whose best reading is below a target is a page no choice of reading reaches: the
blocks themselves (the walk, the cues) must change. Token F1 as ``bench_extract``; no timing.

    FOCUSCRAWL_CORPORA=../shared/corpora .venv/bin/python bench/bench_extract_ceiling.py
"""

from __future__ import annotations

import argparse
import copy
import importlib
import sys
from collections.abc import Callable

from focuseval import extraction as ev
from focuseval.corpora import corpora_dir

from focuscrawl.blocks import fit, rules
from focuscrawl.blocks.model import Page

partition_module = importlib.import_module("focuscrawl.blocks.partition")

FOLDS = 5
DEV_FOLDS = frozenset({0, 1, 2})  # as bench_extract: the rules' numbers were chosen on these


def _unfitted(case: ev.Case) -> Page:
    """The page before ``fit_to_kind`` re-marks its blocks (its kind already told)."""
    original = partition_module.fit_to_kind
    partition_module.fit_to_kind = lambda page, kind, confidence=1.0: "kind"
    try:
        return partition_module.partition(case.html, case.url)
    finally:
        partition_module.fit_to_kind = original


def _fitted(page: Page, kind: str, confidence: float = 1.0) -> str:
    copied = copy.deepcopy(page)
    fit.fit_to_kind(copied, kind, confidence)
    return copied.main_text


def _visible(page: Page) -> str:
    return "\n".join(b.text for b in page.blocks if b.text and b.weight > 0)


READINGS: dict[str, Callable[[Page], str]] = {
    "article": lambda p: _fitted(p, "article"),
    "broad": lambda p: _fitted(p, "forum"),
    "broad + item links": lambda p: _fitted(p, "collection"),
    "visible": _visible,
}


def run(limit: int) -> list[tuple[str, str, dict[str, float]]]:
    root = corpora_dir()
    if root is None:
        sys.exit("bench_extract_ceiling: no corpora (set FOCUSCRAWL_CORPORA)")
    rows = []
    for i, case in enumerate(ev.CORPORA[ev.WCXB](root)):
        if limit and i >= limit:
            break
        page = _unfitted(case)
        gold_kind = case.kind if case.kind in rules.BROAD_CONTENT_KINDS | {"article"} else "other"
        built = _fitted(page, page.kind, page.kind_confidence)
        if built != partition_module.partition(case.html, case.url).main_text:
            sys.exit(f"bench_extract_ceiling: page {case.name} is not what partition() gives")
        scores = {
            "as built": ev.token_f1(built, case.gold),
            "gold kind": ev.token_f1(_fitted(page, gold_kind), case.gold),
        }
        readings = {name: ev.token_f1(read(page), case.gold) for name, read in READINGS.items()}
        scores["oracle"] = max(readings.values())
        scores.update(readings)
        fold = "dev" if ev.domain_fold(case.url, FOLDS) in DEV_FOLDS else "held-out"
        rows.append((case.kind, fold, scores))
    return rows


def table(rows: list[tuple[str, str, dict[str, float]]]) -> str:
    columns = ["as built", "gold kind", "oracle", *READINGS]
    lines = [
        "| page type (pages) | " + " | ".join(f"{c} dev / held-out" for c in columns) + " |",
        "| --- |" + " --- |" * len(columns),
    ]
    for kind in [*sorted({k for k, _, _ in rows}), "ALL"]:
        picked = [r for r in rows if kind in ("ALL", r[0])]
        cells = []
        for column in columns:
            parts = []
            for group in ("dev", "held-out"):
                xs = [s[column] for _, g, s in picked if g == group]
                parts.append(f"{sum(xs) / len(xs):.3f}" if xs else "–")
            cells.append(" / ".join(parts))
        lines.append(f"| {kind} ({len(picked)}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="pages (0: all)")
    args = parser.parse_args()
    rows = run(args.limit)
    print(f"wcxb-dev: {len(rows)} pages; folds by domain, dev {sorted(DEV_FOLDS)} of {FOLDS}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
