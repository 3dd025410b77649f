"""The frontier sharded over a real 3-master Redis Cluster: the frontier contract, and what
sharding adds (slots, spread, best-first across shards, leases, failover)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.frontier.base import PushResult
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier, shard_of, shard_tags
from tests.frontier_contract import FrontierContract, drain, push
from tests.test_frontier_quarantine import dead_mark

PREFIX = "fctest:topical"


def make(url: str, **kw) -> ShardedRedisFrontier:  # type: ignore[no-untyped-def]
    f = ShardedRedisFrontier(url, PREFIX, **kw)
    f.open()
    return f


class TestClusterFrontier(FrontierContract):
    @pytest.fixture
    def frontier(self, redis_cluster_url: str, cluster_client) -> Iterator[ShardedRedisFrontier]:  # type: ignore[no-untyped-def]
        f = make(redis_cluster_url, shards=12)
        yield f
        f.close()


def test_shard_tags_spread_evenly_over_the_slots() -> None:
    from redis.crc import key_slot

    for n in (1, 3, 48, 200):
        tags = shard_tags(n)
        assert len(set(tags)) == n
        # the k-th tag's slot is in the k-th of n equal slot ranges
        assert [key_slot(t.encode()) * n // 16384 for t in tags] == list(range(n))
    assert shard_tags(48) == shard_tags(48)  # the same in every worker
    assert shard_of("www.example.org", 48) == shard_of("www.example.org", 48)


def test_keys_spread_over_every_master_each_script_on_one_slot(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    from redis.cluster import RedisCluster
    from redis.crc import key_slot

    f = make(redis_cluster_url, shards=12)
    assert len(f.shards) == 12
    for i in range(600):
        push(f, f"http://h{i % 150}.test/p{i}", (i * 7919 % 1000) / 1000)
    assert len(f) == 600
    popped = drain(f)
    assert len(popped) == 600 and len(set(popped)) == 600
    # best-first with one worker: exactly the score order (scores distinct per URL here, ties
    # only between URLs of equal score)
    scores = {f"http://h{i % 150}.test/p{i}": (i * 7919 % 1000) / 1000 for i in range(600)}
    assert [scores[u] for u in popped] == sorted(scores.values(), reverse=True)
    masters = cluster_client.get_primaries()
    per_master = [cluster_client.get_redis_connection(m).dbsize() for m in masters]
    assert len(per_master) == 3 and all(n > 0 for n in per_master)
    for key in cluster_client.scan_iter(match=f"{PREFIX}:*", target_nodes=RedisCluster.PRIMARIES):
        name = key.decode()
        if name != f"{PREFIX}:cluster":  # the layout record
            tag = name[name.index("{") + 1 : name.index("}")]
            assert key_slot(key) == key_slot(tag.encode())
    f.close()


def test_two_workers_lose_nothing_and_never_share_an_entry(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    a = make(redis_cluster_url, shards=12)
    b = make(redis_cluster_url, shards=12)  # opened before a pushes: learns by refresh/probe
    urls = [f"http://h{i % 40}.test/p{i}" for i in range(400)]
    for i, url in enumerate(urls):
        push(a, url, (i * 37 % 400) / 400)
    got: list[str] = []
    for _ in range(200):
        for worker in (b, a):
            entry = worker.pop()
            if entry is not None:
                got.append(entry.url)
                worker.ack(entry.fingerprint)
    assert sorted(got) == sorted(urls)
    assert len(a) == 0 and len(b) == 0 and a.in_flight() == 0
    a.close()
    b.close()


def test_entries_leased_by_another_worker_are_counted_as_elsewhere(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    """What a crawl waits for before it ends: leases held by others, not its own."""
    a = make(redis_cluster_url, shards=6)
    a.pop_ahead = True
    b = make(redis_cluster_url, shards=6)
    for i in range(4):
        push(a, f"http://h{i}.test/p", 0.9 - i / 10)
    first = a.pop()  # and one popped ahead: both a's own
    assert first is not None
    assert a.leased_elsewhere() == 0 and b.leased_elsewhere() == 2
    a.ack(first.fingerprint)
    a.close()  # a graceful close gives back what was popped ahead
    assert b.leased_elsewhere() == 0
    b.close()


def expire_all(client) -> None:  # type: ignore[no-untyped-def]
    from redis.cluster import RedisCluster

    for key in client.scan_iter(match=f"{PREFIX}:*:lease", target_nodes=RedisCluster.PRIMARIES):
        for member in client.zrange(key, 0, -1):
            client.zadd(key, {member: 0})


def test_requeue_checks_a_shard_again_when_its_earliest_lease_expires(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    """The lease requeue sends a shard its script when a lease there can have expired (its
    earliest lease, or ``min(lease, REQUEUE_IDLE_MAX)`` after the last check), not every
    ``requeue_interval``: idle shards cost their masters nothing each second."""
    dead = make(redis_cluster_url, shards=12, lease=0.0)  # its leases expire as they start
    push(dead, "http://a.test/gone", 0.9)
    push(dead, "http://b.test/held", 0.5)
    assert dead.pop() is not None  # a.test: the worker dies with it
    live = make(redis_cluster_url, shards=12, lease=300.0)
    assert live.requeue_expired() == 1  # due at once: the first check of every shard
    held = live.pop()  # b.test's entry would come first if a.test's were still leased
    # no work mark blamed it: a bystander, back uncounted
    assert held is not None and held.url == "http://a.test/gone" and held.attempts == 0
    checked = list(live._requeue_at)
    live._next_requeue = 0.0  # a second later: no shard due (no lease there expires so soon)
    assert live.requeue_expired() == 0 and live._requeue_at == checked
    expire_all(cluster_client)  # its lease shortened behind its back: not seen until due ...
    live._next_requeue = 0.0
    assert live.requeue_expired() == 0 and live.in_flight() == 1
    assert live.requeue_expired(force=True) == 1  # ... or forced
    k = live._shard("http://a.test/gone")
    other = next(j for j in range(12) if j != k)
    live._requeue_at[other] = 0.0  # due: checked alone
    live._next_requeue = 0.0
    sent = live.sends
    assert live.requeue_expired() == 0 and live.sends - sent == 1
    dead.close()
    live.close()


def test_a_page_that_killed_two_workers_is_quarantined_and_counted(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    from focuscrawl.cluster.state import read_status

    def restarted() -> ShardedRedisFrontier:  # a worker on the dead one's data dir
        f = ShardedRedisFrontier(redis_cluster_url, PREFIX, shards=6, quarantine_after=2)
        f.mark_dir = str(tmp_path)
        f.open()  # claims the dead worker's mark: blamed on the entry's own shard
        return f

    worker = make(redis_cluster_url, shards=6, quarantine_after=2)
    push(worker, "http://a.test/poison", 0.9)
    push(worker, "http://b.test/ok", 0.5)
    first = worker.pop()
    assert first is not None and first.url == "http://a.test/poison"
    dead_mark(tmp_path, first)  # the worker died working on it
    other = restarted()
    assert other.requeue_expired(force=True) == 1 and other.redelivered == 1
    again = other.pop()
    assert again is not None and again.url == "http://a.test/poison" and again.attempts == 1
    dead_mark(tmp_path, again)  # that one died too
    third = restarted()
    assert third.requeue_expired(force=True) == 0
    assert [(r.url, r.attempts) for r in third.quarantined] == [("http://a.test/poison", 2)]
    assert push(third, "http://a.test/poison", 0.99) is PushResult.SEEN
    ok = third.pop()
    assert ok is not None and ok.url == "http://b.test/ok"
    third.ack(ok.fingerprint)
    assert third.pop() is None and len(third) == 0 and third.in_flight() == 0
    status = read_status(cluster_client, PREFIX)
    assert (status.queued, status.in_flight, status.redelivered) == (0, 0, 1)
    third.close()


def test_status_command_reads_the_cluster(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    from focuscrawl.cli import main

    f = make(redis_cluster_url, shards=6)
    for i in range(30):
        push(f, f"http://h{i % 7}.test/{i}", i / 30)
    entry = f.pop()
    assert entry is not None
    assert main(["status", "--redis-url", redis_cluster_url, "--prefix", PREFIX]) == 0
    out = capsys.readouterr().out
    assert "queued 29" in out and "in flight 1" in out
    f.close()


def test_host_slots_are_shared_on_the_cluster_in_the_hosts_shard(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    from redis.crc import key_slot

    from focuscrawl.cluster.politeness import HostGate

    gates = [
        HostGate(redis_cluster_url, PREFIX, cluster=True, shards=12, concurrency=2, **kw)
        for kw in ({}, {"defer_release": True})
    ]
    for gate in gates:
        gate.open()
    a, b = gates
    assert a.acquire("h.test", "a1") == 0.0 and b.acquire("h.test", "b1") == 0.0
    assert a.busy("h.test") and b.busy("h.test") and a.in_use("h.test") == 2
    assert b.acquire("h.test", "b2") > 0  # the host's two slots are taken, cluster-wide
    b.release("h.test", "b1")
    b.release("h.test", "b2")
    assert not b.busy("h.test")  # the deferred releases went with that call
    assert a.in_use("h.test") == 1 and not a.busy("other.test")
    # the host's slots live in its frontier shard's slot
    frontier = make(redis_cluster_url, shards=12)
    k = shard_of("h.test", 12)
    assert key_slot(a._slots("h.test").encode()) == key_slot(
        f"{frontier.shards[k].prefix}:n".encode()
    )
    frontier.close()
    for gate in gates:
        gate.close()


class TestClusterFrontierPopAhead(FrontierContract):
    """A crawl's frontier on the cluster: each pop sends the next one ahead."""

    @pytest.fixture
    def frontier(self, redis_cluster_url: str, cluster_client) -> Iterator[ShardedRedisFrontier]:  # type: ignore[no-untyped-def]
        f = ShardedRedisFrontier(redis_cluster_url, PREFIX, shards=12)
        f.pop_ahead = True
        f.open()
        yield f
        f.close()


