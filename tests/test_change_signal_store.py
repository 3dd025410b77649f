"""The signal store (focuscrawl.change.signal_store): one contract on SQLite and Redis, and two
workers of a Redis crawl sharing one trust per host (issue 31)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.change.signal_store import SignalStore, open_signal_store
from focuscrawl.change.store_redis import RedisChangeStore
from focuscrawl.change.store_sqlite import SqliteChangeStore


@pytest.fixture(params=["sqlite", "redis"])
def signals(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SignalStore]:
    if request.param == "redis":
        request.getfixturevalue("redis_client")  # flushes the db before and after
        change = RedisChangeStore(request.getfixturevalue("redis_url"), prefix="t")
    else:
        change = SqliteChangeStore(str(tmp_path / "change.sqlite3"))
    store = open_signal_store(change)
    store.open()
    yield store
    store.close()


def test_lastmods_keep_the_newest(signals: SignalStore) -> None:
    signals.put_lastmods({"http://a.test/1": 10.0, "http://a.test/2": 20.0})
    signals.put_lastmods({"http://a.test/1": 5.0, "http://a.test/2": 25.0})
    assert signals.lastmods() == {"http://a.test/1": 10.0, "http://a.test/2": 25.0}
    assert signals.lastmods(["http://a.test/2", "http://a.test/none"]) == {"http://a.test/2": 25.0}


def test_evidence_adds_up_per_host(signals: SignalStore) -> None:
    signals.add_evidence("a.test", "agreed", 5)
    signals.add_evidence("a.test", "missed")
    signals.add_evidence("b.test", "false_move", 2)
    signals.add_evidence("x" * 300, "agreed")  # not a host name: not stored
    trust = signals.trust()
    assert set(trust) == {"a.test", "b.test"}
    assert (trust["a.test"].agreed, trust["a.test"].missed) == (5, 1)
    assert trust["b.test"].false_moves == 2
    with pytest.raises(ValueError):
        signals.add_evidence("a.test", "maybe")


def test_two_workers_share_one_trust_per_host(redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    first = open_signal_store(RedisChangeStore(redis_url, prefix="w"))
    second = open_signal_store(RedisChangeStore(redis_url, prefix="w"))
    first.open()
    second.open()
    try:
        first.add_evidence("a.test", "agreed", 3)
        second.add_evidence("a.test", "agreed", 4)
        second.add_evidence("a.test", "false_move")
        assert first.trust()["a.test"].checks == 8
        redis_client.hset("w:sig:lastmod", "http://a.test/bad", "not a number")
        assert first.lastmods(["http://a.test/bad"]) == {"http://a.test/bad": 0.0}
    finally:
        first.close()
        second.close()


def test_status_shows_each_hosts_trust(redis_client, redis_url: str, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from focuscrawl.cli import main

    store = open_signal_store(RedisChangeStore(redis_url, prefix="fc:chg"))
    store.open()
    try:
        store.add_evidence("exact.test", "agreed", 7)
        store.add_evidence("lying.test", "agreed", 1)
        store.add_evidence("lying.test", "false_move", 5)
    finally:
        store.close()
    assert main(["status", "--redis-url", redis_url, "--json"]) == 0
    trust = json.loads(capsys.readouterr().out)["signal_trust"]
    assert trust["exact.test"]["state"] == "trusted" and trust["exact.test"]["checks"] == 7
    assert trust["lying.test"]["state"] == "distrusted"
    assert main(["status", "--redis-url", redis_url]) == 0
    out = capsys.readouterr().out
    assert "signals exact.test: trusted (7 agreed, 0 missed, 0 false of 7 checks)" in out
    assert "signals lying.test: distrusted" in out


def test_summary_lines_show_signals_and_trust() -> None:
    from focuscrawl.extensions.summary import signal_lines

    lines = signal_lines(
        {
            "focuscrawl/recrawl/signals/due_at_once": 3,
            "focuscrawl/recrawl/signals/skipped": 40,
            "focuscrawl/recrawl/signals/false_move": 2,
            "focuscrawl/signals/trust/a.test": "trusted (9 agreed, 0 missed, 0 false of 9 checks)",
        }
    )
    assert lines[0].startswith("signals: 3 due at once, 40 skipped, 0 audited")
    assert "2 false (lying)" in lines[0]
    assert lines[1] == "trust a.test: trusted (9 agreed, 0 missed, 0 false of 9 checks)"
    assert signal_lines({}) == []


def test_signal_plan_reads_lastmods_and_trust_from_the_redis_change_store(
    redis_client,  # type: ignore[no-untyped-def]
    redis_url: str,
) -> None:
    from focuscrawl.change.recrawl import signal_plan

    change = RedisChangeStore(redis_url, prefix="fc:chg")
    change.open()
    try:
        for i in range(20):
            change.record(f"http://exact.test/p/{i}", None, "new", 100.0)
            change.record(f"http://plain.test/p/{i}", None, "new", 100.0)
        change.flush()
    finally:
        change.close()
    store = open_signal_store(RedisChangeStore(redis_url, prefix="fc:chg"))
    store.open()
    try:
        store.put_lastmods({f"http://exact.test/p/{i}": 50.0 for i in range(20)})
        store.put_lastmods({"http://exact.test/p/3": 150.0})  # changed after the visit
        store.add_evidence("exact.test", "agreed", 10)  # another worker's checks
    finally:
        store.close()
    settings = {
        "FOCUSCRAWL_REDIS_URL": redis_url,
        "FOCUSCRAWL_RECRAWL_BUDGET": 10,
        "FOCUSCRAWL_RECRAWL_POLICY": "uniform",
        "FOCUSCRAWL_RECRAWL_PERIOD": 1.0,
    }
    plan = signal_plan(settings, now=200.0)
    assert plan.urls[0] == "http://exact.test/p/3" and plan.signalled == 1
    assert plan.states == {"exact.test": "trusted", "plain.test": "probation"}
    assert plan.skipped == 18 and plan.audited == 1
    assert len(plan.urls) == 10
