"""Freshness at equal budget: uniform vs change-rate vs cluster revisiting, simulated.

Pages of a few sections change as Poisson processes of stable rates; a recrawl revisits a budget
of pages per cycle, chosen by a policy of :mod:`focuscrawl.change.policy` from the visit
histories it built itself. :func:`optimal_freshness` is the ceiling: Cho & Garcia-Molina's
optimal revisit frequencies when every rate is known.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from focuscrawl.change.policy import due, plan_clusters
from focuscrawl.change.store import PageRecord


@dataclass(frozen=True, slots=True)
class PageClass:
    """Pages of one section of the evolving web, changing as a Poisson process."""

    section: str  # URL section, e.g. "news": the URL pattern correlates with change
    share: float  # fraction of the pages
    rate: float  # changes per cycle
    size: int = 20_000  # body bytes (a cluster feature)


#: A web where most budget is wasted by uniform revisiting: a few fast sections, more slow ones.
FRESHNESS_CLASSES = (
    PageClass("live", 0.10, 3.0, 8_000),
    PageClass("news", 0.15, 0.5, 15_000),
    PageClass("blog", 0.20, 0.12, 25_000),
    PageClass("docs", 0.25, 0.02, 40_000),
    PageClass("archive", 0.30, 0.002, 60_000),
)


#: 70% of the pages change several times per cycle (feeds, tickers, front pages): the budget
#: uniform revisiting spends on them is wasted, and the gap a rate-aware policy can close grows.
FEED_HEAVY_CLASSES = (
    PageClass("feed", 0.70, 4.0, 6_000),
    PageClass("blog", 0.30, 0.15, 25_000),
)

SCENARIOS = {"mixed web": FRESHNESS_CLASSES, "feed-heavy web": FEED_HEAVY_CLASSES}


def _pages(classes: Sequence[PageClass], n_pages: int) -> list[tuple[str, PageClass]]:
    pages: list[tuple[str, PageClass]] = []
    for c in classes:
        for k in range(round(c.share * n_pages)):
            pages.append((f"http://127.0.0.2/{c.section}/{k}.html", c))
    return pages


def _change_times(rng: random.Random, rate: float, until: float) -> list[float]:
    times: list[float] = []
    t = rng.expovariate(rate) if rate > 0 else until + 1
    while t < until:
        times.append(t)
        t += rng.expovariate(rate)
    return times


def simulate_freshness(
    policy: str,
    *,
    classes: Sequence[PageClass] = FRESHNESS_CLASSES,
    n_pages: int = 1000,
    budget: float = 0.1,
    cycles: int = 120,
    warmup: int = 20,
    seed: int = 11,
    sample: float = 0.2,
    threshold: float = 0.3,
    max_history: int = 64,
) -> float:
    """Time-averaged freshness (share of pages whose stored copy is current) over cycles
    ``warmup..cycles`` when ``budget`` × pages are revisited at the start of each cycle.

    Changes are Poisson events in continuous time; every policy sees the same events (drawn
    from ``seed``) and learns only what its own visits show (changed since my last visit or
    not), as a crawler does. A page fetched at t stays fresh until its next change.
    """
    rng = random.Random(seed)
    pages = _pages(classes, n_pages)
    index = {url: i for i, (url, _) in enumerate(pages)}
    per_cycle = max(1, round(budget * len(pages)))
    events = [_change_times(rng, c.rate, cycles + 1.0) for _, c in pages]
    fetched_at = [0.0] * len(pages)  # time of the stored copy
    records = [
        PageRecord(url, None, [(0.0, "new")], {"size": c.size, "relevance": 0.5})
        for url, c in pages
    ]

    def next_change(i: int, after: float) -> float:
        ev = events[i]
        k = bisect.bisect_right(ev, after)
        return ev[k] if k < len(ev) else math.inf

    def fetch(urls: Iterable[str], t: float) -> set[str]:
        seen = set()
        for url in urls:
            i = index[url]
            changed = next_change(i, fetched_at[i]) <= t
            fetched_at[i] = t
            rec = records[i]
            rec.history.append((t, "significant" if changed else "unchanged"))
            del rec.history[:-max_history]
            if changed:
                seen.add(url)
        return seen

    fresh: list[float] = []
    for cycle in range(1, cycles + 1):
        t = float(cycle)
        if policy == "cluster":
            plan = plan_clusters(
                records, t, per_cycle, period=1.0, sample=sample, threshold=threshold
            )
            changed = fetch(plan.samples, t)
            fetch(plan.followup(changed), t)
        else:  # "cluster-one-call": due(..., "cluster"), what the spider's recrawl mode uses
            name = "cluster" if policy == "cluster-one-call" else policy
            fetch(due(records, t, per_cycle, name, period=1.0), t)
        if cycle > warmup:  # fresh time within [t, t + 1) of each page
            total = 0.0
            for i in range(len(pages)):
                nxt = next_change(i, fetched_at[i])
                total += min(max(nxt - t, 0.0), 1.0)
            fresh.append(total / len(pages))
    return sum(fresh) / len(fresh)


def optimal_freshness(classes: Sequence[PageClass], budget: float) -> float:
    """The best time-averaged freshness ANY policy can reach when it knows every rate
    (Cho & Garcia-Molina's optimal revisit frequencies, found by a greedy marginal allocation
    of the visit budget): the ceiling for the policies above."""
    steps = 4000
    freq = [0.0] * len(classes)  # visits per cycle per page, by class

    def fresh(c: PageClass, f: float) -> float:
        if f <= 0:
            return 0.0
        x = c.rate / f
        return -math.expm1(-x) / x

    unit = budget / steps
    for _ in range(steps):
        best, pick = -1.0, 0
        for i, c in enumerate(classes):  # budget unit spent on class i: share × Δf per page
            df = unit / c.share
            gain = c.share * (fresh(c, freq[i] + df) - fresh(c, freq[i]))
            if gain > best:
                best, pick = gain, i
        freq[pick] += unit / classes[pick].share
    return sum(c.share * fresh(c, f) for c, f in zip(classes, freq, strict=True))
