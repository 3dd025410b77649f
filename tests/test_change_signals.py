"""Change signals and per-host trust (focuscrawl.change.signals, issue 31)."""

from __future__ import annotations

from focuscrawl.change.record import PageRecord
from focuscrawl.change.signals import HostTrust, TrustRules, check, plan_with_signals


def test_check_tells_agreement_from_stale_and_lying_signals() -> None:
    assert check(None, 10.0, True) is None and check(5.0, 0.0, True) is None
    assert check(12.0, 10.0, True) == "agreed"  # moved, changed
    assert check(8.0, 10.0, False) == "agreed"  # still, unchanged
    assert check(8.0, 10.0, True) == "missed"  # stale: changed without lastmod moving
    assert check(12.0, 10.0, False) == "false_move"  # lying: lastmod = now


def test_trust_is_earned_and_lost() -> None:
    rules = TrustRules(min_checks=4, max_error=0.2)
    host = HostTrust("a.test")
    assert host.state(rules) == "probation"
    host.add("agreed", 4)
    assert host.state(rules) == "trusted"
    host.add("false_move", 2)
    assert host.state(rules) == "distrusted" and host.error_rate == 2 / 6


def _records(host: str, n: int, fetched: float = 5.0) -> list[PageRecord]:
    return [
        PageRecord(f"http://{host}/p/{i}", None, [(0.0, "new"), (fetched, "unchanged")])
        for i in range(n)
    ]


def test_trusted_signals_make_changed_pages_due_and_let_the_rest_be_skipped() -> None:
    recs = _records("exact.test", 50) + _records("none.test", 50)
    lastmods = {r.url: 1.0 for r in recs if "exact" in r.url}  # older than the visit at 5.0
    lastmods["http://exact.test/p/7"] = 9.0  # changed after it
    trust = {"exact.test": HostTrust("exact.test", agreed=20)}
    plan = plan_with_signals(recs, 10.0, 20, "change-rate", lastmods, trust, period=1.0)
    assert plan.urls[0] == "http://exact.test/p/7"
    assert plan.states["exact.test"] == "trusted" and plan.signalled == 1
    exact = [u for u in plan.urls if "exact" in u]
    assert len(exact) == 1 + plan.audited and plan.audited == 1
    assert plan.skipped == 48 and len(plan.urls) == 20


def test_distrusted_signals_fall_back_to_the_base_policy() -> None:
    recs = _records("lying.test", 30)
    lastmods = {r.url: 10.0 for r in recs}  # every lastmod is now
    trust = {"lying.test": HostTrust("lying.test", agreed=3, false_moves=9)}
    plan = plan_with_signals(recs, 10.0, 10, "uniform", lastmods, trust, period=1.0)
    assert plan.states["lying.test"] == "distrusted" and plan.signalled == 0
    assert len(plan.urls) == 10


def test_a_probation_host_gets_a_few_signalled_pages_first_and_skips_nothing() -> None:
    recs = _records("new.test", 30)
    lastmods = {r.url: 10.0 for r in recs}
    rules = TrustRules(probe=3)
    plan = plan_with_signals(recs, 10.0, 10, "uniform", lastmods, {}, rules, period=1.0)
    assert plan.states["new.test"] == "probation"
    assert plan.signalled == 3 and plan.skipped == 0 and len(plan.urls) == 10


def test_a_trusted_feed_takes_the_share_of_the_pages_it_names_not_of_its_host() -> None:
    """A feed that names 4 of its host's 100 pages speaks for those 4: its host's share is
    theirs (budget x 4 / 200 = 1 fetch), not half the budget; its other pages compete with the
    signal-less host's under the base policy for the rest (before, the feed's host took a share
    by its 100 pages, and its unnamed pages competed again for the rest)."""
    feed = _records("feed.test", 100)
    plain = _records("plain.test", 100, fetched=4.0)  # older: the base policy's first
    lastmods = {f"http://feed.test/p/{i}": 8.0 for i in range(4)}  # newer than the fetch at 5
    trust = {"feed.test": HostTrust("feed.test", agreed=10)}
    plan = plan_with_signals(feed + plain, 10.0, 50, "uniform", lastmods, trust, period=1.0)
    assert plan.states["feed.test"] == "trusted"
    assert plan.signalled == 1 and plan.urls[0] == "http://feed.test/p/0"
    assert len(plan.urls) == 50 and all("plain.test" in u for u in plan.urls[1:])
