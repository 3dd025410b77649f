"""Which stored pages a recrawl cycle revisits, within a budget: uniform, change-rate, cluster.

- ``uniform``: the pages visited longest ago first (round robin).
- ``change-rate``: each page's rate λ̂ from its visit history (Cho & Garcia-Molina, see
  :mod:`focuscrawl.change.estimate`); pages ordered by the freshness a visit now buys over the
  next revisit horizon H:  gain = P(changed since the last visit) · (1 − e^{−λH}) / (λH).
  The second factor is the share of the horizon the fresh copy stays fresh: a page that changes
  much faster than it can be revisited is worth little, as in Cho & Garcia-Molina's result that
  an optimal policy visits the fastest-changing pages less, not more.
- ``cluster`` (Tan et al., clustering-based incremental crawling): pages grouped by features that
  correlate with change (URL pattern and depth, size and link-count buckets, relevance, past
  change history); a cluster's rate is pooled over all its members' visits, so a page with little
  history borrows its cluster's. A cycle fetches a sample of each cluster first (the most
  promising clusters first) and the rest of a cluster only if enough of its sample changed
  (:class:`ClusterPlan`); :func:`due` gives a one-call approximation from the last cycle.

Plain functions over :class:`~focuscrawl.change.store.PageRecord`: no Scrapy, no store I/O.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from focuscrawl.change.estimate import (
    CHANGE_STATUSES,
    needs_probe,
    rate_from_history,
    rate_irregular,
    scheduling_rate,
)
from focuscrawl.change.record import PageRecord

POLICIES = ("uniform", "change-rate", "cluster")
_DIGITS = re.compile(r"\d+")


PROBE = 2.0  # above any freshness gain (at most 1): probes go first


def _probe_now(record: PageRecord, now: float, period: float) -> bool:
    """A page whose every visit saw a change, last visited one period ago: learn its rate."""
    return now - record.last_fetched <= 1.01 * period and needs_probe(record.history, period)


def freshness_gain(rate: float, age: float, horizon: float) -> float:
    """Expected freshness a visit now adds over ``horizon`` (Poisson rate, time since visit)."""
    if rate <= 0:
        return 0.0
    stale = -math.expm1(-rate * max(age, 0.0))
    x = rate * max(horizon, 1e-9)
    return stale * (-math.expm1(-x)) / x


def page_rate(record: PageRecord, prior: float) -> float:
    return scheduling_rate(record.history, prior)


def mean_rate(records: Sequence[PageRecord], default: float) -> float:
    rates = [r for r in (rate_from_history(rec.history) for rec in records) if r is not None]
    return sum(rates) / len(rates) if rates else default


def horizon_of(n_pages: int, budget: int, period: float) -> float:
    """The mean revisit interval a budget allows: every page once per n/budget periods."""
    return period * max(1.0, n_pages / max(1, budget))


# --- clusters ---------------------------------------------------------------------------------
def _bucket(value: float, edges: Sequence[float]) -> int:
    return sum(1 for e in edges if value >= e)


def cluster_key(record: PageRecord) -> tuple[object, ...]:
    """The features a cluster shares: host, URL pattern and depth, size/links/relevance buckets.
    The change history is the cluster's pooled rate (:func:`pooled_rate`), not part of the key."""
    parts = urlsplit(record.url)
    segs = [s for s in parts.path.split("/") if s]
    pattern = "/".join(_DIGITS.sub("#", s) for s in segs[:1]) + ("/*" if len(segs) > 1 else "")
    f = record.features
    return (
        parts.hostname or "",
        pattern,
        min(len(segs), 5),
        _bucket(float(f.get("size", 0)), (2_000, 10_000, 50_000, 200_000)),
        _bucket(float(f.get("links", 0)), (5, 20, 100)),
        _bucket(float(f.get("relevance", 0)), (0.25, 0.5)),
    )


def pooled_rate(members: Sequence[PageRecord]) -> float | None:
    """One rate from every member's visit intervals (the irregular-visit MLE)."""
    intervals: list[float] = []
    changed: list[bool] = []
    for rec in members:
        for a, b in zip(rec.history, rec.history[1:], strict=False):
            if b[0] > a[0]:
                intervals.append(b[0] - a[0])
                changed.append(b[1] in CHANGE_STATUSES)
    return rate_irregular(intervals, changed) if intervals else None


