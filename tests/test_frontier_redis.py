from __future__ import annotations

import logging
import random
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.frontier.base import PushResult
from focuscrawl.frontier.redis_frontier import _ZDICT, RedisFrontier
from tests.conftest import RedisServer
from tests.frontier_contract import FrontierContract, drain, fp, push

_opened: list[RedisFrontier] = []


@pytest.fixture(autouse=True)
def _close_frontiers() -> Iterator[None]:
    """Every frontier a test made is closed after it: no Redis socket is left to the GC."""
    yield
    while _opened:
        _opened.pop().close()


def make(redis_url: str, **kw) -> RedisFrontier:  # type: ignore[no-untyped-def]
    f = RedisFrontier(redis_url, "fctest:topical", **kw)
    f.open()
    _opened.append(f)
    return f


class TestRedisFrontier(FrontierContract):
    @pytest.fixture
    def frontier(self, redis_url: str, redis_client) -> Iterator[RedisFrontier]:  # type: ignore[no-untyped-def]
        f = make(redis_url)
        yield f
        f.close()


class TestRedisFrontierSmallHead(FrontierContract):
    """Heads of 4 entries: most entries pass through the per-level lists."""

    @pytest.fixture
    def frontier(self, redis_url: str, redis_client) -> Iterator[RedisFrontier]:  # type: ignore[no-untyped-def]
        f = make(redis_url, head_size=4)
        yield f
        f.close()


class TestRedisFrontierPopAhead(FrontierContract):
    """A crawl's frontier: each pop sends the next one ahead, pushes can go without waiting."""

    @pytest.fixture
    def frontier(self, redis_url: str, redis_client) -> Iterator[RedisFrontier]:  # type: ignore[no-untyped-def]
        f = make(redis_url)
        f.pop_ahead = True
        yield f
        f.close()


def test_entry_popped_ahead_goes_back_on_close(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url)
    f.pop_ahead = True
    for i in range(3):
        push(f, f"http://a.test/{i}", i / 10)
    first = f.pop()
    assert first is not None and first.url == "http://a.test/2"
    assert len(f) == 2 and f.in_flight() == 2  # the next one is leased already, and counted
    f.close()  # a graceful close: what the worker held goes back now, not as an attempt
    g = make(redis_url)
    assert len(g) == 3 and g.in_flight() == 0
    popped = [g.pop() for _ in range(3)]
    assert [(e.url, e.attempts) for e in popped if e] == [
        ("http://a.test/2", 0),
        ("http://a.test/1", 0),
        ("http://a.test/0", 0),
    ]
    assert redis_client.hget("fctest:topical:stats", "frontier/redelivered") is None


