"""Particle swarm optimisation (maximising), standard and a BWPSO-like variant (no Scrapy).

Standard PSO (global best, constant inertia, Clerc's constants) moves each particle towards its
own best and the swarm's best position. The ``"bwpso"`` variant also pushes particles away from
the swarm's worst position seen in the current iteration ("best-worst" PSO, in the spirit of the
seed dissertation's BWPSO), meant to spend fewer iterations exploring regions known to be bad. Measured here it does the
opposite (10 seeds, 10-D sphere: 124 vs 23.5 iterations to the fitness both reach; Rastrigin:
84 vs 36), so ``"standard"`` is the default; see ``docs/relevance.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

INERTIA = 0.7298
C_PERSONAL = 1.49618
C_GLOBAL = 1.49618
C_WORST = 0.5  # bwpso: strength of the push away from the worst position
V_MAX = 0.25  # velocity clamp, as a share of each dimension's range


@dataclass(slots=True)
class PSOResult:
    best: np.ndarray
    fitness: float
    history: list[float] = field(default_factory=list)  # swarm best after each iteration

    def iterations_to(self, target: float) -> int | None:
        """First iteration (1-based) whose swarm best reached ``target``; None if never."""
        for i, f in enumerate(self.history, 1):
            if f >= target - 1e-12:
                return i
        return None


def maximise(
    fitness: Callable[[np.ndarray], float],
    dim: int,
    *,
    lower: float | np.ndarray = 0.0,
    upper: float | np.ndarray = 1.0,
    particles: int = 20,
    iterations: int = 60,
    variant: str = "standard",
    seed: int = 0,
) -> PSOResult:
    """Maximise ``fitness`` over the box ``[lower, upper]^dim``."""
    if variant not in ("standard", "bwpso"):
        raise ValueError(f"unknown PSO variant {variant!r} (standard, bwpso)")
    rng = np.random.default_rng(seed)
    lo = np.broadcast_to(np.asarray(lower, dtype=float), (dim,))
    hi = np.broadcast_to(np.asarray(upper, dtype=float), (dim,))
    vmax = V_MAX * (hi - lo)
    x = rng.uniform(lo, hi, size=(particles, dim))
    v = rng.uniform(-vmax, vmax, size=(particles, dim))
    f = np.array([fitness(p) for p in x])
    pbest, pbest_f = x.copy(), f.copy()
    g = int(np.argmax(f))
    gbest, gbest_f = x[g].copy(), float(f[g])
    history: list[float] = []
    for _ in range(iterations):
        r1, r2 = rng.random((2, particles, dim))
        v = INERTIA * v + C_PERSONAL * r1 * (pbest - x) + C_GLOBAL * r2 * (gbest - x)
        if variant == "bwpso":
            worst = x[int(np.argmin(f))]
            v += C_WORST * rng.random((particles, dim)) * (x - worst)
        v = np.clip(v, -vmax, vmax)
        x = np.clip(x + v, lo, hi)
        f = np.array([fitness(p) for p in x])
        better = f > pbest_f
        pbest[better], pbest_f[better] = x[better], f[better]
        g = int(np.argmax(pbest_f))
        if pbest_f[g] > gbest_f:
            gbest, gbest_f = pbest[g].copy(), float(pbest_f[g])
        history.append(gbest_f)
    return PSOResult(gbest, gbest_f, history)
