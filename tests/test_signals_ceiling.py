"""The clairvoyant ceiling of the recrawl-with-signals simulation (issue 31): knowing every
change, it is fresher than today's policy and than the signals on every kind of host, on the
same budget, and it never fetches a page that has not changed."""

from __future__ import annotations

from focuseval.signals_sim import HOST_KINDS, signals_table, simulate_signals


def test_the_ceiling_is_above_both_policies_on_every_host_kind() -> None:
    kw = dict(pages_per_host=60, cycles=14, warmup=4, seed=5)
    today = simulate_signals("today", **kw)
    signals = simulate_signals("signals", **kw)
    oracle = simulate_signals("oracle", **kw)
    for kind in HOST_KINDS:
        ceiling = oracle.kinds[kind]
        assert ceiling.freshness >= today.kinds[kind].freshness, kind
        assert ceiling.freshness >= signals.kinds[kind].freshness, kind
        assert ceiling.fetches == ceiling.changes_found  # only stale pages are fetched
    table = signals_table(today, signals, oracle)
    assert "ceiling" in table.splitlines()[0]
    assert len(table.splitlines()) == 2 + len(HOST_KINDS)
