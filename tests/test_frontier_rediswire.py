"""The Redis wire layer on its own (focuscrawl.frontier.rediswire), against a real redis-server:
the scripts as shipped, their replies decoded by name, NOSCRIPT reloads, the pop sent ahead."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from focuscrawl.frontier.base import PushResult, never_busy
from focuscrawl.frontier.rediswire import (
    SCRIPTS,
    Pipeline,
    PopKind,
    PopReply,
    QueueShard,
    RequeueReply,
    push_result,
)

# the SHA1s the scripts had as Python strings (frontier/redis_scripts.py): moving them to .lua
# files must not change a byte, or workers of two versions would run different scripts
PINNED = {
    "push": "350ffe75da2dcd04f450caa528f5f6d1c661a7e4",
    "pushmany": "3400e93dacfdae630c3a43a3c7dc8293ed463c8f",
    "pop": "3e3b1c232925f10a8156ca6eb59284592e4c4c32",
    "popbest": "b721b0fe3c5d00781d85f3c2ebae77b04dfec450",
    "ack": "4dfc79a728be41c2b0b4fcf6e7585a7ed0d8d0ca",
    "pushack": "3187ff2304c1f1311411b00d9b9cbab990e9fa05",
    "renew": "02a3608fef00795db6d208f67f657dc28c821af1",
    "requeue": "e1e34b4cdb79754fc599938ee031da8e5252ccc6",
    "release": "97e97ba3e427bed1f69d0268722eaa8cfa8e0a35",
    "seen": "973bc5b4d6dd6b2e02dd5002eef0e8eae287986c",
    "count": "d02f5c1b1f5dcd0e1e8004314d2eb254a06ed766",
    "blame": "46a9cc0fbef1084daed3b94b0c944811128ff48d",
}


def fp(url: str) -> bytes:
    return hashlib.sha1(url.encode()).digest()


@pytest.fixture
def shard(redis_url: str, redis_client: Any) -> Iterator[QueueShard]:
    s = QueueShard(redis_url, "fcwire:t")
    s.open()
    yield s
    s.close()


def test_the_scripts_are_the_shipped_files_with_their_sha1s() -> None:
    assert {name: script.sha for name, script in SCRIPTS.items()} == PINNED
    for script in SCRIPTS.values():
        assert hashlib.sha1(script.text.encode()).hexdigest() == script.sha
        assert script.text.startswith("local P = ARGV[1]")  # the prelude in front


def test_pop_replies_are_decoded_by_name(shard: QueueShard) -> None:
    assert push_result(b"added") is PushResult.ADDED
    assert shard.push("http://a.test/1", 0.9, fp("http://a.test/1"), {}) is PushResult.ADDED
    assert shard.push("http://b.test/1", 0.5, fp("http://b.test/1"), {}) is PushResult.ADDED

    # nothing said about a.test: the script asks
    ask = PopReply.decode(shard.run("popbest", shard.ask_args(never_busy, [], {})))
    assert ask.kind is PopKind.ASK and ask.hosts == ["a.test", "b.test"]

    # a.test busy, b.test free: b.test's entry, with the top hosts after the pop
    known = {"a.test": True, "b.test": False}
    got = PopReply.decode(shard.run("popbest", shard.ask_args(never_busy, [], known)))
    assert got.kind is PopKind.ENTRY and got.is_entry
    assert got.host == "b.test" and got.hosts == ["a.test"]
    assert got.fp8 == fp("http://b.test/1")[:8]
    entry = shard.entry_of(got)
    assert entry is not None and entry.url == "http://b.test/1" and entry.score == 0.5

    # every host with entries busy: nothing
    none = PopReply.decode(shard.run("popbest", shard.ask_args(never_busy, [], {"a.test": True})))
    assert none.kind is PopKind.NOTHING and not none.is_entry


def test_requeue_replies_are_decoded_by_name(shard: QueueShard, redis_client: Any) -> None:
    shard.push("http://a.test/1", 0.9, fp("http://a.test/1"), {})
    entry = shard.pop_now(never_busy)
    assert entry is not None
    reply = RequeueReply(shard.wire.call(shard.requeue_command()))
    assert (reply.due, reply.moved, reply.quarantined) == (0, 0, [])
    assert 0 < reply.wait <= shard.lease  # the lease just taken expires then
    redis_client.zadd("fcwire:t:lease", {entry.fingerprint[:8]: 0})  # expired
    reply = RequeueReply(shard.wire.call(shard.requeue_command()))
    assert (reply.due, reply.moved, reply.wait) == (1, 1, -1.0)


def test_a_redis_that_lost_the_scripts_gets_them_again(
    shard: QueueShard, redis_client: Any
) -> None:
    """A restarted Redis answers NOSCRIPT: every script is loaded and the commands run again,
    in order, on the same connection, the callers none the wiser."""
    got: list[Any] = []
    shard.push("http://a.test/1", 0.9, fp("http://a.test/1"), {})
    redis_client.script_flush()
    item = ("http://a.test/2", 0.8, fp("http://a.test/2"), {})
    shard.wire.queue(shard.pushack_commands([item], []), got.extend)  # sent with the next
    assert shard.seen(fp("http://a.test/1"))  # NOSCRIPT twice, reloaded once, both run
    assert got == [[b"added"]]
    assert all(redis_client.script_exists(*PINNED.values()))


def test_the_pop_sent_ahead_goes_with_what_is_queued_and_is_read_later(
    shard: QueueShard, round_trips: list[int]
) -> None:
    for i in range(3):
        shard.push(f"http://h{i}.test/", 0.9 - i / 10, fp(f"http://h{i}.test/"), {})
    assert shard.take_ahead() is None  # nothing sent ahead
    pushed: list[Any] = []
    item = ("http://new.test/", 0.1, fp("http://new.test/"), {})
    shard.push_many([item], on_results=pushed.extend)  # queued: not sent
    before, waits = round_trips[0], shard.waits
    shard.put_top_host("h0.test")
    shard.send_pop_ahead(never_busy)
    assert round_trips[0] == before + 1 and shard.waits == waits  # one send, no wait
    assert shard.ahead.sent and shard.ahead.reply is None and pushed == []
    assert len(shard) == 4  # that call read every reply: 3 queued + the one popped ahead
    assert pushed == [PushResult.ADDED] and shard.ahead.entry is not None
    reply = shard.take_ahead()
    assert reply is not None and reply.kind is PopKind.ENTRY and reply.host == "h0.test"
    assert not shard.ahead.sent and shard.take_ahead() is None
    entry = shard.entry_of(reply)
    assert entry is not None
    shard.lease_taken(entry)
    assert shard.held_here() == 1 and shard.leased_elsewhere() == 0


def test_a_pipeline_hands_replies_over_in_order(redis_url: str, redis_client: Any) -> None:
    wire = Pipeline(redis_url, SCRIPTS)
    with pytest.raises(RuntimeError, match="before open"):
        wire.call(("PING",))
    wire.connect()
    try:
        seen: list[Any] = []
        batch = wire.queue([("SET", "fcwire:k", "1"), ("INCR", "fcwire:k")], seen.append)
        assert wire.queued and not batch.sent
        wire.execute([("INCR", "fcwire:k")], seen.append)  # sent, not waited for
        assert batch.sent and seen == []
        assert wire.call(("GET", "fcwire:k")) == b"3"  # after both, their replies first
        assert seen == [[b"OK", 2], [3]] and not wire.pending
    finally:
        wire.close()


def test_a_command_refused_while_its_slot_moves_goes_again_to_the_node_serving_it(
    redis_url: str, redis_client: Any
) -> None:
    # a worker (re)starting during a live reshard: its shard's first command met MOVED (the
    # chaos slice saw a worker die of it at open); the node serving the slot now is asked
    # for, as after a failover, and the command runs there
    import redis

    wire = Pipeline(redis_url.replace("127.0.0.1", "localhost"), SCRIPTS)
    wire.connect()
    wire.relocate = lambda: redis_url  # "the slot's master now"
    calls: list[str] = []

    def hsetnx() -> int:
        calls.append(wire.url)
        if len(calls) == 1:
            raise redis.exceptions.MovedError("5709 127.0.0.1:1")
        return int(wire.client.hsetnx("fcwire:meta", "epoch", 7))

    try:
        assert wire.retry(hsetnx) == 1
        assert calls == [redis_url.replace("127.0.0.1", "localhost"), redis_url]
        assert redis_client.hget("fcwire:meta", "epoch") == b"7"
    finally:
        wire.close()
        redis_client.delete("fcwire:meta")


def test_the_frontiers_reach_into_no_other_objects_private_fields() -> None:
    """Both Redis frontiers (and the wire layer's modules) use each other's public API only:
    ``x._name`` only on ``self`` or ``cls``."""
    import ast
    from pathlib import Path

    frontier = Path(__file__).resolve().parent.parent / "focuscrawl" / "frontier"
    paths = [frontier / "redis_frontier.py", frontier / "redis_shards.py"]
    paths += sorted((frontier / "rediswire").glob("*.py"))
    reaches = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                reaches.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert reaches == []
    assert not (frontier / "redis.py").exists()  # no module named after the library it imports
