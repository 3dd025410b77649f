"""Sitemap ``lastmod`` and feed dates as change signals, trusted per host by what fetches prove.

A signal says when a page last changed. Each fetch of a page with a signal checks it
(:func:`check`): the page changed and its ``lastmod`` moved past the previous fetch, or neither —
the signal agreed; the page changed while ``lastmod`` stayed (``missed``: a stale sitemap); or
``lastmod`` moved and the page did not change (``false_move``: a sitemap whose every ``lastmod``
is "now"). A host's evidence (:class:`HostTrust`) decides how far a recrawl listens:

- ``probation`` (too few checks yet): a moved ``lastmod`` makes a page due at once, at most
  ``probe`` such pages per host a cycle; nothing is skipped.
- ``trusted`` (``min_checks`` checks, at most ``max_error`` of them wrong): a moved ``lastmod``
  makes a page due at once; an older or equal one lets the recrawl skip it — but for an audit of
  ``audit`` of the skipped pages (oldest visit first), so that a host that starts lying is caught.
- ``distrusted`` (wrong more than ``max_error``): its signals are ignored, its pages fall back to
  the change-rate estimate; a lying sitemap costs the probe fetches that proved it wrong.

:func:`plan_with_signals` makes a cycle's due list from the signals and the base policy of
:mod:`focuscrawl.change.policy`. Plain functions: no Scrapy, no store I/O.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from focuscrawl.change.estimate import CHANGE_STATUSES
from focuscrawl.change.policy import due, freshness_gain, horizon_of
from focuscrawl.change.record import PageRecord

TRUST_STATES = ("probation", "trusted", "distrusted")
VERDICTS = ("agreed", "missed", "false_move")


@dataclass(frozen=True, slots=True)
class TrustRules:
    min_checks: int = 6  # checks before a host's signals are trusted (or not)
    max_error: float = 0.2  # share of wrong checks a trusted host may show
    probe: int = 4  # signalled pages per probation host a cycle
    audit: float = 0.02  # share of a trusted host's skipped pages fetched anyway (at least 1)


DEFAULT_RULES = TrustRules()


@dataclass(slots=True)
class HostTrust:
    """The evidence on one host's signals: how many fetches agreed, how many proved it wrong."""

    host: str
    agreed: int = 0
    missed: int = 0  # the page changed, its lastmod did not move
    false_moves: int = 0  # the lastmod moved, the page did not change

    @property
    def checks(self) -> int:
        return self.agreed + self.missed + self.false_moves

    @property
    def error_rate(self) -> float:
        return (self.missed + self.false_moves) / self.checks if self.checks else 0.0

    def state(self, rules: TrustRules = DEFAULT_RULES) -> str:
        wrong = self.missed + self.false_moves
        if self.checks and self.error_rate > rules.max_error and wrong >= 2:
            return "distrusted"
        if self.checks >= rules.min_checks:
            return "trusted"
        return "probation"

    def add(self, verdict: str, n: int = 1) -> None:
        if verdict == "agreed":
            self.agreed += n
        elif verdict == "missed":
            self.missed += n
        elif verdict == "false_move":
            self.false_moves += n
        else:
            raise ValueError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def check(lastmod: float | None, previous_fetch: float, changed: bool) -> str | None:
    """What one fetch proves about a signal: ``agreed``, ``missed`` or ``false_move``; ``None``
    when there is nothing to check (no lastmod, or no earlier fetch)."""
    if lastmod is None or previous_fetch <= 0:
        return None
    moved = lastmod > previous_fetch
    if moved == changed:
        return "agreed"
    return "missed" if changed else "false_move"


@dataclass
class SignalPlan:
    """A cycle's due list and why: the signalled pages first, then the base policy's."""

    urls: list[str]
    signalled: int = 0  # due at once: a lastmod newer than the stored version
    skipped: int = 0  # not fetched: a trusted host's lastmod is older or equal
    audited: int = 0  # fetched although skipped, to keep checking a trusted host
    states: dict[str, str] = field(default_factory=dict)  # host → trust state