def test_entry_popped_ahead_goes_back_on_close_on_the_cluster(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    f = ShardedRedisFrontier(redis_cluster_url, PREFIX, shards=12)
    f.pop_ahead = True
    f.open()
    for i in range(3):
        push(f, f"http://h{i}.test/{i}", i / 10)
    first = f.pop()
    assert first is not None and first.url == "http://h2.test/2"
    assert len(f) == 2 and f.in_flight() == 2  # the next one is leased already, and counted
    f.close()  # what the worker held goes back now, not as an attempt
    g = make(redis_cluster_url, shards=12)
    assert len(g) == 3 and g.in_flight() == 0
    assert drain(g) == ["http://h2.test/2", "http://h1.test/1", "http://h0.test/0"]
    g.close()


def test_a_pages_ack_waits_for_its_links_and_a_dead_worker_loses_none(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    """Links and acks are held (sent with the shard's next pop, or all together): a worker
    killed before they went out leaves its page leased, so it is fetched again."""
    import hashlib

    worker = ShardedRedisFrontier(redis_cluster_url, PREFIX, shards=12, requeue_interval=1e9)
    worker.pop_ahead = True
    worker.open()
    push(worker, "http://a.test/page", 0.5)
    entry = worker.pop()
    assert entry is not None
    links = [(f"http://l{i}.test/x", 0.9, hashlib.sha1(b"%d" % i).digest(), {}) for i in range(8)]
    got: list[list[PushResult]] = []
    worker.push_many(links, [entry.fingerprint], got.append)
    for shard in worker.shards:  # the worker dies: nothing it held is sent
        shard.wire.abandon()
    other = make(redis_cluster_url, shards=12)
    assert len(other) == 0 and other.in_flight() == 1  # the page is still leased
    expire_all(cluster_client)
    assert other.requeue_expired(force=True) == 1
    again = other.pop()
    assert again is not None and again.url == "http://a.test/page"
    # the page fetched again: its links and ack, held, then sent together
    other.pop_ahead = True
    other.push_many(links, [again.fingerprint], got.append)
    other.flush()
    assert got == [[PushResult.ADDED] * 8]
    assert other.in_flight() == 0 and len(other) == 8
    assert sorted(drain(other)) == sorted(url for url, *_ in links)
    other.close()


def test_a_page_costs_one_send_and_its_record_is_read_with_the_pop(
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
    round_trips: list[int],
) -> None:
    """As a crawl on the cluster: the pop sent ahead carries the shard's held links and acks;
    the popped URL's change record is read with it (on its own master's connection), so the
    change store's reads send nothing; links and acks of many pages go in a few sends."""
    import hashlib

    import focuscrawl.change.store_redis as store_redis
    import focuscrawl.frontier.redis_shards as redis_shards
    from focuscrawl.change.store_redis import RedisChangeStore, prefetch_command

    monkeypatch.setattr(store_redis, "WRITE_DELAY", 1e9)  # counts must not depend on time
    monkeypatch.setattr(redis_shards, "HOLD_SECONDS", 1e9)
    store = RedisChangeStore(redis_cluster_url, prefix="fc:chgtest", cluster=True)
    store.open()
    f = ShardedRedisFrontier(redis_cluster_url, PREFIX, shards=12, requeue_interval=1e9)
    f.pop_ahead = True
    f.prefetch = lambda url, wait: prefetch_command(redis_cluster_url, url, wait)
    f.open()
    for i in range(40):
        store.record(f"http://h{i % 6}.test/{i}", None, "new", 1.0)
        push(f, f"http://h{i % 6}.test/{i}", 0.5 + i / 100)
    store.flush()
    sent = round_trips  # what the client sends (conftest.round_trips)
    first = f.pop()  # the first pop waits; the next is sent ahead
    assert first is not None
    f.ack(first.fingerprint)
    before, popped, serial = sent[0], 0, 0
    for _ in range(30):
        entry = f.pop()
        assert entry is not None
        popped += 1
        sends = sent[0]
        record = store.get(entry.url)  # read ahead with the pop: nothing sent
        assert record is not None and record.history == [(1.0, "new")]
        assert sent[0] == sends
        links = []
        for _ in range(3):
            serial += 1
            url = f"http://n{serial}.test/x"
            links.append((url, 0.1, hashlib.sha1(url.encode()).digest(), {}))
        f.push_many(links, [entry.fingerprint], lambda results: None)
    # per page: the pop ahead, the record read when it is on another master, head probes
    assert (sent[0] - before) / popped <= 2.5
    f.flush()
    assert f.in_flight() == 1  # the entry popped ahead
    f.close()
    store.close()
