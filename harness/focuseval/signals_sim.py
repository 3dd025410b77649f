"""Recrawl with sitemap/feed signals vs today's policy, simulated at equal fetch budget.

Hosts of five kinds share one budget per cycle: ``exact`` (every ``lastmod`` is the page's last
change), ``stale`` (the sitemap is regenerated only every ``stale_every`` cycles), ``lying``
(every ``lastmod`` is now), ``feed`` (a feed lists the host's ``feed_size`` latest changes with
their dates; other pages have no signal) and ``none``. Pages change as Poisson processes of
rates drawn per page from :data:`~focuseval.freshness.FRESHNESS_CLASSES`; every policy sees the
same changes and learns only what its own fetches show. ``today`` is the base policy alone
(:func:`focuscrawl.change.policy.due`); ``signals`` is
:func:`focuscrawl.change.signals.plan_with_signals` over the same base policy, its per-host trust
built from the checks of its own fetches.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from focuscrawl.change.policy import due
from focuscrawl.change.record import PageRecord
from focuscrawl.change.signals import HostTrust, check, host_of, plan_with_signals
from focuseval.freshness import FRESHNESS_CLASSES

HOST_KINDS = ("exact", "stale", "lying", "feed", "none")


@dataclass
class KindResult:
    freshness: float = 0.0
    fetches: int = 0
    changes_found: int = 0

    @property
    def fetches_per_change(self) -> float:
        return self.fetches / self.changes_found if self.changes_found else math.inf


@dataclass
class SimResult:
    policy: str
    kinds: dict[str, KindResult] = field(default_factory=dict)
    trust: dict[str, HostTrust] = field(default_factory=dict)


def _host(kind: str) -> str:
    return f"{kind}.test"


def simulate_signals(
    policy: str,
    *,
    pages_per_host: int = 200,
    budget: float = 0.1,
    cycles: int = 40,
    warmup: int = 10,
    seed: int = 13,
    base: str = "cluster",
    stale_every: int = 8,
    feed_size: int = 20,
) -> SimResult:
    """Time-averaged freshness per host kind over cycles ``warmup..cycles``, and fetches per
    detected change, for ``policy`` = ``today`` | ``signals`` | ``oracle`` (the ceiling: it
    knows every change, past and future, and spends the same budget on the stale pages whose
    next change is furthest off)."""
    rng = random.Random(seed)
    urls: list[str] = []
    kinds: list[str] = []
    events: list[list[float]] = []
    weights = [c.share for c in FRESHNESS_CLASSES]
    for kind in HOST_KINDS:
        for k in range(pages_per_host):
            c = rng.choices(FRESHNESS_CLASSES, weights)[0]
            urls.append(f"http://{_host(kind)}/{c.section}/{k}.html")
            kinds.append(kind)
            t, times = rng.expovariate(c.rate), []
            while t < cycles + 1.0:
                times.append(t)
                t += rng.expovariate(c.rate)
            events.append(times)
    index = {u: i for i, u in enumerate(urls)}
    records = [PageRecord(u, None, [(0.0, "new")], {"size": 20_000}) for u in urls]
    fetched_at = [0.0] * len(urls)
    per_cycle = max(1, round(budget * len(urls)))
    trust: dict[str, HostTrust] = {}
    result = SimResult(policy, {k: KindResult() for k in HOST_KINDS}, trust)
    fresh: dict[str, list[float]] = defaultdict(list)

    def last_change(i: int, t: float) -> float:
        k = bisect.bisect_right(events[i], t)
        return events[i][k - 1] if k else 0.0

    def next_change(i: int, after: float) -> float:
        k = bisect.bisect_right(events[i], after)
        return events[i][k] if k < len(events[i]) else math.inf

    def signals_at(t: float) -> dict[str, float]:
        out: dict[str, float] = {}
        feeds: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for i, u in enumerate(urls):
            kind = kinds[i]
            if kind == "exact":
                out[u] = last_change(i, t)
            elif kind == "stale":
                out[u] = last_change(i, math.floor(t / stale_every) * stale_every)
            elif kind == "lying":
                out[u] = t
            elif kind == "feed":
                changed = last_change(i, t)
                if changed > 0:
                    feeds[kind].append((changed, u))
        for entries in feeds.values():
            for stamp, u in sorted(entries, reverse=True)[:feed_size]:
                out[u] = stamp
        return out

    for cycle in range(1, cycles + 1):
        t = float(cycle)
        if policy == "signals":
            lastmods = signals_at(t)
            chosen = plan_with_signals(records, t, per_cycle, base, lastmods, trust, period=1.0)
            todo = chosen.urls
        elif policy == "oracle":
            lastmods = {}
            todo = _clairvoyant(urls, fetched_at, t, per_cycle, next_change)
        else:
            lastmods = {}
            todo = due(records, t, per_cycle, base, period=1.0)
        for u in todo:
            i = index[u]
            changed = next_change(i, fetched_at[i]) <= t
            verdict = check(lastmods.get(u), fetched_at[i], changed)
            if verdict is not None:
                host = host_of(u)
                trust.setdefault(host, HostTrust(host)).add(verdict)
            fetched_at[i] = t
            records[i].history.append((t, "significant" if changed else "unchanged"))
            del records[i].history[:-64]
            if cycle > warmup:
                kr = result.kinds[kinds[i]]
                kr.fetches += 1
                kr.changes_found += changed
        if cycle > warmup:
            per_kind: Counter[str] = Counter()
            for i in range(len(urls)):
                per_kind[kinds[i]] += min(max(next_change(i, fetched_at[i]) - t, 0.0), 1.0)
            for kind in HOST_KINDS:
                fresh[kind].append(per_kind[kind] / pages_per_host)
    for kind in HOST_KINDS:
        result.kinds[kind].freshness = sum(fresh[kind]) / len(fresh[kind])
    return result


def _clairvoyant(
    urls: list[str],
    fetched_at: list[float],
    t: float,
    budget: int,
    next_change: Callable[[int, float], float],
) -> list[str]:
    """The fetches that buy the most freshness over the next cycle, knowing every change: the
    pages stale now (changed since their last fetch), the ones whose next change is furthest
    off first (a page that changes again at once gains little from a visit)."""
    stale = [
        (min(next_change(i, t) - t, 1.0), urls[i])
        for i in range(len(urls))
        if next_change(i, fetched_at[i]) <= t
    ]
    stale.sort(key=lambda p: (-p[0], p[1]))
    return [u for _, u in stale[:budget]]


def signals_table(today: SimResult, signals: SimResult, oracle: SimResult | None = None) -> str:
    """Freshness and fetches per detected change by host kind, side by side; with ``oracle``,
    the freshness a policy knowing every change reaches on the same budget (the ceiling) and
    the signals' share of it."""
    rows = [
        "| hosts | freshness today | with signals | ratio | fetches/change today | with signals | ratio | trust |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    if oracle is not None:
        rows[0] += " ceiling (knows every change) | ceiling / today | signals / ceiling |"
        rows[1] += " --- | --- | --- |"
    for kind in HOST_KINDS:
        a, b = today.kinds[kind], signals.kinds[kind]
        ht = signals.trust.get(_host(kind))
        tr = (
            f"{ht.state()} ({ht.agreed} agreed, {ht.missed} missed, {ht.false_moves} false)"
            if ht
            else "no signals"
        )
        fr = b.freshness / a.freshness if a.freshness else math.inf
        fpc = b.fetches_per_change / a.fetches_per_change if a.changes_found else math.inf
        rows.append(
            f"| {kind} | {a.freshness:.3f} | {b.freshness:.3f} | {fr:.2f}x | "
            f"{a.fetches_per_change:.2f} | {b.fetches_per_change:.2f} | {fpc:.2f}x | {tr} |"
        )
        if oracle is not None:
            c = oracle.kinds[kind].freshness
            rows[-1] += f" {c:.3f} | {c / a.freshness:.2f}x | {b.freshness / c:.2f} |"
    return "\n".join(rows)


def averaged(results: list[SimResult]) -> SimResult:
    """The mean freshness and the summed fetches and changes of runs on several seeds (the
    trust shown is the last run's)."""
    out = SimResult(results[0].policy, {k: KindResult() for k in HOST_KINDS}, results[-1].trust)
    for kind in HOST_KINDS:
        runs = [r.kinds[kind] for r in results]
        out.kinds[kind] = KindResult(
            sum(k.freshness for k in runs) / len(runs),
            sum(k.fetches for k in runs),
            sum(k.changes_found for k in runs),
        )
    return out
