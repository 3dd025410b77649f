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
