"""The link judge's compiled array steps (``_cjudge``) give the NumPy twins' values bit for bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
        adagrad_row = staticmethod(judgekernels.adagrad_row)
        numeric_update = staticmethod(judgekernels.numeric_update)
        numbers = staticmethod(judgekernels.numbers)

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


_CONTEXT_PIECES = [
    *["The", "the", "Eagle,", "eagle", "(eagles)", "1066", "x", "ab", "I", "", " ", "\n", "\t"],
    *["\u00a0", "\u2003", "\x1c", "\u2019s", "\u201cQuote\u201d", "caf\u00c9", "\u0130stanbul"],
    *["\u00df", "\u4e2d\u6587", "--", "'", "9a", "\u00e9t\u00e9", "\U0001f600", "\u2014dash\u2014"],
    *["A.B.", "of", "was", "\u212aelvin", "\u03a3\u039f\u03a3", "ZZ", "Zz", "@x", "[y]"],
]
_context_text = st.lists(
    st.one_of(st.sampled_from(_CONTEXT_PIECES), st.text(max_size=6)), max_size=60
).map(" ".join)


def _context_args(limit: int, max_cache: int = 1000) -> tuple[Any, ...]:
    from focuscrawl.strategy.linkfeatures import _SALT
    from focuscrawl.text import STOPWORDS, WORD_EDGES

    return (WORD_EDGES, STOPWORDS, _SALT["c"], (1 << 18) - 1, limit, max_cache)


def _python_ids(texts: list[str], limit: int, max_cache: int = 1000) -> list[list[int]]:
    from focuscrawl.strategy.linkfeatures import context_word_ids_python

    memo: dict[str, int] = {}
    raw: dict[str, tuple[str, int]] = {}
    args = _context_args(limit, max_cache)
    return [context_word_ids_python(t, memo, *args, raw_ids=raw) for t in texts]


def _compiled_ids(texts: list[str], limit: int, max_cache: int = 1000) -> list[list[int]]:
    table = cjudge().ContextIds(*_context_args(limit, max_cache))  # type: ignore[union-attr]
    return [table.ids(t) for t in texts]


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(_context_text, min_size=1, max_size=4), st.integers(0, 14), st.integers(1, 40))
def test_compiled_context_ids_are_the_python_ones(
    texts: list[str], limit: int, max_cache: int
) -> None:
    # one table for several contexts (words seen before), emptied past a small max_cache
    assert _compiled_ids(texts, limit, max_cache) == _python_ids(texts, limit, max_cache)


@needs_compiled
def test_compiled_context_ids_on_hand_made_contexts() -> None:
    from focuscrawl.strategy.linkfeatures import first_distinct_tokens

    context = "The Bald Eagle, an eagle of North America; the eagle (eagles) nests by rivers, " * 3
    (ids,) = _compiled_ids([context], 12)
    assert [ids] == _python_ids([context], 12)
    assert len(ids) == len(first_distinct_tokens(context, 12)) == 7
    assert _compiled_ids(["a an the 1066 x \u2014 -- of"], 12) == [[]]
    unicode_spaces, plain = _compiled_ids(
        ["\u00a0caf\u00e9\u2003na\u00efve\x1cwide", "café naïve wide"], 12
    )
    assert unicode_spaces == plain and len(plain) == 3  # str.split's white space
    # the same word in upper and lower case, ASCII and not: one id, as lower() makes it
    assert _compiled_ids(["EAGLE eagle Eagle", "\u0130STANBUL \u0130stanbul"], 12) == _python_ids(
        ["EAGLE eagle Eagle", "\u0130STANBUL \u0130stanbul"], 12
    )
    many = " ".join(f"word{i} w{i}x" for i in range(5000))  # the table grows, then is emptied
    table = cjudge().ContextIds(*_context_args(50, 3000))  # type: ignore[union-attr]
    assert [table.ids(many), table.ids(many)] == _python_ids([many, many], 50, 3000)
    assert len(table) <= 3000 + 5000 * 2


@needs_compiled
@pytest.mark.corpus
def test_compiled_context_ids_on_the_corpus_links(corpora: Path) -> None:
    """Every link context of 25 pages of each extraction corpus (real sites' pages, as the
    partition gives them), compiled and pure Python."""
    from itertools import islice

    from focuseval import extraction as ev

    from focuscrawl.blocks.partition import partition

    contexts = [
        link.context
        for corpus in sorted(ev.CORPORA)
        for case in islice(ev.CORPORA[corpus](corpora), 25)
        for link in partition(case.html, case.url).links
    ]
    assert sum(bool(c) for c in contexts) > 200
    assert _compiled_ids(contexts, 12) == _python_ids(contexts, 12)


@needs_compiled
def test_the_compiled_numbers_are_numpys() -> None:
    rng = np.random.default_rng(11)
    arms = 8
    for m in (1, 2, 40):
        static = rng.uniform(0.0, 3.0, (m, 6)).astype(np.float32)
        slots = rng.integers(0, arms, (m, 3)).astype(np.int32)
        flat_n = rng.integers(0, 30, 3 * arms).astype(np.float32)
        flat_rel = np.minimum(flat_n, rng.integers(0, 30, 3 * arms)).astype(np.float32)
        args = (static, slots, flat_n, flat_rel, arms, 0.37, 2.0)
        want, got = np.full((m, 11), 7.0), np.full((m, 11), 7.0)
        judgekernels.numbers(*args, want)
        cjudge().numbers(*args, got)  # type: ignore[union-attr]
        assert got.tobytes() == want.tobytes()
        assert (want[:, 5:7] == 7.0).all()  # the in-links' columns are the caller's
        assert (want[:, 7:10] >= -0.37).all() and (want[:, :5] == static[:, :5]).all()


def test_a_compiled_and_a_numpy_judge_score_alike_with_one_row_and_many_in_links() -> None:
    judges = [LinkJudge(compiled=None, min_examples=1), LinkJudge(compiled=False, min_examples=1)]
    for judge in judges:
        slots = (judge.slot("p"), judge.slot("h", "b"), judge.slot("h"))
        row = judge.add("http://h/x", [5, 9], (1.0, 0.5, 1.0, 0.4, 0.0, 0.0), slots, None, True)
        judge.inlinks[row] = (5000.0, 238.0)  # (a page's one row: log1p of a 1-row array)
        judge.learn("http://h/y", True, judge.slot("h"))
        judge.learn("http://h/z", False, judge.slot("h"))
    a, b = (judge.score(np.array([0])) for judge in judges)
    assert a.tobytes() == b.tobytes() and a[0] > 0.4
