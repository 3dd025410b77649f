"""Change-rate estimators, recrawl policies and the freshness simulation (small)."""

from __future__ import annotations

import math
import random

import pytest
from focuseval.recrawl import (
    FRESHNESS_CLASSES,
    PageClass,
    optimal_freshness,
    simulate_freshness,
)

from focuscrawl.change.estimate import (
    needs_probe,
    rate_from_history,
    rate_irregular,
    rate_regular,
    scheduling_rate,
)
from focuscrawl.change.policy import cluster_key, due, freshness_gain, plan_clusters
from focuscrawl.change.store import PageRecord


def poisson_visits(rate: float, times: list[float], rng: random.Random) -> list[bool]:
    """Whether at least one change happened in each interval between ``times``."""
    return [
        rng.random() < -math.expm1(-rate * (b - a)) for a, b in zip(times, times[1:], strict=False)
    ]


def test_regular_estimator_is_nearly_unbiased_where_naive_is_not() -> None:
    rng = random.Random(1)
    rate, n = 0.8, 200  # changes per unit; a visit every unit
    est, naive = [], []
    for _ in range(40):
        x = sum(poisson_visits(rate, [float(i) for i in range(n + 1)], rng))
        est.append(rate_regular(n, x, 1.0))
        naive.append(x / n)
    assert abs(sum(est) / len(est) - rate) < 0.05
    assert sum(naive) / len(naive) < rate - 0.2  # the naive X/T underestimates


def test_regular_estimator_edges() -> None:
    assert rate_regular(0, 0, 1.0) == 0.0
    assert rate_regular(10, 0, 1.0) == 0.0
    assert math.isfinite(rate_regular(10, 10, 1.0)) and rate_regular(10, 10, 1.0) > 2.0
    with pytest.raises(ValueError):
        rate_regular(3, 4, 1.0)


def test_irregular_estimator_recovers_the_rate() -> None:
    rng = random.Random(2)
    rate = 0.3
    times = [0.0]
    for _ in range(600):
        times.append(times[-1] + rng.choice([0.5, 1.0, 2.0, 5.0]))
    changed = poisson_visits(rate, times, rng)
    intervals = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert rate_irregular(intervals, changed) == pytest.approx(rate, rel=0.15)
    assert rate_irregular(intervals, [False] * len(intervals)) == 0.0
    # every interval changed: no finite MLE; the shortest interval bounds the rate best
    assert rate_irregular([10.0, 1.0], [True, True]) == pytest.approx(rate_regular(2, 2, 1.0))
    with pytest.raises(ValueError):
        rate_irregular([1.0], [True, False])


def test_rate_from_history_picks_the_estimator() -> None:
    regular = [(float(t), "significant" if t % 2 else "unchanged") for t in range(11)]
    assert rate_from_history(regular) == pytest.approx(rate_regular(10, 5, 1.0))
    assert rate_from_history([(0.0, "new")]) is None
    irregular = [(0.0, "new"), (1.0, "unchanged"), (5.0, "significant"), (6.0, "insignificant")]
    assert rate_from_history(irregular) == pytest.approx(
        rate_irregular([1, 4, 1], [False, True, False])
    )
    # no change seen yet: the scheduling rate keeps a bonus, so the page is revisited
    assert scheduling_rate([(0.0, "new"), (4.0, "unchanged")], prior=1.0) == pytest.approx(0.125)


def test_probe_when_every_long_interval_changed() -> None:
    assert needs_probe([(0.0, "new"), (10.0, "significant")], period=1.0)
    assert not needs_probe([(0.0, "new"), (10.0, "unchanged")], period=1.0)
    assert not needs_probe([(0.0, "new"), (10.0, "significant"), (11.0, "significant")], 1.0)
    assert not needs_probe([(0.0, "new")], period=1.0)
    just_seen = PageRecord("p", None, [(0.0, "new"), (10.0, "significant")])
    other = PageRecord("q", None, [(0.0, "new"), (1.0, "unchanged")])
    assert due([other, just_seen], 11.0, 1, "change-rate", period=1.0) == ["p"]


def record(url: str, history: list[tuple[float, str]], **features: float) -> PageRecord:
    return PageRecord(url, None, history, dict(features))


def test_uniform_is_oldest_first_and_budgeted() -> None:
    recs = [record(f"http://h/{i}", [(float(10 - i), "new")]) for i in range(5)]
    assert due(recs, 20.0, 3, "uniform") == ["http://h/4", "http://h/3", "http://h/2"]
    assert len(due(recs, 20.0, 0, "uniform")) == 5
    with pytest.raises(ValueError, match="unknown recrawl policy"):
        due(recs, 20.0, 1, "random")


def test_change_rate_prefers_pages_that_change_but_not_hopeless_ones() -> None:
    static = [(float(t), "new" if t == 0 else "unchanged") for t in range(0, 40, 4)]
    moderate = [
        (float(t), "new" if t == 0 else ("significant" if t % 8 == 0 else "unchanged"))
        for t in range(0, 40, 4)
    ]
    frantic = [(float(t), "new" if t == 0 else "significant") for t in range(0, 40, 4)]
    recs = [record("s", static), record("m", moderate), record("f", frantic)]
    # revisited every period, even the frantic page stays fresh for a good part of it
    assert due(recs, 40.0, 0, "change-rate", period=1.0)[:2] == ["f", "m"]
    # a small budget among many pages (a long revisit horizon): frantic is not worth a visit
    fillers = [record(f"x{i}", static) for i in range(30)]
    assert due(recs + fillers, 40.0, 1, "change-rate", period=1.0) == ["m"]
    assert due(recs + fillers, 40.0, 0, "change-rate", period=1.0).index("s") > 0
    assert freshness_gain(0.0, 5.0, 1.0) == 0.0
    assert freshness_gain(0.2, 5.0, 1.0) > freshness_gain(0.2, 1.0, 1.0)


def test_cluster_plan_samples_every_cluster_and_follows_up_hot_ones() -> None:
    recs = [record(f"http://h/news/{i}.html", [(0.0, "new")], size=5000) for i in range(10)]
    recs += [record(f"http://h/docs/{i}.html", [(0.0, "new")], size=80000) for i in range(10)]
    assert cluster_key(recs[0]) == cluster_key(recs[1]) != cluster_key(recs[10])
    plan = plan_clusters(recs, 1.0, 12, period=1.0, sample=0.2, threshold=0.5)
    assert len(plan.samples) == 4  # two per cluster
    news_sample = [u for u in plan.samples if "/news/" in u]
    rest = plan.followup(news_sample)  # every news sample changed, no docs sample did
    assert len(rest) == 8
    assert all("/news/" in u for u in rest)
    assert len(plan.followup(set())) == 8  # leftover budget still spent, on the best gains


def test_freshness_small_simulation_and_ceiling() -> None:
    classes = (PageClass("fast", 0.5, 0.5), PageClass("slow", 0.5, 0.02))
    kw = {"classes": classes, "n_pages": 60, "cycles": 30, "warmup": 5}
    uniform = simulate_freshness("uniform", **kw)
    cluster = simulate_freshness("cluster", **kw)
    assert 0.0 < uniform < 1.0 and 0.0 < cluster < 1.0
    assert cluster > uniform  # the slow section is left alone, the fast one revisited
    assert optimal_freshness(FRESHNESS_CLASSES, 0.1) > 0.6
