"""The link judge's compiled array steps (``_cjudge.pyx``), when built, current and equal to
the NumPy ones here; else their pure-Python twins (:mod:`focuscrawl.strategy.judgekernels`).

``pip install -e .`` builds ``focuscrawl.strategy._cjudge`` when a compiler and Cython are
there, with :data:`CJUDGE_ABI` compiled in (``setup.py`` reads it from here: its one
declaration). A module built from an older ``_cjudge.pyx`` is ignored with a warning. Because
the crawl must not depend on whether it is built, the compiled steps are also checked once
against the NumPy twins on a few random arrays (NumPy's summation order is NumPy's own: a
version that sums otherwise would disagree): on any difference they are not used, with a
warning. ``FOCUSCRAWL_JUDGE_PURE_PYTHON=1`` in the environment takes the twins too.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType

import numpy as np

from focuscrawl.strategy import judgekernels

# What the Python side expects of _cjudge: bump it on a change of the compiled functions'
# signatures or results, and rebuild (setup.py compiles it in).
CJUDGE_ABI = 5

_loaded: list[ModuleType | None] = []


def cjudge() -> ModuleType | None:
    """The compiled module, or None when missing, out of date, unequal (warned once) or off."""
    if not _loaded:
        module: ModuleType | None
        try:
            from focuscrawl.strategy import _cjudge as module  # type: ignore[attr-defined,no-redef,unused-ignore]
        except ImportError:
            module = None
        if module is not None and getattr(module, "ABI", None) != CJUDGE_ABI:
            warnings.warn(
                "focuscrawl.strategy._cjudge is out of date (pip install -e . rebuilds it): "
                "the link judge's steps run in NumPy",
                RuntimeWarning,
                stacklevel=2,
            )
            module = None
        if module is not None and not agrees(module, judgekernels):
            warnings.warn(
                "focuscrawl.strategy._cjudge does not give this NumPy's sums: "
                "the link judge's steps run in NumPy",
                RuntimeWarning,
                stacklevel=2,
            )
            module = None
        if os.environ.get("FOCUSCRAWL_JUDGE_PURE_PYTHON", "") not in ("", "0"):
            module = None
        _loaded.append(module)
    return _loaded[0]


def kernels(compiled: bool | None = None) -> ModuleType:
    """The judge's steps: compiled when built and equal (``compiled=None``), the NumPy twins
    (``False``), or compiled or an error (``True``)."""
    fast = cjudge() if compiled is not False else None
    if compiled and fast is None:
        raise RuntimeError("focuscrawl.strategy._cjudge is not built (pip install -e .)")
    return fast if fast is not None else judgekernels


def agrees(a: ModuleType, b: ModuleType, seed: int = 27, rounds: int = 8) -> bool:
    """Whether ``a`` and ``b`` give the same values, bit for bit, on random arrays of the
    judge's shapes (rows of 1 to 200 ids, weights over 20 orders of magnitude, repeated ids,
    the padding id)."""
    rng = np.random.default_rng(seed)
    for width in (1, 5, 8, 11, 32, 33, 200):
        for _ in range(rounds):
            size = 64
            w = rng.standard_normal(size) * np.exp(rng.uniform(-10.0, 10.0, size))
            g2 = rng.uniform(1e-2, 10.0, size)
            ids = rng.integers(0, size, (7, width)).astype(np.int32)
            rows = rng.integers(0, 7, 9).astype(np.intp)
            sums = [np.zeros(len(rows)), np.zeros(len(rows))]
            a.row_sums(w, ids, rows, sums[0])
            b.row_sums(w, ids, rows, sums[1])
            if sums[0].tobytes() != sums[1].tobytes():
                return False
            used = np.unique(ids)
            inverse = used.searchsorted(ids.ravel())
            g = rng.standard_normal(len(ids))
            state = [(w.copy(), g2.copy()), (w.copy(), g2.copy())]
            for module, (w_, g2_) in zip((a, b), state, strict=True):
                module.adagrad_update(w_, g2_, used.astype(np.intp), inverse, g, width, 1e-3, 0.05)
            if any(x.tobytes() != y.tobytes() for x, y in zip(state[0], state[1], strict=True)):
                return False
            # one example at a time, and the dense weights
            wn = rng.standard_normal(11)
            gx = rng.standard_normal(11) * np.exp(rng.uniform(-5.0, 5.0, 11))
            state = [(w.copy(), g2.copy(), wn.copy(), g2[:11].copy()) for _ in range(2)]
            for module, (w_, g2_, wn_, gn2_) in zip((a, b), state, strict=True):
                for row in range(len(ids)):
                    module.adagrad_row(w_, g2_, ids[row], float(g[row]), 1e-3, 0.05)
                module.numeric_update(wn_, gn2_, gx, 1e-3, 0.05)
            if any(x.tobytes() != y.tobytes() for x, y in zip(state[0], state[1], strict=True)):
                return False
    return _numbers_agree(a, b, rng, rounds)


def _numbers_agree(a: ModuleType, b: ModuleType, rng: np.random.Generator, rounds: int) -> bool:
    arms = 16
    for m in (1, 3, 45):
        for _ in range(rounds):
            static = rng.uniform(0.0, 5.0, (m, 6)).astype(np.float32)
            slots = rng.integers(0, arms, (m, 3)).astype(np.int32)
            flat_n = rng.integers(0, 50, 3 * arms).astype(np.float32)
            flat_rel = np.minimum(flat_n, rng.integers(0, 50, 3 * arms)).astype(np.float32)
            prior, smoothing = float(rng.uniform(0.01, 0.99)), float(rng.uniform(0.5, 4.0))
            args = (static, slots, flat_n, flat_rel, arms, prior, smoothing)
            outs = [np.zeros((m, 11)), np.zeros((m, 11))]
            a.numbers(*args, outs[0])
            b.numbers(*args, outs[1])
            if outs[0].tobytes() != outs[1].tobytes():
                return False
    return True
