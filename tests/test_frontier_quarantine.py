"""Poison pages: an entry whose work killed its process twice (the work mark named it at both
deaths) is quarantined, not delivered a third time; a bystander of a death (in flight, not being
worked on) is not even counted. Journal (JOBDIR) and Redis leases; the crawls that really die
are in test_frontier_quarantine_crawl."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from focuscrawl.frontier.base import FrontierEntry, PushResult
from focuscrawl.frontier.journal import release_jobdir
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.quarantine import read_records, read_redis_quarantine
from focuscrawl.frontier.redis_frontier import RedisFrontier
from focuscrawl.frontier.workmark import MARK_FILE, WORKER_MARK, WorkMark, payload
from tests.frontier_contract import fp, push


def journaled(tmp_path: Path, after: int = 2) -> MemoryFrontier:
    f = MemoryFrontier(
        str(tmp_path / "frontier.jsonl"),
        quarantine_after=after,
        quarantine_path=str(tmp_path / "quarantine.jsonl"),
    )
    f.open()
    return f


def die(f: MemoryFrontier, working: FrontierEntry | None = None) -> None:
    """The process is killed (while working on ``working``, if given): no close(), only the
    writes it made are left (its JOBDIR lock goes with it)."""
    assert f._journal is not None and f.journal_path is not None
    mark = WorkMark(os.path.join(os.path.dirname(f.journal_path), MARK_FILE))
    mark.open()
    mark.mark(working.fingerprint if working is not None else None)
    f._journal.close()
    f._journal = None
    release_jobdir(os.path.dirname(f.journal_path))


def test_a_page_in_flight_at_two_deaths_is_quarantined(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    push(f, "http://a.test/poison", 0.9)
    push(f, "http://a.test/ok", 0.5)
    first = f.pop()
    assert first is not None and first.url == "http://a.test/poison" and first.attempts == 0
    die(f, first)

    g = journaled(tmp_path)
    assert g.quarantined == [] and g.redelivered == 1 and len(g) == 2
    again = g.pop()
    assert again is not None and again.url == "http://a.test/poison" and again.attempts == 1
    die(g, again)

    h = journaled(tmp_path)
    assert [(r.url, r.attempts) for r in h.quarantined] == [("http://a.test/poison", 2)]
    assert len(h) == 1 and h.seen(fp("http://a.test/poison"))
    assert push(h, "http://a.test/poison", 0.99) is PushResult.SEEN  # a link found again
    forced = h.push("http://a.test/poison", 0.99, fp("http://a.test/poison"), {}, force=True)
    assert forced is PushResult.SEEN  # not even dont_filter brings it back
    ok = h.pop()
    assert ok is not None and ok.url == "http://a.test/ok"
    h.ack(ok.fingerprint)
    h.close()

    (record,) = read_records(str(tmp_path / "quarantine.jsonl"))
    assert (record.url, record.attempts, record.fingerprint) == (
        "http://a.test/poison",
        2,
        fp("http://a.test/poison").hex(),
    )
    k = journaled(tmp_path)  # later resumes: still quarantined, not recorded again
    assert k.quarantined == [] and len(k) == 0 and k.pop() is None
    assert push(k, "http://a.test/poison", 0.99) is PushResult.SEEN
    k.close()
    assert len((tmp_path / "quarantine.jsonl").read_text().splitlines()) == 1


def test_bystanders_of_a_death_are_not_counted(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    for url, score in (
        ("http://a.test/p", 0.9),
        ("http://b.test/x", 0.8),
        ("http://c.test/y", 0.1),
    ):
        push(f, url, score)
    poison, bystander = f.pop(), f.pop()
    assert poison is not None and bystander is not None
    die(f, poison)  # both in flight, a.test/p being worked on

    g = journaled(tmp_path)
    assert g.redelivered == 2
    got = [g.pop(), g.pop()]
    assert [(e.url, e.attempts) for e in got if e] == [
        ("http://a.test/p", 1),
        ("http://b.test/x", 0),
    ]
    die(g, got[0])  # a.test/p kills the process again; b.test/x dies with it, uncounted

    h = journaled(tmp_path)
    assert [r.url for r in h.quarantined] == ["http://a.test/p"]
    got2 = {}
    while (entry := h.pop()) is not None:
        got2[entry.url] = entry.attempts
        h.ack(entry.fingerprint)
    assert got2 == {"http://b.test/x": 0, "http://c.test/y": 0}


def test_a_death_between_pages_blames_nobody(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    for n in range(3):
        push(f, f"http://{n}.test/", 0.5)
    assert all(f.pop() is not None for _ in range(3))
    die(f)  # SIGKILL while downloading: the slot is empty
    g = journaled(tmp_path)
    assert g.redelivered == 3 and g._attempts == {} and g.quarantined == []
    assert all(g.pop() is not None for _ in range(3))
    die(g)  # no file at all (a crawl of an older version): nobody blamed either
    os.unlink(tmp_path / MARK_FILE)
    h = journaled(tmp_path)
    assert h.redelivered == 3 and h._attempts == {}
    h.close()
    assert not (tmp_path / MARK_FILE).exists() or (tmp_path / MARK_FILE).read_bytes()[0] == 0


def test_one_suspect_in_flight_at_a_time(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    push(f, "http://a.test/p", 0.9)
    push(f, "http://b.test/q", 0.8)
    push(f, "http://c.test/y", 0.1)
    p = f.pop()
    die(f, p)
    g = journaled(tmp_path)
    assert g.pop() is not None
    g.pop()  # held back: a.test/p is a suspect in flight
    q = g.pop()
    assert q is not None and q.url == "http://c.test/y"
    g.ack(q.fingerprint)
    g.close()
    g = journaled(tmp_path)
    assert g.pop() is not None
    q = g.pop()
    assert q is not None and q.url == "http://b.test/q"
    die(g, q)  # two suspects now, from two deaths
    h = journaled(tmp_path)
    suspect = h.pop()
    assert suspect is not None and suspect.attempts == 1
    # the other suspect waits while this one is in flight, as a busy host would
    assert h.pop() is None and len(h) == 1
    h.ack(suspect.fingerprint)
    other = h.pop()
    assert other is not None and other.attempts == 1
    h.close()


def test_the_next_suspect_goes_once_the_first_is_acknowledged(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    push(f, "http://a.test/1", 0.9)
    push(f, "http://b.test/2", 0.8)
    a = f.pop()
    die(f, a)
    g = journaled(tmp_path)
    assert g.pop() is not None
    b = g.pop()
    assert b is not None and b.url == "http://b.test/2"
    die(g, b)
    g = journaled(tmp_path)
    one = g.pop()
    assert one is not None and g.pop() is None
    g.ack(one.fingerprint)
    two = g.pop()
    assert two is not None and two.attempts == 1
    g.ack(two.fingerprint)
    g.close()
    h = journaled(tmp_path)  # acknowledged: their counts are gone
    assert len(h) == 0 and h.redelivered == 0 and h._attempts == {}


def test_a_graceful_close_is_not_an_attempt(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    push(f, "http://a.test/1", 0.9)
    assert f.pop() is not None
    f.close()  # CLOSESPIDER_*, a shutdown: the request was cancelled, not processed
    g = journaled(tmp_path)
    entry = g.pop()
    assert entry is not None and entry.attempts == 0 and g.redelivered == 0
    die(g, entry)
    h = journaled(tmp_path)
    entry = h.pop()
    assert entry is not None and entry.attempts == 1 and h.quarantined == []


def test_attempts_survive_compaction_and_quarantine_can_be_off(tmp_path: Path) -> None:
    f = journaled(tmp_path, after=0)
    push(f, "http://a.test/1", 0.9)
    for attempts in range(4):
        entry = f.pop()
        assert entry is not None and entry.attempts == attempts
        die(f, entry)
        f = journaled(tmp_path, after=0)
    records = [json.loads(line) for line in (tmp_path / "frontier.jsonl").read_text().split()]
    assert {"c": [int.from_bytes(fp("http://a.test/1")[:8], "big"), 4]} in records
    f.close()


# -- Redis ------------------------------------------------------------------------------------
PREFIX = "fcq:topical"


def redis_frontier(url: str, lease: float = 300.0, mark_dir: Path | None = None) -> RedisFrontier:
    f = RedisFrontier(url, PREFIX, lease=lease, capacity=10_000, quarantine_after=2)
    f.mark_dir = str(mark_dir) if mark_dir else None
    f.open()
    return f


def dead_mark(directory: Path, entry: FrontierEntry) -> None:
    """A worker died working on ``entry``: its work mark is left, under a dead pid."""
    child = subprocess.Popen(["true"])
    child.wait()
    mark = WorkMark(str(directory / WORKER_MARK.format(pid=child.pid)))
    mark.open()
    mark.mark(payload(entry.fingerprint, "a.test"))


def expire_all(client) -> None:  # type: ignore[no-untyped-def]
    for member in client.zrange(f"{PREFIX}:lease", 0, -1):
        client.zadd(f"{PREFIX}:lease", {member: 0})


def test_redis_page_that_killed_two_workers_is_quarantined(  # type: ignore[no-untyped-def]
    redis_url: str, redis_client, capsys, tmp_path: Path
) -> None:
    worker = redis_frontier(redis_url)
    push(worker, "http://a.test/poison", 0.9, meta={"focuscrawl": {"d": 2}})
    push(worker, "http://a.test/ok", 0.5)
    first = worker.pop()
    assert first is not None and first.attempts == 0  # the worker dies working on it
    dead_mark(tmp_path, first)
    other = redis_frontier(redis_url, mark_dir=tmp_path)  # claims the mark: its lease is due
    assert not list(tmp_path.glob("working-*"))
    assert other.requeue_expired(force=True) == 1 and other.quarantined == []
    again = other.pop()
    assert again is not None and again.url == "http://a.test/poison" and again.attempts == 1
    assert again.data == {"meta": {"focuscrawl": {"d": 2}}}  # the entry is intact
    dead_mark(tmp_path, again)  # the second worker dies working on it too
    third = redis_frontier(redis_url, mark_dir=tmp_path)
    assert third.requeue_expired(force=True) == 0
    assert [(r.url, r.attempts) for r in third.quarantined] == [("http://a.test/poison", 2)]
    assert push(third, "http://a.test/poison", 0.99) is PushResult.SEEN
    forced = third.push("http://a.test/poison", 0.99, fp("http://a.test/poison"), {}, force=True)
    assert forced is PushResult.SEEN
    ok = third.pop()
    assert ok is not None and ok.url == "http://a.test/ok"
    third.ack(ok.fingerprint)
    assert third.pop() is None and len(third) == 0 and third.in_flight() == 0
    (record,) = read_redis_quarantine(redis_client, PREFIX)
    assert (record.url, record.attempts) == ("http://a.test/poison", 2)
    assert redis_client.hget(f"{PREFIX}:stats", "quarantine/urls") == b"1"
    third.close()
    # `focuscrawl status` lists it
    from focuscrawl.cli import main

    assert main(["status", "--redis-url", redis_url, "--prefix", PREFIX]) == 0
    out = capsys.readouterr().out
    assert "quarantined 1" in out and "after 2 attempts: http://a.test/poison" in out


def test_redis_worker_holds_one_suspect_at_a_time(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    dead = redis_frontier(redis_url)
    push(dead, "http://a.test/p", 0.9)
    push(dead, "http://b.test/x", 0.8)
    push(dead, "http://c.test/y", 0.1)
    p, x = dead.pop(), dead.pop()
    assert p is not None and x is not None
    worker = redis_frontier(redis_url)
    for entry in (p, x):  # two dead workers' marks named them
        worker.blame(entry.fingerprint)
    worker.pop_ahead = True  # as in a crawl: the pop sent ahead must not take a second suspect
    assert worker.requeue_expired(force=True) == 2
    suspect = worker.pop()
    assert suspect is not None and (suspect.url, suspect.attempts) == ("http://a.test/p", 1)
    fresh = worker.pop()
    assert fresh is not None and (fresh.url, fresh.attempts) == ("http://c.test/y", 0)
    assert worker.pop() is None and len(worker) == 1
    worker.ack(suspect.fingerprint)
    worker.ack(fresh.fingerprint)
    last = worker.pop()
    assert last is not None and (last.url, last.attempts) == ("http://b.test/x", 1)
    worker.ack(last.fingerprint)
    worker.close()
    assert read_redis_quarantine(redis_client, PREFIX) == []


@pytest.mark.parametrize("after", [0, 3])
def test_redis_quarantine_threshold(redis_url: str, redis_client, after: int) -> None:  # type: ignore[no-untyped-def]
    quarantined = []
    for attempts in range(3):  # a new worker each time: the last one died with the entry
        f = RedisFrontier(redis_url, PREFIX, capacity=10_000, quarantine_after=after)
        f.open()
        if attempts == 0:
            push(f, "http://a.test/1", 0.9)
        entry = f.pop()
        assert entry is not None and entry.attempts == attempts
        f.blame(entry.fingerprint)  # its worker died working on it
        f.requeue_expired(force=True)
        quarantined += f.quarantined
    assert len(quarantined) == (1 if after == 3 else 0)
    assert (len(f) == 0) == (after == 3)


def test_redis_attempts_survive_a_priority_upgrade(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    """A link found again with a better score queues the finder's copy: it keeps the count."""
    dead = redis_frontier(redis_url)
    push(dead, "http://a.test/p", 0.5)
    gone = dead.pop()
    assert gone is not None
    worker = redis_frontier(redis_url)
    worker.blame(gone.fingerprint)
    worker.requeue_expired(force=True)
    assert push(worker, "http://a.test/p", 0.9, meta={"new": 1}) is PushResult.UPGRADED
    entry = worker.pop()
    assert entry is not None and (entry.score, entry.attempts) == (0.9, 1)
    assert entry.data == {"meta": {"new": 1}}
    worker.ack(entry.fingerprint)
    assert redis_client.hlen(f"{PREFIX}:attempts") == 0  # acknowledged: forgotten
    worker.close()


