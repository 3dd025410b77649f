from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.frontier.memory import MemoryFrontier
from tests.frontier_contract import FrontierContract, drain, fp, push


class TestMemoryFrontier(FrontierContract):
    @pytest.fixture
    def frontier(self) -> Iterator[MemoryFrontier]:
        f = MemoryFrontier()
        f.open()
        yield f
        f.close()


class TestJournaledFrontier(FrontierContract):
    @pytest.fixture
    def frontier(self, tmp_path: Path) -> Iterator[MemoryFrontier]:
        f = MemoryFrontier(str(tmp_path / "frontier.jsonl"))
        f.open()
        yield f
        f.close()


def test_journal_resumes_queue_seen_and_in_flight(tmp_path: Path) -> None:
    path = str(tmp_path / "frontier.jsonl")
    f = MemoryFrontier(path)
    f.open()
    for i in range(20):
        push(f, f"http://a.test/{i}", i / 100, depth=i)
    push(f, "http://a.test/3", 0.95)  # upgraded
    done = f.pop()
    assert done is not None and done.url == "http://a.test/3"
    f.ack(done.fingerprint)
    in_flight = f.pop()  # popped, never acked: the process dies now
    assert in_flight is not None and in_flight.url == "http://a.test/19"
    f.close()

    g = MemoryFrontier(path)
    g.open()
    assert len(g) == 19  # 18 queued + the in-flight one re-queued
    assert g.seen(fp("http://a.test/3"))
    assert push(g, "http://a.test/3", 1.0).value == "seen"
    urls = drain(g)
    assert urls[0] == "http://a.test/19"
    assert sorted(urls) == sorted(f"http://a.test/{i}" for i in range(20) if i != 3)
    entry_data_ok = g.seen(fp("http://a.test/0"))
    assert entry_data_ok
    g.close()


_CHILD = """
import hashlib, os, signal, sys
from focuscrawl.frontier.memory import MemoryFrontier
f = MemoryFrontier(sys.argv[1]); f.open()
for i in range(1000):
    u = f"http://h{i % 7}.test/{i}"
    f.push(u, (i * 37 % 1000) / 1000, hashlib.sha1(u.encode()).digest(), {"i": i})
popped = []
for _ in range(300):
    e = f.pop(); f.ack(e.fingerprint); popped.append(e.url)
e = f.pop()  # in flight at the kill
print("\\n".join(popped)); print("INFLIGHT " + e.url, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_sigkill_loses_and_repeats_nothing_but_in_flight(tmp_path: Path) -> None:
    path = str(tmp_path / "frontier.jsonl")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, path], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL
    lines = proc.stdout.split("\n")
    popped = [line for line in lines if line.startswith("http://")]
    in_flight = next(line.split()[1] for line in lines if line.startswith("INFLIGHT"))
    g = MemoryFrontier(path)
    g.open()
    rest = drain(g)
    g.close()
    assert len(popped) == 300
    assert not set(rest) & set(popped), "a fetched URL was queued again"
    assert in_flight in rest
    assert len(rest) + len(popped) == 1000
    assert os.path.getsize(path) > 0