def plan_with_signals(
    records: Iterable[PageRecord],
    now: float,
    budget: int,
    policy: str,
    lastmods: Mapping[str, float],
    trust: Mapping[str, HostTrust],
    rules: TrustRules = DEFAULT_RULES,
    **kw: float,
) -> SignalPlan:
    """The URLs to revisit now, at most ``budget`` (0: every page).

    A host whose signals are trusted gets the share of the budget its page count gives it and
    spends it on its signalled pages (best freshness gain first) and an audit of its skipped
    ones; a probation host's first ``probe`` signalled pages go first. The hosts without usable
    signals (none, distrusted, probation) share the rest, what the trusted hosts did not need
    included, as today's ``policy`` (:func:`~focuscrawl.change.policy.due`) orders their
    pages; budget still left goes to the trusted hosts' other signalled pages."""
    recs = [r for r in records if r.history]
    budget = budget if budget > 0 else len(recs)
    states: dict[str, str] = {}
    signalled: dict[str, list[PageRecord]] = defaultdict(list)
    skipped: dict[str, list[PageRecord]] = defaultdict(list)
    for rec in recs:
        host = host_of(rec.url)
        if host not in states:
            states[host] = trust.get(host, HostTrust(host)).state(rules)
        stamp = lastmods.get(rec.url)
        if stamp is None or states[host] == "distrusted":
            continue
        if stamp > rec.last_fetched:
            signalled[host].append(rec)
        elif states[host] == "trusted":
            skipped[host].append(rec)
    gain = _signal_gain(recs, now, budget, kw)
    chosen: list[str] = []
    taken: set[str] = set()

    def take(url: str) -> bool:
        if url in taken or len(chosen) >= budget:
            return False
        taken.add(url)
        chosen.append(url)
        return True

    pages_of: dict[str, int] = defaultdict(int)
    for rec in recs:
        pages_of[host_of(rec.url)] += 1
    n_signalled = n_audit = 0
    spare: list[tuple[float, str]] = []
    trusted_pages: set[str] = set()
    for host, state in states.items():
        pages = sorted(signalled.get(host, ()), key=lambda r: (-gain(r), r.url))
        if state == "probation":
            n_signalled += sum(take(r.url) for r in pages[: rules.probe])
            continue
        if state != "trusted":
            continue
        # a trusted host gets its share of the budget by the count of pages its signals speak
        # for (a feed names a few; the others are left to the base policy below, with every
        # other host's), not what the base policy would give it: its history (fetched only
        # when signalled) is not today's
        spoken = len(pages) + len(skipped.get(host, ()))
        share = math.floor(budget * spoken / len(recs))
        unchanged = sorted(skipped.get(host, ()), key=lambda r: (r.last_fetched, r.url))
        audit = unchanged[: max(1, math.ceil(rules.audit * len(unchanged)))] if unchanged else []
        room = max(0, share - len(audit))
        n_signalled += sum(take(r.url) for r in pages[:room])
        n_audit += sum(take(r.url) for r in audit[:share])
        spare.extend((gain(r), r.url) for r in pages[room:])
        trusted_pages.update(r.url for r in unchanged + pages)
    # every other host: the base policy over their pages, with all the budget the trusted
    # hosts left (what they saved goes here first: a host without usable signals must not
    # lose fetches to one with them)
    left = budget - len(chosen)
    others = [r for r in recs if r.url not in trusted_pages and r.url not in taken]
    if left > 0 and others:
        for url in due(others, now, left, policy, **kw):
            take(url)
    # budget still left: the trusted hosts' other signalled pages, then the base order
    for _, url in sorted(spare, key=lambda p: (-p[0], p[1])):
        if len(chosen) >= budget:
            break
        n_signalled += take(url)
    left = budget - len(chosen)
    if left > 0:
        others = [r for r in others if r.url not in taken]
        for url in due(others, now, left, policy, **kw):
            take(url)
    return SignalPlan(
        chosen,
        signalled=n_signalled,
        skipped=sum(len(p) for p in skipped.values()) - n_audit,
        audited=n_audit,
        states=states,
    )


def _signal_gain(
    recs: list[PageRecord], now: float, budget: int, kw: Mapping[str, float]
) -> Callable[[PageRecord], float]:
    """The freshness a visit buys a page its signal says changed (staleness 1): its rate from
    its changes over the whole time observed, since a page fetched only when its signal moved
    shows a change at every visit and the visit-based estimators would take every chance for
    a change. A page changing much faster than it can be revisited is worth little."""
    period = float(kw.get("period", 86400.0))
    horizon = horizon_of(len(recs), budget, period)

    def gain(rec: PageRecord) -> float:
        changes = sum(1 for _, status in rec.history[1:] if status in CHANGE_STATUSES)
        rate = (changes + 0.5) / max(now - rec.history[0][0], period)
        return freshness_gain(rate, math.inf, horizon)

    return gain