def test_journal_attempts_survive_a_priority_upgrade(tmp_path: Path) -> None:
    f = journaled(tmp_path)
    push(f, "http://a.test/p", 0.5)
    entry = f.pop()
    die(f, entry)
    g = journaled(tmp_path)
    assert push(g, "http://a.test/p", 0.9) is PushResult.UPGRADED
    entry = g.pop()
    assert entry is not None and (entry.score, entry.attempts) == (0.9, 1)
    g.close()


def test_redis_bystanders_of_a_dead_worker_are_not_counted(  # type: ignore[no-untyped-def]
    redis_url: str, redis_client, tmp_path: Path
) -> None:
    dead = redis_frontier(redis_url)
    push(dead, "http://a.test/p", 0.9)
    push(dead, "http://b.test/x", 0.8)
    poison, bystander = dead.pop(), dead.pop()
    assert poison is not None and bystander is not None
    dead_mark(tmp_path, poison)
    expire_all(redis_client)  # both leases expired before anyone came back
    worker = redis_frontier(redis_url, mark_dir=tmp_path)
    assert worker.requeue_expired(force=True) == 2
    got = {}
    while (entry := worker.pop()) is not None:
        got[entry.url] = entry.attempts
        worker.ack(entry.fingerprint)
    assert got == {"http://a.test/p": 1, "http://b.test/x": 0}
    assert redis_client.hlen(f"{PREFIX}:guilty") == 0  # acknowledged: forgotten
    # a worker whose lease expired without any mark (SIGKILL while downloading): nobody blamed
    push(worker, "http://c.test/y", 0.5)
    assert worker.pop() is not None
    expire_all(redis_client)
    assert worker.requeue_expired(force=True) == 1
    again = worker.pop()
    assert again is not None and again.attempts == 0
    worker.ack(again.fingerprint)
    worker.close()
