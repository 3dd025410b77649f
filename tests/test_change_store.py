"""One contract suite for every ChangeStore backend (SQLite, and Redis on a real server)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.change.fingerprint import Fingerprints
from focuscrawl.change.store import (
    ChangeStore,
    StoreError,
    append_history,
    decode_history,
    open_store,
)
from focuscrawl.change.store_redis import RedisChangeStore
from focuscrawl.change.store_sqlite import SqliteChangeStore


def fp(body: str, etag: str = "") -> Fingerprints:
    return Fingerprints(
        size=len(body),
        body_hash=f"h-{body}",
        text_hash=f"t-{body}",
        etag=etag,
        doc_index={w: 1 for w in body.split()},
        simhash=len(body),
    )


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChangeStore]:
    if request.param == "sqlite":
        s: ChangeStore = SqliteChangeStore(str(tmp_path / "data" / "change.sqlite3"), max_history=5)
    elif request.param == "redis-cluster":  # records sharded by URL hash over 3 masters
        request.getfixturevalue("cluster_client")  # flushes every master before and after
        url = request.getfixturevalue("redis_cluster_url")
        s = RedisChangeStore(url, prefix="t", max_history=5, cluster=True)
    else:
        request.getfixturevalue("redis_client")  # flushes the db before and after
        s = RedisChangeStore(request.getfixturevalue("redis_url"), prefix="t", max_history=5)
    s.open()
    yield s
    s.close()


def test_record_and_get_round_trip(store: ChangeStore) -> None:
    assert store.get("http://a/") is None
    rec = store.record("http://a/", fp("one two", '"e1"'), "new", 100.0, {"depth": 1})
    assert rec.status == "new" and rec.last_fetched == 100.0
    got = store.get("http://a/")
    assert got is not None
    assert got.fingerprints == fp("one two", '"e1"')
    assert got.history == [(100.0, "new")]
    assert got.features == {"depth": 1}
    assert len(store) == 1


def test_unchanged_and_deleted_keep_the_last_fingerprints(store: ChangeStore) -> None:
    store.record("u", fp("v1"), "new", 1.0)
    store.record("u", None, "unchanged", 2.0)
    store.record("u", fp("ignored"), "deleted", 3.0)
    rec = store.get("u")
    assert rec is not None and rec.fingerprints == fp("v1")
    assert [s for _, s in rec.history] == ["new", "unchanged", "deleted"]
    assert rec.deleted and rec.last_changed == 3.0
    store.record("u", fp("v2"), "significant", 4.0)
    rec = store.get("u")
    assert rec is not None and rec.fingerprints == fp("v2") and not rec.deleted


def test_history_is_bounded_and_ordered(store: ChangeStore) -> None:
    for i in range(8):
        store.record("u", fp(f"v{i}"), "significant" if i % 2 else "insignificant", float(i))
    rec = store.get("u")
    assert rec is not None
    assert [t for t, _ in rec.history] == [3.0, 4.0, 5.0, 6.0, 7.0]


def test_features_merge(store: ChangeStore) -> None:
    store.record("u", fp("a"), "new", 1.0, {"depth": 2, "size": 10})
    store.record("u", fp("b"), "significant", 2.0, {"size": 20})
    rec = store.get("u")
    assert rec is not None and rec.features == {"depth": 2, "size": 20}


def test_records_lists_every_page(store: ChangeStore) -> None:
    urls = {f"http://h/{i}" for i in range(600)}
    for u in urls:
        store.record(u, fp(u), "new", 1.0)
    assert {r.url for r in store.records()} == urls
    assert len(store) == 600


def test_unknown_status_is_refused(store: ChangeStore) -> None:
    with pytest.raises(ValueError, match="unknown change status"):
        store.record("u", fp("a"), "weird", 1.0)
    assert store.get("u") is None


def test_reopen_keeps_data(store: ChangeStore) -> None:
    store.record("u", fp("a"), "new", 1.0)
    store.close()
    store.open()
    rec = store.get("u")
    assert rec is not None and rec.fingerprints == fp("a")


def test_history_codec_skips_garbage() -> None:
    text = append_history("1.000 n;junk;2.5 x;3.000 s", "4.000 u", 10)
    assert decode_history(text) == [(1.0, "new"), (3.0, "significant"), (4.0, "unchanged")]


# --- SQLite specifics: schema versions ------------------------------------------------------
def test_sqlite_upgrades_a_version_1_store(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE pages (url TEXT PRIMARY KEY, fp TEXT NOT NULL DEFAULT '', "
        "history TEXT NOT NULL DEFAULT '')"
    )
    db.execute("INSERT INTO pages VALUES (?, ?, ?)", ("u", '{"s": 3, "b": "x"}', "5.000 n"))
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    store = SqliteChangeStore(str(path))
    store.open()
    rec = store.get("u")
    assert rec is not None and rec.fingerprints is not None
    assert rec.fingerprints.size == 3 and rec.fingerprints.doc_index == {}
    assert rec.history == [(5.0, "new")]
    store.record("u", fp("b"), "significant", 6.0, {"depth": 1})
    assert store.get("u").features == {"depth": 1}  # type: ignore[union-attr]
    store.close()


def test_sqlite_refuses_newer_schema_and_foreign_files(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite3"
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StoreError, match="newer focuscrawl"):
        SqliteChangeStore(str(newer)).open()
    foreign = tmp_path / "foreign.sqlite3"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE other (x)")
    db.close()
    with pytest.raises(StoreError, match="not a change store"):
        SqliteChangeStore(str(foreign)).open()
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError):
        SqliteChangeStore(str(junk)).open()


def test_sqlite_unreadable_record_is_skipped_not_fatal(tmp_path: Path) -> None:
    store = SqliteChangeStore(str(tmp_path / "c.sqlite3"))
    store.open()
    store.record("u", fp("a"), "new", 1.0)
    store.db.execute("UPDATE pages SET fp = 'not json' WHERE url = 'u'")
    rec = store.get("u")
    assert rec is not None and rec.fingerprints is None and rec.history == [(1.0, "new")]
    store.close()


def test_store_requires_open(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not open"):
        SqliteChangeStore(str(tmp_path / "c.sqlite3")).get("u")


# --- Redis specifics: lost data, newer schema -------------------------------------------------
def test_redis_flushed_mid_recrawl_is_a_clear_error(redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    store = RedisChangeStore(redis_url, prefix="t")
    store.open()
    store.record("u", fp("a"), "new", 1.0)
    redis_client.flushdb()  # what a restart without persistence leaves
    with pytest.raises(StoreError, match="lost its data"):
        store.record("u", fp("b"), "significant", 2.0)
    store.close()


def test_redis_refuses_newer_schema(redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    redis_client.hset("t:meta", "schema", 99)
    with pytest.raises(StoreError, match="newer focuscrawl"):
        RedisChangeStore(redis_url, prefix="t").open()


def test_redis_unreachable_is_a_clear_error() -> None:
    from tests.conftest import free_port

    store = RedisChangeStore(f"redis://127.0.0.1:{free_port()}/0", retries=0)
    with pytest.raises(StoreError, match="cannot reach"):
        store.open()


def test_redis_key_schema_is_compact(redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    store = RedisChangeStore(redis_url, prefix="t")
    store.open()
    store.record("http://a/", fp("x"), "new", 1.0)
    keys = sorted(k.decode() for k in redis_client.keys("*"))
    assert keys == ["t:meta", "t:p:http://a/", "t:urls"]
    assert set(redis_client.hkeys("t:p:http://a/")) == {b"f", b"h"}
    store.close()


def test_open_store_chooses_backend(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("FOCUSCRAWL_REDIS_URL", raising=False)
    s = open_store({"FOCUSCRAWL_DATA_DIR": str(tmp_path)})
    assert isinstance(s, SqliteChangeStore) and s.path.startswith(str(tmp_path))
    assert isinstance(open_store({"REDIS_URL": redis_url}), RedisChangeStore)
    assert isinstance(
        open_store({"REDIS_URL": redis_url, "FOCUSCRAWL_CHANGE_STORE": "sqlite"}), SqliteChangeStore
    )
    with pytest.raises(StoreError, match="needs"):
        open_store({"FOCUSCRAWL_CHANGE_STORE": "redis"})


@pytest.mark.parametrize("persistent", [True, False])
def test_redis_restart_mid_recrawl(tmp_path: Path, persistent: bool) -> None:
    from tests.conftest import RedisServer

    server = RedisServer(tmp_path, appendonly=persistent)
    server.start()
    try:
        store = RedisChangeStore(server.url, prefix="t")
        store.open()
        store.record("u", fp("a"), "new", 1.0)
        server.stop()
        server.start()  # same port; with appendonly the data comes back
        if persistent:  # the client reconnects and the history goes on
            rec = store.record("u", fp("b"), "significant", 2.0)
            assert [s for _, s in rec.history] == ["new", "significant"]
        else:  # an empty server: a clear error, not a new history
            with pytest.raises(StoreError, match="lost its data"):
                store.record("u", fp("b"), "significant", 2.0)
        store.close()
    finally:
        server.stop()


def test_due_orders_by_policy(store: ChangeStore) -> None:
    for i in range(4):
        store.record(f"http://h/{i}", fp(str(i)), "new", float(i))
    store.record("http://h/3", fp("3b"), "significant", 10.0)
    assert store.due(20.0, 2, "uniform") == ["http://h/0", "http://h/1"]
    assert set(store.due(20.0, 0, "change-rate", period=1.0)) == {f"http://h/{i}" for i in range(4)}


def test_due_urls_from_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from focuscrawl.change.recrawl import due_urls

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("FOCUSCRAWL_REDIS_URL", raising=False)
    settings = {
        "FOCUSCRAWL_DATA_DIR": str(tmp_path),
        "FOCUSCRAWL_RECRAWL_BUDGET": 2,
        "FOCUSCRAWL_RECRAWL_POLICY": "uniform",
    }
    store = open_store(settings)
    store.open()
    for i in range(3):
        store.record(f"http://h/{i}", fp(str(i)), "new", float(i))
    store.close()
    assert due_urls(settings, now=10.0) == ["http://h/0", "http://h/1"]


# --- Redis: one round trip per page (shared connection, read hand-off, writes behind) ---------
def test_redis_one_round_trip_per_page(
    redis_client, redis_url: str, round_trips: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import focuscrawl.change.store_redis as store_redis

    monkeypatch.setattr(store_redis, "WRITE_DELAY", 1e9)  # counts must not depend on time
    middleware = RedisChangeStore(redis_url, prefix="t")  # what the conditional GET opens
    pipeline = RedisChangeStore(redis_url, prefix="t")  # what the change pipeline opens
    middleware.open()
    pipeline.open()
    urls = [f"http://h/{i}" for i in range(50)]
    before = round_trips[0]
    for cycle in range(2):  # a crawl, then a recrawl of the same pages
        for i, url in enumerate(urls):
            middleware.get(url)  # reads Redis, carrying the previous page's queued write
            old = pipeline.get(url)  # served from the hand-off
            assert (old is None) == (cycle == 0)
            rec = pipeline.record(url, fp(f"{url} v{cycle}"), "significant", 10.0 * cycle + i)
            assert len(rec.history) == cycle + 1  # computed from what was read
    assert round_trips[0] - before == 2 * len(urls)
    middleware.close()
    pipeline.close()  # the last queued visit goes out here
    assert round_trips[0] - before == 2 * len(urls) + 1
    for i, url in enumerate(urls):
        assert redis_client.hget(f"t:p:{url}", "h").decode() == f"{i:.3f} s;{10.0 + i:.3f} s"


def test_redis_written_record_matches_the_returned_one(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    store = RedisChangeStore(redis_url, prefix="t", max_history=5)
    store.open()
    returned = []
    for i in range(8):
        store.get("u")
        status = ["new", "unchanged", "significant", "insignificant", "deleted"][i % 5]
        feats = {"depth": i} if i % 2 else ({"size": i} if i % 3 else None)
        returned.append(store.record("u", fp(f"v{i}", f'"e{i}"'), status, 1.0 + i / 3, feats))
    store.flush()
    other = RedisChangeStore(redis_url, prefix="t", max_history=5)
    other.open()  # reopening clears the hand-off: this get reads Redis
    stored = other.get("u")
    assert stored == returned[-1]
    assert len(stored.history) == 5  # type: ignore[union-attr]
    other.close()
    store.close()


def test_redis_write_batch_goes_out_without_a_read(
    redis_client, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import focuscrawl.change.store_redis as store_redis

    monkeypatch.setattr(store_redis, "WRITE_BATCH", 3)
    monkeypatch.setattr(store_redis, "WRITE_DELAY", 1e9)
    store = RedisChangeStore(redis_url, prefix="t")
    store.open()
    for i in range(3):
        store.get(f"u{i}")
    store.record("u0", fp("a"), "new", 1.0)
    store.record("u1", fp("b"), "new", 1.0)
    assert redis_client.scard("t:urls") == 0  # queued
    store.record("u2", fp("c"), "new", 1.0)
    assert redis_client.scard("t:urls") == 3  # the third fills the batch
    store.close()


def test_redis_queued_visits_survive_an_outage_and_a_restart(tmp_path: Path) -> None:
    from tests.conftest import RedisServer

    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    try:
        store = RedisChangeStore(server.url, prefix="t", retries=0)
        store.open()
        store.get("u")
        store.record("u", fp("a"), "new", 1.0)  # queued
        server.stop()
        with pytest.raises(StoreError, match="unreachable"):
            store.get("v")  # would carry the queued visit: Redis is down, the visit stays
        server.start()  # same port, AOF on
        assert store.get("v") is None  # carries the queued visit now
        store.record("v", fp("b"), "new", 2.0)
        store.close()  # writes v
        store.open()
        assert [s for _, s in store.get("u").history] == ["new"]  # type: ignore[union-attr]
        assert store.get("v").fingerprints == fp("b")  # type: ignore[union-attr]
        store.close()
    finally:
        server.stop()


def test_redis_queued_visit_into_lost_data_is_a_clear_error(redis_client, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    store = RedisChangeStore(redis_url, prefix="t")
    store.open()
    store.get("u")
    store.record("u", fp("a"), "new", 1.0)  # queued
    redis_client.flushdb()
    with pytest.raises(StoreError, match="lost its data"):
        store.get("v")
    with pytest.raises(StoreError, match="lost its data"):  # and it stays refused
        store.get("v")
    store.close()
    store.open()  # reopening starts afresh
    assert store.get("u") is None
    store.close()


# --- Redis: the frontier reads the popped URL's record ahead, with its next pop ---------------
def _frontier_reading_ahead(redis_url: str) -> Any:
    from focuscrawl.change.store_redis import prefetch_command
    from focuscrawl.frontier.redis_frontier import RedisFrontier

    frontier = RedisFrontier(redis_url, "fx")
    frontier.pop_ahead = True
    frontier.prefetch = lambda url, wait: prefetch_command(redis_url, url, wait)
    frontier.open()
    for i, url in enumerate(["http://h/a", "http://h/b", "http://h/c"]):
        frontier.push(url, 1.0 - i / 10, bytes([i + 1]) * 8, {})
    return frontier


def test_redis_record_read_ahead_with_the_pop_needs_no_send(
    redis_client, redis_url: str, round_trips: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import focuscrawl.change.store_redis as store_redis

    monkeypatch.setattr(store_redis, "WRITE_DELAY", 1e9)
    writer = RedisChangeStore(redis_url, prefix="t")
    writer.open()
    writer.record("http://h/a", fp("old a", '"e1"'), "new", 1.0)
    writer.close()
    middleware = RedisChangeStore(redis_url, prefix="t")
    pipeline = RedisChangeStore(redis_url, prefix="t")
    middleware.open()
    pipeline.open()
    frontier = _frontier_reading_ahead(redis_url)
    for url in ["http://h/a", "http://h/b"]:
        entry = frontier.pop()
        assert entry is not None and entry.url == url
        before = round_trips[0]
        got = middleware.get(url)  # read with the pop: its reply is read, nothing sent
        assert pipeline.get(url) == got  # the hand-off, from memory too
        assert round_trips[0] == before
        if url == "http://h/a":
            assert got is not None and got.fingerprints == fp("old a", '"e1"')
            assert got.history == [(1.0, "new")]
        else:
            assert got is None
        rec = pipeline.record(url, fp(f"{url} v2"), "significant", 2.0)
        assert round_trips[0] == before  # written behind
        assert rec.history[-1] == (2.0, "significant")
        frontier.ack(entry.fingerprint)
    assert middleware.get("http://h/b") is not None  # served twice only: then read from Redis
    frontier.close()
    middleware.close()
    pipeline.close()
    assert redis_client.hget("t:p:http://h/a", "h").decode() == "1.000 n;2.000 s"


def test_redis_record_read_ahead_is_never_older_than_our_writes(
    redis_client, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import focuscrawl.change.store_redis as store_redis

    monkeypatch.setattr(store_redis, "WRITE_DELAY", 1e9)
    store = RedisChangeStore(redis_url, prefix="t")
    store.open()
    store.get("http://h/a")
    store.record("http://h/a", fp("a1"), "new", 1.0)  # queued, not written
    assert store_redis.prefetch_command(redis_url, "http://h/a", lambda: None) is None
    assert store_redis.prefetch_command("redis://elsewhere:1/0", "http://h/b", lambda: None) is None
    store.flush()
    frontier = _frontier_reading_ahead(redis_url)
    entry = frontier.pop()  # the record of http://h/a read ahead (history: 1 visit)
    assert entry is not None and entry.url == "http://h/a"
    store.record("http://h/a", fp("a2"), "significant", 2.0)  # written before the reply is read
    assert len(frontier) == 2  # reads the frontier's replies: the stale read ahead among them
    got = store.get("http://h/a")
    assert got is not None and got.history == [(1.0, "new"), (2.0, "significant")]
    frontier.close()
    store.close()