@dataclass
class Cluster:
    key: tuple[object, ...]
    rate: float  # pooled over the members' visits
    sample: list[str] = field(default_factory=list)
    rest: list[tuple[float, str]] = field(default_factory=list)  # (gain, url), best first
    sample_gains: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class ClusterPlan:
    """A two-phase cycle: fetch ``samples`` first, then :meth:`followup` with what they showed."""

    clusters: list[Cluster]  # most promising first
    budget: int
    threshold: float
    samples: list[str] = field(default_factory=list)

    def followup(self, changed: Iterable[str]) -> list[str]:
        """The rest of every cluster whose sample changed at least ``threshold`` (best gain
        first), then, with budget left, the other pages by gain (unsampled clusters included)."""
        changed = set(changed)
        taken = set(self.samples)
        left = self.budget - len(self.samples)
        hot: list[tuple[float, str]] = []
        cold: list[tuple[float, str]] = []
        for c in self.clusters:
            sampled = [u for u in c.sample if u in taken]
            share = sum(u in changed for u in sampled) / len(sampled) if sampled else 0.0
            rest = c.rest + [(g, u) for g, u in c.sample_gains if u not in taken]
            (hot if share >= self.threshold else cold).extend(rest)
        hot.sort(key=lambda g: -g[0])
        cold.sort(key=lambda g: -g[0])
        return [u for _, u in hot + cold][: max(0, left)]


def plan_clusters(
    records: Sequence[PageRecord],
    now: float,
    budget: int,
    *,
    period: float = 86400.0,
    sample: float = 0.2,
    threshold: float = 0.3,
) -> ClusterPlan:
    """Group, rate each group from all its members' visits, pick the samples."""
    prior = mean_rate(records, 1.0 / period)
    groups: dict[tuple[object, ...], list[PageRecord]] = defaultdict(list)
    for rec in records:
        groups[cluster_key(rec)].append(rec)
    horizon = horizon_of(len(records), budget, period)
    clusters: list[tuple[float, Cluster]] = []
    all_gains: list[float] = []
    for key, members in groups.items():
        rate = pooled_rate(members)
        rate = prior if rate is None else rate + 0.5 / max(period, _observed(members))
        gains = sorted(
            (
                (
                    PROBE
                    if _probe_now(r, now, period)
                    else freshness_gain(rate, now - r.last_fetched, horizon),
                    r.url,
                )
                for r in members
            ),
            key=lambda g: (-g[0], g[1]),
        )
        n = max(1, math.ceil(sample * len(gains)))
        c = Cluster(key, rate, [u for _, u in gains[:n]], gains[n:], gains[:n])
        clusters.append((gains[0][0], c))
        all_gains.extend(g for g, _ in gains)
    clusters.sort(key=lambda gc: -gc[0])
    ordered = [c for _, c in clusters]
    # a cluster whose best page would not make the budget's cut is not worth sampling: its
    # sample would only confirm a rate too high (or too low) to pay for a visit
    all_gains.sort(reverse=True)
    cut = all_gains[min(budget, len(all_gains)) - 1] if all_gains else 0.0
    samples: list[str] = []
    for top, c in clusters:
        if len(samples) >= budget:
            break
        if top >= cut:
            samples.extend(c.sample[: budget - len(samples)])
    return ClusterPlan(ordered, budget, threshold, samples)


def _observed(members: Sequence[PageRecord]) -> float:
    return sum(r.history[-1][0] - r.history[0][0] for r in members if r.history)


# --- one call: the due list -------------------------------------------------------------------
def due(
    records: Iterable[PageRecord],
    now: float,
    budget: int = 0,
    policy: str = "change-rate",
    *,
    period: float = 86400.0,
    sample: float = 0.2,
    threshold: float = 0.3,
) -> list[str]:
    """The URLs to revisit now, best first; ``budget`` 0 means every page (ordered).

    ``period`` is the time between recrawl cycles (seconds, like the visit times). For the
    ``cluster`` policy this is one call: each cluster's sample, then the rest of the clusters
    whose members' latest visits changed at least ``threshold`` of the time.
    """
    recs = [r for r in records if r.history]
    budget = budget if budget > 0 else len(recs)
    if policy not in POLICIES:
        raise ValueError(f"unknown recrawl policy {policy!r}; expected one of {POLICIES}")
    if policy == "uniform":
        return [r.url for r in sorted(recs, key=lambda r: (r.last_fetched, r.url))][:budget]
    if policy == "change-rate":
        prior = mean_rate(recs, 1.0 / period)
        horizon = horizon_of(len(recs), budget, period)
        scored = [
            (
                PROBE
                if _probe_now(r, now, period)
                else freshness_gain(page_rate(r, prior), now - r.last_fetched, horizon),
                r.url,
            )
            for r in recs
        ]
        return [u for _, u in sorted(scored, key=lambda s: (-s[0], s[1]))][:budget]
    plan = plan_clusters(recs, now, budget, period=period, sample=sample, threshold=threshold)
    by_url = {r.url: r for r in recs}
    recently_changed = {u for u, r in by_url.items() if r.status in CHANGE_STATUSES}
    return (plan.samples + plan.followup(recently_changed))[:budget]