def test_push_many_without_waiting_counts_at_the_next_call(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """Sent pushes are applied before what follows on the connection; their results come
    with the next call that waits (here a pop, which then sees the pushed entry)."""
    f = make(redis_url)
    push(f, "http://a.test/page", 0.9)
    page = f.pop()
    assert page is not None
    got: list[list[PushResult]] = []
    items = [
        ("http://a.test/new", 0.3, fp("http://a.test/new"), {}),
        ("http://a.test/page", 0.8, fp("http://a.test/page"), {}),
    ]
    redis_client.script_flush()  # a restarted Redis: loaded again, each command runs once
    assert f.push_many(items, ack=[page.fingerprint], on_results=got.append) is None
    more = [("http://b.test/x", 0.1, fp("http://b.test/x"), {})]
    assert f.push_many(more, on_results=got.append) is None
    assert got == []
    popped = f.pop()
    assert got == [[PushResult.ADDED, PushResult.SEEN], [PushResult.ADDED]]
    assert popped is not None and popped.url == "http://a.test/new"
    assert f.in_flight() == 1 and len(f) == 1


class TestRedisFrontierBloom(FrontierContract):
    @pytest.fixture
    def frontier(self, redis_url: str, redis_client) -> Iterator[RedisFrontier]:  # type: ignore[no-untyped-def]
        f = make(redis_url, bloom_error_rate=0.001, capacity=10_000)
        yield f
        f.close()


def test_unacked_entry_returns_when_its_lease_expires(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    dead = make(redis_url, lease=0.0)  # every lease is already expired
    alive = make(redis_url)
    push(dead, "http://a.test/1", 0.9, depth=2)
    push(dead, "http://a.test/2", 0.5)
    lost = dead.pop()  # this worker dies without acking
    assert lost is not None and lost.url == "http://a.test/1"
    assert alive.in_flight() == 1 and len(alive) == 1
    assert alive.requeue_expired(force=True) == 1
    again = alive.pop()
    assert again is not None
    assert (again.url, again.score, again.data) == ("http://a.test/1", 0.9, {"depth": 2})
    alive.ack(again.fingerprint)
    assert drain(alive) == ["http://a.test/2"]
    assert alive.in_flight() == 0
    assert redis_client.hget("fctest:topical:stats", "frontier/redelivered") == b"1"


def test_acked_entry_is_not_redelivered(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url)
    push(f, "http://a.test/1", 0.9)
    entry = f.pop()
    assert entry is not None
    f.ack(entry.fingerprint)
    assert f.requeue_expired(force=True) == 0
    assert f.in_flight() == 0 and f.pop() is None


def test_late_ack_after_redelivery_drops_the_second_copy(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    slow = make(redis_url, lease=0.0)
    push(slow, "http://a.test/1", 0.9)
    entry = slow.pop()
    assert entry is not None
    assert slow.requeue_expired(force=True) == 1
    assert len(slow) == 1
    slow.ack(entry.fingerprint)  # the slow worker finished after all
    assert len(slow) == 0
    assert slow.pop() is None


def test_entries_are_json_and_fingerprints_binary(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url)
    push(f, "http://a.test/x", 0.5, parent="http://a.test/", depth=1)
    (member,) = redis_client.zrange("fctest:topical:h:a.test", 0, -1)
    rest = member[5:]  # after the 5-byte insertion sequence: fplen, fingerprint, flags, deflated
    assert rest[:21] == bytes([20]) + fp("http://a.test/x")
    assert rest[21] == 2  # the URL is stored without its "http://" + host prefix
    unpacker = zlib.decompressobj(-15, zdict=_ZDICT + b"http://a.test/")
    text = unpacker.decompress(rest[22:]) + unpacker.flush()
    assert text == b'/x\0{"parent":"http://a.test/","depth":1}'  # JSON, no pickle
    buckets = [k for k in redis_client.keys("fctest:topical:s:*")]
    assert len(buckets) == 1
    (field,) = redis_client.hkeys(buckets[0])
    assert field == fp("http://a.test/x")[2:8]  # 6 raw bytes, the bucket holds the rest
    assert redis_client.object("encoding", buckets[0]) == b"listpack"


def test_big_host_keeps_exact_order_through_level_lists(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url, head_size=16)
    scores = {f"http://big.test/{i}": ((i * 7919) % 1000) / 1000 for i in range(600)}
    for url, score in scores.items():
        push(f, url, score)
    lists = redis_client.keys("fctest:topical:l:big.test:*")
    assert lists, "lower levels should have spilled to lists"
    assert redis_client.zcard("fctest:topical:h:big.test") < 600
    for i in range(0, 600, 3):  # upgrades of entries that sit in lists
        url = f"http://big.test/{i}"
        scores[url] = min(1.0, scores[url] + 0.3)
        push(f, url, scores[url])
    expected = sorted(scores, key=lambda u: -scores[u])
    popped = drain(f)
    assert [scores[u] for u in popped] == [scores[u] for u in expected]
    assert sorted(popped) == sorted(scores)


def test_bloom_filter_false_positive_rate_near_setting(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url, bloom_error_rate=0.01, capacity=1000)
    for i in range(1000):
        push(f, f"http://a.test/{i}", 0.5)
    assert len(drain(f)) == 1000
    assert all(f.seen(fp(f"http://a.test/{i}")) for i in range(0, 1000, 7))  # no false negative
    false_pos = sum(f.seen(fp(f"http://b.test/{i}")) for i in range(2000))
    assert false_pos / 2000 < 0.03  # 1% at capacity; a loose bound, the draw is random
    assert redis_client.keys("fctest:topical:s:*") == []  # fetched URLs live only in the bits


class _Waiter(logging.Handler):
    """Sets an event when a record containing ``text`` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.event.set()


def test_redis_restart_with_aof_loses_nothing(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    f = make(server.url)
    try:
        for i in range(40):
            push(f, f"http://h{i % 4}.test/{i}", i / 40)
        first = f.pop()
        assert first is not None
        f.ack(first.fingerprint)
        server.stop()  # Redis goes down mid-crawl

        waiter = _Waiter("unreachable")
        log = logging.getLogger("focuscrawl.frontier.rediswire.pipeline")
        log.addHandler(waiter)
        result: list[object] = []
        worker = threading.Thread(target=lambda: result.append(push(f, "http://new.test/", 0.99)))
        worker.start()
        try:
            assert waiter.event.wait(60), "the worker should log that Redis is unreachable"
        finally:
            log.removeHandler(waiter)
        server.start()  # same port and AOF file: the worker's client reconnects
        worker.join(60)
        assert result == [PushResult.ADDED]
        assert len(f) == 40  # 39 left + the new one: AOF kept the queue
        assert f.seen(first.fingerprint)
        urls = drain(f)
        assert urls[0] == "http://new.test/"
        assert sorted(urls[1:]) == sorted(f"http://h{i % 4}.test/{i}" for i in range(39))
    finally:
        f.close()
        server.stop()


def test_unreadable_entry_is_dropped_and_counted(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url)
    garbage = bytes([8]) + b"\x01" * 8 + b"not deflate at all \xff\xfe"
    assert f.run("push", ["a.test", "0.9", garbage, "0", ""]) == b"added"
    push(f, "http://a.test/ok", 0.5)
    entry = f.pop()
    assert entry is not None and entry.url == "http://a.test/ok"
    assert f.bad_entries == 1
    assert f.in_flight() == 1  # only the good one; the bad one was acknowledged away


@pytest.mark.parametrize("seed", range(4))
def test_queued_count_matches_the_entries_under_any_interleaving(
    redis_url: str, redis_client, seed: int
) -> None:  # type: ignore[no-untyped-def]
    """``P:n`` (what a worker's idle check reads) equals what can be popped, whatever mix of
    pushes, upgrades, forced re-pushes, pops, double and late acks and lease re-deliveries
    came before; small heads make entries spill to level lists and come back."""
    rnd = random.Random(seed)
    f = make(redis_url, lease=1000.0, head_size=(2, 4, 64, 3)[seed])
    urls = [f"http://h{i % 3}.test/{i}" for i in range(12 + 6 * seed)]
    leased: list[bytes] = []
    for _ in range(300):
        op = rnd.random()
        if op < 0.4:  # new URL, re-found URL (upgrade or not), or forced (retry/redirect)
            url = rnd.choice(urls)
            f.push(url, round(rnd.random(), rnd.choice((1, 3))), fp(url), {}, rnd.random() < 0.2)
        elif op < 0.65:
            entry = f.pop()
            if entry is not None:
                leased.append(entry.fingerprint)
        elif op < 0.85:
            if leased and rnd.random() < 0.8:
                done = leased.pop(rnd.randrange(len(leased)))
                f.ack(done)
                if rnd.random() < 0.2:
                    f.ack(done)  # the errback and the ack middleware both acknowledged it
            else:
                f.ack(fp(rnd.choice(urls)))  # a late ack of something long re-delivered
        else:  # some leases run out; another worker puts them back
            for member in redis_client.zrange("fctest:topical:lease", 0, -1):
                if rnd.random() < 0.5:
                    redis_client.zadd("fctest:topical:lease", {member: 0})
            f.requeue_expired(force=True)
        assert len(f) >= 0
    queued = len(f)
    popped = 0
    while (entry := f.pop()) is not None:
        popped += 1
        f.ack(entry.fingerprint)
    assert popped == queued and len(f) == 0
    for member in redis_client.zrange("fctest:topical:lease", 0, -1):
        redis_client.zadd("fctest:topical:lease", {member: 0})
    f.requeue_expired(force=True)
    while (entry := f.pop()) is not None:
        f.ack(entry.fingerprint)
    assert len(f) == 0 and f.in_flight() == 0


@pytest.mark.parametrize(
    "url",
    [
        "https://a.test/x?q=1",
        "http://A.Test:8080/x",
        "https://a.test",
        "ftp://a.test/x",
        "http://a.test.evil/",
    ],
)
def test_entry_url_and_meta_score_round_trip(redis_url: str, redis_client, url: str) -> None:  # type: ignore[no-untyped-def]
    """The URL is stored without its scheme and host, the meta score without itself: both
    come back exactly, whatever the URL looks like and whether the meta score is the entry's."""
    f = make(redis_url)
    same = {"meta": {"focuscrawl": {"score": 0.5, "d": 1, "par": url}, "depth": 1}}
    other = {"meta": {"focuscrawl": {"score": 0.25}}, "eb": "errback"}
    f.push(url, 0.5, fp(url), same)
    f.push(url + "#2", 0.5, fp(url + "#2"), other)
    first, second = f.pop(), f.pop()
    assert first is not None and second is not None
    assert (first.url, first.data, first.score) == (url, same, 0.5)
    assert (second.url, second.data) == (url + "#2", other)


def test_push_many_pushes_then_acks_in_one_call(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """A page's links and its own ack go in one round trip; the results are push's."""
    f = make(redis_url)
    push(f, "http://a.test/old", 1.0)
    assert drain(f) == ["http://a.test/old"]
    push(f, "http://a.test/page", 0.9)
    push(f, "http://a.test/queued", 0.5)
    page = f.pop()
    assert page is not None and f.in_flight() == 1
    items = [
        ("http://a.test/new", 0.3, fp("http://a.test/new"), {"d": 1}),
        ("http://a.test/queued", 0.1, fp("http://a.test/queued"), {}),
        ("http://a.test/queued", 0.7, fp("http://a.test/queued"), {}),
        ("http://a.test/old", 1.0, fp("http://a.test/old"), {}),
        ("http://a.test/old", 1.0, fp("http://a.test/old"), {}, True),
    ]
    results = f.push_many(items, ack=[page.fingerprint])
    assert results == [
        PushResult.ADDED, PushResult.QUEUED, PushResult.UPGRADED, PushResult.SEEN, PushResult.ADDED
    ]  # fmt: skip
    assert f.in_flight() == 0 and len(f) == 3
    assert drain(f) == ["http://a.test/old", "http://a.test/queued", "http://a.test/new"]
    assert f.seen(fp("http://a.test/page"))
    many = [
        (f"http://b{i % 7}.test/{i}", i / 600, fp(f"http://b{i % 7}.test/{i}"), {})
        for i in range(600)
    ]
    assert f.push_many(many) == [PushResult.ADDED] * 600  # more than one Lua call's worth
    assert len(f) == 600


def test_push_many_reloads_scripts_a_restarted_redis_lost(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    f = make(redis_url)
    push(f, "http://a.test/1", 0.5)
    redis_client.script_flush()  # what a restart does to loaded scripts
    assert f.push_many([("http://a.test/2", 0.7, fp("http://a.test/2"), {})]) == [PushResult.ADDED]
    assert drain(f) == ["http://a.test/2", "http://a.test/1"]


def test_pop_scans_past_busy_hosts_beyond_one_reply(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """40 hosts (more than one reply names), all but the worst busy: popped from the worst,
    busy asked once per host and pop; then the top host again once nothing is busy."""
    f = make(redis_url)
    for i in range(40):
        push(f, f"http://h{i}.test/", 1.0 - i / 100)
    asked: list[str] = []

    def busy(host: str) -> bool:
        asked.append(host)
        return host != "h39.test"

    entry = f.pop(busy)
    assert entry is not None and entry.url == "http://h39.test/"
    assert sorted(asked) == sorted(f"h{i}.test" for i in range(40))
    asked.clear()
    entry = f.pop(busy)  # h39 has nothing left: every host is busy
    assert entry is None and len(asked) == 39
    assert [e.url for e in iter(f.pop, None)][:2] == ["http://h0.test/", "http://h1.test/"]


def test_a_pop_whose_send_ahead_fails_still_hands_out_its_entry(
    redis_url: str, redis_client
) -> None:  # type: ignore[no-untyped-def]
    """Redis goes away just as the next pop is sent ahead: the entry already popped is handed
    out (before, pop() raised and the entry stayed leased, renewed, never fetched: a crawl that
    never ended); the pop sent ahead goes again when Redis is back."""
    import redis

    f = make(redis_url)
    f.pop_ahead = True
    f.nonblocking = True
    for i in range(3):
        push(f, f"https://h{i}.test/p", 1.0 - i / 10)
    send_ahead = f.send_ahead

    def unreachable_meanwhile(*args, **kw) -> None:  # type: ignore[no-untyped-def]
        conn = f.wire.conn
        send = conn.send_packed_command

        def gone(*a, **k) -> None:  # type: ignore[no-untyped-def]
            raise redis.ConnectionError("Redis went away")

        conn.send_packed_command = gone
        try:
            send_ahead(*args, **kw)
        finally:
            conn.send_packed_command = send

    f.send_ahead = unreachable_meanwhile  # type: ignore[method-assign]
    first = f.pop()
    assert first is not None and first.url == "https://h0.test/p"
    f.send_ahead = send_ahead  # type: ignore[method-assign]
    second = f.pop()  # Redis is back: the pop sent ahead goes again, its entry comes
    assert second is not None and second.url == "https://h1.test/p"
    for entry in (first, second):
        f.ack(entry.fingerprint)
    assert f.in_flight() == 1  # the third, popped ahead


@pytest.mark.parametrize(
    "refusal",
    [
        "CLUSTERDOWN The cluster is down",
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "READONLY You can't write against a read only replica.",
        "NOREPLICAS Not enough good replicas to write.",
    ],
)
def test_replies_refused_while_a_cluster_fails_over_are_sent_again(
    redis_url: str,
    redis_client,  # type: ignore[no-untyped-def]
    refusal: str,
) -> None:
    """A Redis Cluster node refuses a command while it fails over (a master down, its replica
    not promoted yet; the node a replica now; a promoted master without the replica that
    ``min-replicas-to-write`` asks for): the commands did not run. Every unread batch is sent
    again once the cluster serves, never handed to its callback as an error (a page's links
    and ack sent ahead were lost)."""
    from focuscrawl.frontier.redis_health import FrontierUnavailable

    f = make(redis_url)
    f.nonblocking = True
    refuse_once = (
        "if redis.call('INCR', KEYS[1]) == 1 then "
        f"return redis.error_reply(\"{refusal}\") end return 'done'"
    )
    got: list[object] = []
    f.wire.execute([("EVAL", refuse_once, 1, "fctest:failover")], got.extend)  # sent ahead
    with pytest.raises(FrontierUnavailable):
        f.wire.execute([("PING",)])  # the next call that reads meets the refusal
    assert got == []
    f.resume()
    assert got == [b"done"] and redis_client.get("fctest:failover") == b"2"
    redis_client.delete("fctest:failover")
