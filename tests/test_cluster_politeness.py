"""Cluster-wide per-host slots against a real Redis: concurrency, delay, Crawl-delay, dead slots."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from focuscrawl.cluster.politeness import HostGate


@pytest.fixture
def gates(redis_url: str, redis_client) -> Iterator[list[HostGate]]:  # type: ignore[no-untyped-def]
    """Two workers' gates on one crawl: two slots per host, no delay."""
    out = [HostGate(redis_url, "fctest:pol", concurrency=2) for _ in range(2)]
    for gate in out:
        gate.open()
    yield out
    for gate in out:
        gate.close()


def test_concurrency_limit_is_shared_by_workers(gates: list[HostGate]) -> None:
    a, b = gates
    assert a.acquire("h.test", "a1") == 0.0
    assert b.acquire("h.test", "b1") == 0.0
    assert not a.busy("other.test")
    assert a.busy("h.test") and b.busy("h.test")
    assert b.acquire("h.test", "b2") > 0  # full: wait
    assert b.acquire("other.test", "b3") == 0.0  # other hosts unaffected
    a.release("h.test", "a1")
    assert not a.busy("h.test")  # one slot of two taken (b1); b itself has b2 waiting
    assert b.busy("h.test")  # b1 and the waiting b2: b pops no more for the host
    assert b.acquire("h.test", "b2") == 0.0


