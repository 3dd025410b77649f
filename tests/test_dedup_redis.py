"""The near-duplicate index shared through Redis: the same answers as the in-process index, on a
real redis-server and a real Redis Cluster, shared by workers, safe with what Redis holds."""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from typing import Any

import pytest

from focuscrawl.change.simhash import hamming
from focuscrawl.dedup import NearDuplicateIndex, TextPrint
from focuscrawl.dedup.redis_index import RedisDuplicateIndex

pytestmark = pytest.mark.redis
PREFIX = "fc:test"


@pytest.fixture(params=["memory", "redis", "cluster"])
def make_index(request: pytest.FixtureRequest) -> Callable[..., Any]:
    if request.param == "memory":
        return lambda bits=4, max_pages=0: NearDuplicateIndex(bits, max_pages)
    client = request.getfixturevalue(
        "redis_client" if request.param == "redis" else "cluster_client"
    )
    return lambda bits=4, max_pages=0: RedisDuplicateIndex(client, PREFIX, bits, max_pages)


def fp(simhash: int, digest: int = 0) -> TextPrint:
    return TextPrint(simhash, digest or simhash, 100)


def test_the_same_answers_as_brute_force(make_index: Callable[..., Any]) -> None:
    rng = random.Random(3)
    index = make_index(bits=4)
    stored = [rng.getrandbits(64) for _ in range(80)]
    for n, x in enumerate(stored):
        assert index.add(f"http://ex.test/{n}", fp(x), relevance=n / 100)
    for trial in range(150):
        probe = stored[trial % len(stored)]
        for bit in rng.sample(range(64), trial % 7):
            probe ^= 1 << bit
        near = [(hamming(probe, x), i) for i, x in enumerate(stored) if hamming(probe, x) <= 4]
        match = index.find(fp(probe, digest=1))
        if not near:
            assert match is None
            continue
        distance, i = min(near)
        assert match is not None
        assert (match.url, match.distance, match.exact) == (f"http://ex.test/{i}", distance, False)
        assert match.relevance == pytest.approx(i / 100)


def test_exact_only_and_bounded(make_index: Callable[..., Any]) -> None:
    index = make_index(bits=0, max_pages=2)
    assert index.add("http://a.test/", TextPrint(42, 7, 50))
    assert index.find(TextPrint(42, 8, 50)) is None
    match = index.find(TextPrint(42, 7, 50))
    assert match is not None and match.exact and match.url == "http://a.test/"
    assert index.add("http://b.test/", TextPrint(43, 9, 50))
    assert not index.add("http://c.test/", TextPrint(44, 10, 50))  # full
    assert index.find(TextPrint(44, 10, 50)) is None


def test_workers_share_one_index(redis_client: Any) -> None:
    a = RedisDuplicateIndex(redis_client, PREFIX, 4)
    b = RedisDuplicateIndex(redis_client, PREFIX, 4)
    a.add("http://a.test/article", fp(0xDEADBEEF), relevance=0.5)
    match = b.find(fp(0xDEADBEEF ^ 0b101, digest=1))
    assert match is not None and match.url == "http://a.test/article" and match.distance == 2
    assert RedisDuplicateIndex(redis_client, "other:crawl", 4).find(fp(0xDEADBEEF)) is None
    keys = {k.decode() for k in redis_client.keys("*")}
    assert all(k.startswith(("{fc:test:dup:b", "{fc:test:dup:e", "fc:test:dup:n")) for k in keys)
    assert len(b) == 1


def test_what_redis_holds_is_not_trusted(redis_client: Any) -> None:
    index = RedisDuplicateIndex(redis_client, PREFIX, 4)
    index.add("http://a.test/ok", fp(1 << 40))
    bucket = index._bucket(0, 1 << 40)
    # a torn record, a record pointing nowhere, and one whose page is not an http(s) URL
    redis_client.append(bucket, b"\x01\x02\x03")
    nowhere, bad_url = 0xABCDEF << 30 | 5, 0x123456 << 30 | 6
    for simhash, page_id in ((nowhere, 99), (bad_url, 7)):
        record = simhash.to_bytes(8, "little") + page_id.to_bytes(8, "little")
        redis_client.append(index._bucket(0, simhash), record)
    redis_client.hset(index._entries(7), "7", b"\x00" * 12 + b"javascript:alert(1)")
    assert index.find(fp(1 << 40)).url == "http://a.test/ok"  # type: ignore[union-attr]
    assert index.find(fp(nowhere, digest=1)) is None
    assert index.find(fp(bad_url, digest=1)) is None


def test_an_unreachable_redis_makes_every_page_new() -> None:
    import redis

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = redis.Redis(port=port, socket_connect_timeout=1)
    index = RedisDuplicateIndex(client, PREFIX, 4)
    assert index.find(fp(1)) is None
    assert not index.add("http://a.test/", fp(1))
    assert index.errors == 2
