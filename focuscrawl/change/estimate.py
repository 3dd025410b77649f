"""Change-rate estimators of Cho & Garcia-Molina ("Estimating frequency of change", 2003).

A page is assumed to change as a Poisson process of rate λ (changes per second here; any unit
works as long as intervals use it). A visit only tells whether the page changed at least once
since the previous visit, so the naive rate X/T underestimates λ when pages change faster than
they are visited.

- Regular visits (interval I, n intervals, X of them with a change): the improved, nearly
  unbiased estimator  λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / I.  It stays finite when X = n.
- Irregular visits (intervals t_i, the ones with a change C, without U): the maximum likelihood
  estimate, the root of  Σ_{i∈C} t_i / (e^{λ t_i} − 1) = Σ_{j∈U} t_j ; 0 when nothing changed,
  and, when every interval changed (no finite root), the regular estimator over the SHORTEST
  interval: the data only say "at least this fast", and the shortest interval says it best
  (over the mean interval a page changing 4 times per cycle, seen every 10 cycles, would look
  like one changing 0.1 times per cycle).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

CHANGE_STATUSES = frozenset({"significant", "deleted", "new"})


def rate_regular(n: int, changes: int, interval: float) -> float:
    """Improved estimator for ``n`` regular visits of ``interval``, ``changes`` of which changed."""
    if n <= 0 or interval <= 0:
        return 0.0
    if not 0 <= changes <= n:
        raise ValueError(f"changes must be in [0, {n}], got {changes}")
    return -math.log((n - changes + 0.5) / (n + 0.5)) / interval


def _score(lam: float, changed: Sequence[float], unchanged_total: float) -> float:
    # derivative of the log-likelihood, divided through: decreasing in lam
    return sum(t / math.expm1(lam * t) for t in changed) - unchanged_total


def rate_irregular(intervals: Sequence[float], changed: Sequence[bool]) -> float:
    """Maximum likelihood rate from irregular ``intervals`` and whether each saw a change."""
    if len(intervals) != len(changed):
        raise ValueError("intervals and changed must have the same length")
    pairs = [(t, c) for t, c in zip(intervals, changed, strict=True) if t > 0]
    if not pairs:
        return 0.0
    ch = [t for t, c in pairs if c]
    unchanged_total = sum(t for t, c in pairs if not c)
    if not ch:
        return 0.0
    if unchanged_total <= 0:  # every interval changed: no finite MLE
        return rate_regular(len(ch), len(ch), min(ch))
    lo, hi = 1e-12, 1.0 / min(ch)
    while _score(hi, ch, unchanged_total) > 0:  # widen until the root is bracketed
        hi *= 2.0
        if hi > 1e12:
            return hi
    for _ in range(100):  # bisection on a log scale
        mid = math.sqrt(lo * hi)
        if _score(mid, ch, unchanged_total) > 0:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1.0 + 1e-6:
            break
    return math.sqrt(lo * hi)


def rate_from_history(
    visits: Sequence[tuple[float, str]],
    regular_tolerance: float = 0.05,
    change_statuses: frozenset[str] = CHANGE_STATUSES,
) -> float | None:
    """λ̂ from visits ``(fetched_at, status)`` in time order; ``None`` with fewer than 2 visits.

    The first visit only starts the clock. Intervals within ``regular_tolerance`` of their mean
    use the regular estimator, others the irregular one.
    """
    if len(visits) < 2:
        return None
    intervals = [b[0] - a[0] for a, b in zip(visits, visits[1:], strict=False)]
    changed = [b[1] in change_statuses for b in visits[1:]]
    mean = sum(intervals) / len(intervals)
    if mean <= 0:
        return None
    if all(abs(t - mean) <= regular_tolerance * mean for t in intervals):
        return rate_regular(len(intervals), sum(changed), mean)
    return rate_irregular(intervals, changed)


def needs_probe(visits: Sequence[tuple[float, str]], period: float) -> bool:
    """Whether a page should be revisited one period after its last visit, to learn its rate.

    When every interval so far showed a change and none was short, the page may change far
    faster than it was visited (the estimators cannot tell 0.3 from 4 changes per period from
    10-period intervals); one short interval settles it.
    """
    if len(visits) < 2:
        return False
    changed = [b[1] in CHANGE_STATUSES for b in visits[1:]]
    shortest = min(b[0] - a[0] for a, b in zip(visits, visits[1:], strict=False))
    return all(changed) and shortest > 1.5 * period


def scheduling_rate(visits: Sequence[tuple[float, str]], prior: float) -> float:
    """The rate to schedule by: λ̂ plus half a change over the observed time.

    λ̂ is 0 for a page whose few visits saw no change, and a scheduler that trusts it never
    returns to learn otherwise. The bonus (the 0.5 of the improved estimator, spread over the
    time observed) shrinks as history accumulates; with no history at all, ``prior``.
    """
    rate = rate_from_history(visits)
    if rate is None:
        return prior
    observed = visits[-1][0] - visits[0][0]
    return rate + (0.5 / observed if observed > 0 else prior)
