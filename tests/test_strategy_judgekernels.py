"""The link judge's compiled array steps (``_cjudge``) give the NumPy twins' values bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from focuscrawl.frontier.state import RequestState
from focuscrawl.strategy import judgekernels
from focuscrawl.strategy.compiled import agrees, cjudge
from focuscrawl.strategy.linkjudge import LinkJudge

needs_compiled = pytest.mark.skipif(cjudge() is None, reason="_cjudge not built")


def test_the_numpy_twins_are_the_expressions_the_judge_computed() -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal(50) * np.exp(rng.uniform(-8, 8, 50))
    g2 = rng.uniform(0.01, 3.0, 50)
    ids = rng.integers(0, 50, (6, 32)).astype(np.int32)
    rows = np.array([3, 0, 3, 5])
    out = np.zeros(4)
    judgekernels.row_sums(w, ids, rows, out)
    assert out.tobytes() == w[ids[rows]].sum(axis=1).tobytes()
    # the update as the judge wrote it before (every id gathered, np.unique)
    used, inverse = np.unique(ids, return_inverse=True)
    g = rng.standard_normal(6)
    gu = np.bincount(inverse.ravel(), weights=np.repeat(g, 32), minlength=len(used))
    want_w, want_g2 = w.copy(), g2.copy()
    keep = used != 0
    u, gu_, wu = used[keep], gu[keep], w[used][keep]
    gu_ = gu_ + 1e-3 * wu
    want_g2[u] += gu_ * gu_
    want_w[u] = wu - 0.05 * gu_ / np.sqrt(want_g2[u])
    judgekernels.adagrad_update(w, g2, used.astype(np.intp), inverse.ravel(), g, 32, 1e-3, 0.05)
    assert w.tobytes() == want_w.tobytes() and g2.tobytes() == want_g2.tobytes()
    assert w[0] == want_w[0]  # (id 0 is padding: never moved)


@needs_compiled
@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_steps_give_the_numpy_values(seed: int) -> None:
    assert agrees(cjudge(), judgekernels, seed=seed, rounds=20)  # type: ignore[arg-type]


@needs_compiled
def test_the_agreement_check_sees_a_different_summation_order() -> None:
    class Sequential:  # sums left to right: not NumPy's pairwise order
        @staticmethod
        def row_sums(w, ids, rows, out):  # type: ignore[no-untyped-def]
            for i, row in enumerate(rows):
                total = 0.0
                for j in ids[row]:
                    total += float(w[j])
                out[i] = total

        adagrad_update = staticmethod(judgekernels.adagrad_update)

    assert not agrees(Sequential, judgekernels)  # type: ignore[arg-type]


@needs_compiled
def test_a_compiled_and_a_numpy_judge_learn_the_same_weights() -> None:
    rng = np.random.default_rng(3)
    judges = [LinkJudge(compiled=True, replay=512), LinkJudge(compiled=False, replay=512)]
    urls = [f"http://h{i % 7}/p{i}" for i in range(600)]
    for judge in judges:
        rng = np.random.default_rng(3)
        for i, url in enumerate(urls):
            ids = rng.integers(1, 1 << 18, int(rng.integers(5, 40))).tolist()
            static = (1.0, float(rng.uniform()), float(i % 3 == 0), float(rng.uniform()), 0.0, 0.0)
            slots = (judge.slot(url), judge.slot(url[:9], "b"), judge.slot(url[:9]))
            judge.add(url, ids, static, slots, RequestState(1), i % 2 == 0)
            if i >= 5:  # judge an earlier link: one step, and a refit every 25 pages
                judge.learn(urls[i - 5], rng.uniform() < 0.3, judge.slot(urls[i - 5][:9]))
                if judge.due:
                    list(judge.rescore())
    a, b = judges
    assert a.w.tobytes() == b.w.tobytes() and a.wn.tobytes() == b.wn.tobytes()
    assert a._g2.tobytes() == b._g2.tobytes()
    assert a.last.tobytes() == b.last.tobytes()
    assert np.count_nonzero(a.w) > 1000 and a._uniq  # it learnt, and refitted
