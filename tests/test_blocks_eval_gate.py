"""Evaluation gate: main-text token F1 on the shared corpora must not fall below its pinned floor.

``tests/eval_baseline.json`` holds, per corpus, the F1 floor and the SHA-256 digest of the corpus
it was measured on. A changed corpus fails with a message (re-pin); a lower F1 fails.
Re-pin after an improvement with ``FOCUSCRAWL_UPDATE_EVAL_BASELINE=1``; pinning a LOWER floor
also needs ``FOCUSCRAWL_ALLOW_LOWER_FLOOR=1`` (say why in the commit).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from focuseval import extraction as ev

from focuscrawl.blocks import partition

BASELINE = Path(__file__).with_name("eval_baseline.json")


def _measure(root: Path, corpus: str) -> tuple[float, dict[str, float]]:
    """Macro F1 over the corpus and, where the corpus has page types (wcxb-dev), per type."""
    cases = list(ev.CORPORA[corpus](root))
    f1, scores = ev.macro_f1(cases, lambda c: partition(c.html, c.url).main_text)
    by_kind: dict[str, list[float]] = {}
    for case, score in zip(cases, scores, strict=True):
        if case.kind:
            by_kind.setdefault(case.kind, []).append(score)
    return f1, {kind: sum(xs) / len(xs) for kind, xs in sorted(by_kind.items())}


def _floor(f1: float) -> float:
    return math.floor(f1 * 1000) / 1000


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", sorted(ev.CORPORA))
def test_main_text_f1_floor(corpora: Path, corpus: str) -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    pinned = baseline["corpora"][corpus]
    digest = ev.corpus_digest(corpora, corpus)
    f1, per_kind = _measure(corpora, corpus)
    if os.environ.get("FOCUSCRAWL_UPDATE_EVAL_BASELINE") == "1":
        pinned_kinds = pinned.get("types", {})
        lower = [
            name
            for name, value, old in [(corpus, f1, pinned["f1_floor"])]
            + [(k, v, pinned_kinds.get(k, {}).get("f1_floor", 0.0)) for k, v in per_kind.items()]
            if _floor(value) < old
        ]
        if lower and os.environ.get("FOCUSCRAWL_ALLOW_LOWER_FLOOR") != "1":
            pytest.fail(f"{corpus}: F1 below the floor for {', '.join(lower)}; "
                        "set FOCUSCRAWL_ALLOW_LOWER_FLOOR=1 to pin it lower")  # fmt: skip
        entry: dict[str, object] = {"f1_floor": _floor(f1), "digest": digest,
                                    "measured": round(f1, 4)}  # fmt: skip
        if per_kind:
            entry["types"] = {
                k: {"f1_floor": _floor(v), "measured": round(v, 4)} for k, v in per_kind.items()
            }
        baseline["corpora"][corpus] = entry
        BASELINE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert digest == pinned["digest"], (
        f"{corpus} changed since the floor was pinned: re-measure and re-pin "
        "(FOCUSCRAWL_UPDATE_EVAL_BASELINE=1)"
    )
    assert f1 >= pinned["f1_floor"], f"{corpus}: F1 {f1:.4f} < floor {pinned['f1_floor']}"
    for kind, pin in pinned.get("types", {}).items():
        assert per_kind.get(kind, 0.0) >= pin["f1_floor"], (
            f"{corpus} {kind}: F1 {per_kind.get(kind, 0.0):.4f} < floor {pin['f1_floor']}"
        )


def test_token_f1_metric() -> None:
    assert ev.token_f1("the cat sat", "The cat sat") == 1.0
    assert ev.token_f1("", "gold") == 0.0
    assert ev.token_f1("a a b", "a b b") == pytest.approx(2 / 3)  # multiset intersection


def test_benchmark_metric_scores_empty_gold() -> None:
    assert ev.wcxb_f1("The cat, sat!", "the CAT sat") == 1.0
    assert ev.wcxb_f1("", "gold") == 0.0  # an empty output scores 0
    assert ev.wcxb_f1(" ... ", "") == 1.0  # empty gold: 1 only for an empty output
    assert ev.wcxb_f1("anything", "") == 0.0
    assert ev.wcxb_f1("a a b", "a b b") == pytest.approx(2 / 3)
