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

from focuscrawl.blocks import evaluate as ev
from focuscrawl.blocks import partition

BASELINE = Path(__file__).with_name("eval_baseline.json")


def _measure(root: Path, corpus: str) -> float:
    cases = list(ev.CORPORA[corpus](root))
    f1, _ = ev.macro_f1(cases, lambda c: partition(c.html, c.url).main_text)
    return f1


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", sorted(ev.CORPORA))
def test_main_text_f1_floor(corpora: Path, corpus: str) -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    pinned = baseline["corpora"][corpus]
    digest = ev.corpus_digest(corpora, corpus)
    f1 = _measure(corpora, corpus)
    if os.environ.get("FOCUSCRAWL_UPDATE_EVAL_BASELINE") == "1":
        floor = math.floor(f1 * 1000) / 1000
        if floor < pinned["f1_floor"] and os.environ.get("FOCUSCRAWL_ALLOW_LOWER_FLOOR") != "1":
            pytest.fail(f"{corpus}: F1 {f1:.4f} is below the floor {pinned['f1_floor']}; "
                        "set FOCUSCRAWL_ALLOW_LOWER_FLOOR=1 to pin it lower")  # fmt: skip
        baseline["corpora"][corpus] = {
            "f1_floor": floor,
            "digest": digest,
            "measured": round(f1, 4),
        }
        BASELINE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert digest == pinned["digest"], (
        f"{corpus} changed since the floor was pinned: re-measure and re-pin "
        "(FOCUSCRAWL_UPDATE_EVAL_BASELINE=1)"
    )
    assert f1 >= pinned["f1_floor"], f"{corpus}: F1 {f1:.4f} < floor {pinned['f1_floor']}"


def test_token_f1_metric() -> None:
    assert ev.token_f1("the cat sat", "The cat sat") == 1.0
    assert ev.token_f1("", "gold") == 0.0
    assert ev.token_f1("a a b", "a b b") == pytest.approx(2 / 3)  # multiset intersection
