"""The online link judge's two array steps in NumPy: the reference, and the pure-Python twin of
the compiled ``_cjudge`` (:mod:`focuscrawl.strategy.compiled`), which gives the same values bit
for bit. No Scrapy import; numpy only.
"""

from __future__ import annotations

import numpy as np


def row_sums(w: np.ndarray, ids: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = np.add.reduce(w[ids[rows[i]]])``: each row's hashed weights summed (the part
    of the logistic sum that the hashed features give)."""
    out[: len(rows)] = np.add.reduce(w[ids[rows]], axis=1)


def adagrad_update(
    w: np.ndarray,
    g2: np.ndarray,
    used: np.ndarray,
    inverse: np.ndarray,
    g: np.ndarray,
    width: int,
    l2: float,
    rate: float,
) -> None:
    """One AdaGrad step's update of the distinct ids ``used`` (sorted; ``used[inverse]`` are
    the batch's ids, ``width`` per example, ``g`` the examples' gradients): each id's gradient
    summed over its positions, plus ``l2 × w``; the square sums ``g2`` and the weights ``w``
    updated in place. The padding id 0 learns nothing."""
    gu = np.bincount(inverse, weights=g.repeat(width), minlength=len(used))
    wu = w[used]
    if len(used) and used[0] == 0:
        used, gu, wu = used[1:], gu[1:], wu[1:]
    # (``used`` is distinct: each square sum and weight read once and written once)
    gu += l2 * wu
    s = g2[used] + gu * gu
    g2[used] = s
    w[used] = wu - rate * gu / np.sqrt(s)


def adagrad_row(
    w: np.ndarray, g2: np.ndarray, ids: np.ndarray, g: float, l2: float, rate: float
) -> None:
    """:func:`adagrad_update` of one example (its ``ids``, its gradient ``g``)."""
    used, inverse = np.unique(ids, return_inverse=True)
    adagrad_update(w, g2, used.astype(np.intp), inverse.ravel(), np.array([g]), len(ids), l2, rate)


def numeric_update(wn: np.ndarray, gn2: np.ndarray, gx: np.ndarray, l2: float, rate: float) -> None:
    """The dense weights' AdaGrad update from ``gx`` (the examples' gradients times their
    features, summed): ``gn = gx + l2 × wn``, ``gn2 += gn²``, ``wn -= rate × gn / sqrt(gn2)``."""
    gn = gx + l2 * wn
    gn2 += gn * gn
    wn -= rate * gn / np.sqrt(gn2)


#: the columns of the numeric features (:data:`~.linkfeatures.NUMERIC`): static 0..4, the
#: in-links (relevant, irrelevant) 5 and 6, the yields (block, arm, host) 7..9, static 5
#: (noise) 10
N_COLUMNS = 11


def numbers(
    static: np.ndarray,
    slots: np.ndarray,
    flat_n: np.ndarray,
    flat_rel: np.ndarray,
    arms: int,
    prior: float,
    a: float,
    out: np.ndarray,
) -> None:
    """The numeric features of rows into ``out`` but the in-links' (columns 5 and 6: the
    caller's): ``static`` (bias, parent relevance, parent relevant, shark, words, noise;
    float32) and the smoothed yields ``(rel + a·prior) / (n + a) − prior`` of each row's three
    slots (``slots``: block, arm, host; slot ``k`` of kind ``j`` at ``j × arms + k`` of the
    flat float32 counts ``flat_n`` and ``flat_rel``)."""
    out[:, :5] = static[:, :5]
    out[:, 10] = static[:, 5]
    flat = slots + np.arange(3, dtype=np.intp) * arms
    n = flat_n.take(flat)
    rel = flat_rel.take(flat)
    out[:, 7:10] = (rel + a * prior) / (n + a) - prior