def test_delay_spaces_requests_across_workers(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    a = HostGate(redis_url, "fctest:pol", concurrency=8, delay=30.0)
    b = HostGate(redis_url, "fctest:pol", concurrency=8, delay=30.0)
    a.open()
    b.open()
    assert a.acquire("h.test", "a1") == 0.0
    wait = b.acquire("h.test", "b1")
    assert 25.0 < wait <= 30.0  # the other worker's request counts
    assert b.busy("h.test")
    assert b.acquire("g.test", "b2") == 0.0
    a.close()
    b.close()


def test_robots_crawl_delay_raises_the_hosts_delay(gates: list[HostGate]) -> None:
    a, b = gates
    a.set_crawl_delay("slow.test", 12.0)
    assert b.acquire("slow.test", "b1") == 0.0
    b.release("slow.test", "b1")
    assert 10.0 < a.acquire("slow.test", "a1") <= 12.0
    a.set_crawl_delay("capped.test", 10_000.0)
    assert b.acquire("capped.test", "b1") == 0.0
    assert a.acquire("capped.test", "a1") <= a.max_delay


def test_slots_of_a_dead_worker_free_themselves(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    dead = HostGate(redis_url, "fctest:pol", concurrency=1, hold=0.0)  # every slot expires at once
    live = HostGate(redis_url, "fctest:pol", concurrency=1)
    dead.open()
    live.open()
    assert dead.acquire("h.test", "dead1") == 0.0  # never released
    assert live.acquire("h.test", "live1") == 0.0
    assert live.in_use("h.test") == 1
    dead.close()
    live.close()


def test_busy_answers_from_memory_within_its_ttl(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """With busy_ttl, busy() is a cached answer for other workers' changes; its own acquire and
    release refresh it at once."""
    a = HostGate(redis_url, "fctest:pol", concurrency=1, busy_ttl=3600.0)
    b = HostGate(redis_url, "fctest:pol", concurrency=1)
    a.open()
    b.open()
    assert not a.busy("h.test")
    assert b.acquire("h.test", "b1") == 0.0
    assert not a.busy("h.test")  # cached: b's slot is not seen for busy_ttl
    assert a.acquire("h.test", "a1") > 0  # but acquire enforces the limit
    assert a.busy("h.test")  # acquire dropped the cached answer
    b.release("h.test", "b1")
    assert a.busy("h.test")
    assert a.acquire("h.test", "a1") == 0.0
    a.release("h.test", "a1")
    assert not a.busy("h.test")
    a.close()
    b.close()


def test_deferred_release_goes_with_the_next_round_trip(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """With defer_release, a release is sent with the gate's next call (or flush/close), not
    on its own: until then other workers still see the slot taken."""
    a = HostGate(redis_url, "fctest:pol", concurrency=1, defer_release=True)
    b = HostGate(redis_url, "fctest:pol", concurrency=1)
    a.open()
    b.open()
    assert a.acquire("h.test", "a1") == 0.0
    a.release("h.test", "a1")
    assert b.busy("h.test")  # not sent yet
    assert not a.busy("h.test")  # a's own call sends it first
    assert not b.busy("h.test")
    assert a.acquire("h.test", "a2") == 0.0
    a.release("h.test", "a2")
    a.flush()
    assert b.acquire("h.test", "b1") == 0.0
    b.release("h.test", "b1")
    assert a.acquire("g.test", "a3") == 0.0
    a.release("g.test", "a3")
    a.close()  # sends what is left
    assert b.in_use("g.test") == 0
    b.close()


def test_own_waiting_and_taken_tokens_make_a_host_busy(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """A worker's own tokens for a host (taken, or still waiting in acquire) count at once:
    the scheduler stops popping for that host without asking Redis."""
    a = HostGate(redis_url, "fctest:pol", concurrency=2, delay=30.0)
    a.open()
    assert a.acquire("h.test", "a1") == 0.0
    assert not a.busy("other.test")
    assert a.acquire("h.test", "a2") > 0  # waits for the delay, but holds its place
    redis_client.delete("fctest:pol:pol:a:h.test", "fctest:pol:pol:next")  # Redis forgets
    assert a.busy("h.test")  # two tokens of its own: busy without a round trip
    a.release("h.test", "a2")  # given up
    assert not a.busy("h.test")
    a.close()


def test_acquire_answers_busy_for_its_host(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """A taken slot's reply says whether the host is busy now: busy() answers from it (no
    round trip), and a release drops only a "busy" answer (a release never makes a host busy)."""
    a = HostGate(redis_url, "fctest:pol", concurrency=2, busy_ttl=3600.0)
    b = HostGate(redis_url, "fctest:pol", concurrency=2)
    a.open()
    b.open()
    assert a.acquire("h.test", "a1") == 0.0  # one slot of two: free
    assert b.acquire("h.test", "b1") == 0.0  # now full, which a learns only by asking
    assert not a.busy("h.test")  # the answer that came with a's acquire
    a.release("h.test", "a1")
    assert not a.busy("h.test")  # kept: a release frees
    slow = HostGate(redis_url, "fctest:pol", concurrency=8, delay=60.0, busy_ttl=3600.0)
    slow.open()
    assert slow.acquire("d.test", "s1") == 0.0
    assert slow.busy("d.test")  # the next slot is 60 s away
    slow.release("d.test", "s1")
    assert slow.busy("d.test")  # asked again: still the delay
    for gate in (a, b, slow):
        gate.close()


def test_releases_that_fail_are_sent_again(redis_url: str, redis_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A deferred release whose send fails (its master died, the cluster fails over) is kept
    and sent again by the next flush: the slot does not stay taken until its deadline."""
    import redis
    from redis.client import Pipeline

    a = HostGate(redis_url, "fctest:pol", concurrency=1, defer_release=True)
    a.open()
    assert a.acquire("h.test", "a1") == 0.0
    a.release("h.test", "a1")
    execute = Pipeline.execute

    def down(self, *args, **kw) -> None:  # type: ignore[no-untyped-def]
        raise redis.ConnectionError("master down")

    monkeypatch.setattr(Pipeline, "execute", down)
    with pytest.raises(redis.ConnectionError):
        a.flush()
    # an acquire meanwhile goes alone (the releases' master may be the dead one)
    assert a.acquire("g.test", "a2") == 0.0
    assert a.in_use("h.test") == 1
    monkeypatch.setattr(Pipeline, "execute", execute)
    a.flush()
    assert a.in_use("h.test") == 0
    a.release("g.test", "a2")
    a.close()
