"""The index writer thread: answers after the commit, fair turns, back-pressure, faults.

The writer's answers are handed to a queue here instead of the reactor (``deliver``), and the
test runs them: nothing waits on a clock, a blocking ``get`` waits for the thread's hand-over.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from focuscrawl.index import PageIndex
from focuscrawl.index.turns import TurnTimeout, WriteTurns
from focuscrawl.pipelines.index_writer import IndexWriter


class Handed:
    """The writer's ``deliver``: its hand-overs, run by the test as the reactor would."""

    def __init__(self) -> None:
        self.calls: queue.Queue[Callable[[], None]] = queue.Queue()

    def __call__(self, fn: Callable[[], None]) -> None:
        self.calls.put(fn)

    def run_one(self) -> None:
        self.calls.get(timeout=30)()


def upsert(n: int) -> Callable[[PageIndex], str]:
    def apply(index: PageIndex) -> str:
        index.upsert(f"http://t/{n}", f"Page {n}", f"words page{n}", relevance=0.5)
        return f"put {n}"

    return apply


def results(answers: list[Any]) -> list[Any]:
    out: list[Any] = []
    for a in answers:
        a.addBoth(out.append)
    return out


def writer(tmp_path: Path, **kw: Any) -> tuple[IndexWriter, Handed, PageIndex]:
    path = str(tmp_path / "index.sqlite")
    index = PageIndex.open(path)
    handed = Handed()
    turns = kw.pop("turns", None) or WriteTurns.beside(path, timeout=kw.pop("timeout", 30.0))
    w = IndexWriter(index, turns, deliver=handed, **kw)
    w.start()
    return w, handed, index


def test_answers_come_after_the_commit_in_order(tmp_path: Path) -> None:
    w, handed, index = writer(tmp_path, commit_every=3, commit_delay=30.0)
    got = results([w.submit(upsert(n)) for n in range(3)])
    handed.run_one()  # one batch of three: committed, then answered
    assert got == ["put 0", "put 1", "put 2"]
    reader = PageIndex.open(tmp_path / "index.sqlite", readonly=True)
    assert {p["url"] for p in reader.pages()} == {f"http://t/{n}" for n in range(3)}
    w.close()
    index.close()


def test_flush_writes_a_short_batch_without_waiting_for_the_delay(tmp_path: Path) -> None:
    """The crawl paused for the writer: no more updates come, so the batch is written now."""
    w, handed, index = writer(tmp_path, commit_every=8, commit_delay=3600.0)
    got = results([w.submit(upsert(n)) for n in range(2)])
    w.flush()
    handed.run_one()  # within the hand-over's 30 s timeout, not the hour's delay
    assert got == ["put 0", "put 1"]
    w.flush()  # nothing queued: no empty batch
    got = results([w.submit(upsert(2))])
    w.flush()
    handed.run_one()
    assert got == ["put 2"] and w.batches == 2
    w.close()
    index.close()


def test_a_bad_update_fails_alone(tmp_path: Path) -> None:
    w, handed, index = writer(tmp_path, commit_every=3, commit_delay=30.0)

    def broken(index: PageIndex) -> str:
        index.upsert("http://t/half", "half", "written then undone")
        raise ValueError("a bug in this item")

    got = results([w.submit(upsert(1)), w.submit(broken), w.submit(upsert(2))])
    handed.run_one()
    assert got[0] == "put 1" and got[2] == "put 2"
    assert got[1].check(ValueError)
    assert "http://t/half" not in index and "http://t/2" in index
    w.close()
    index.close()


def test_a_full_queue_holds_updates_back_in_order(tmp_path: Path) -> None:
    blocker = WriteTurns(str(tmp_path / "index.sqlite.turns"))
    blocker.take()  # another process's turn: the writer thread waits for it
    w, handed, index = writer(tmp_path, commit_every=1, commit_delay=0.0, queue_size=1)
    got = results([w.submit(upsert(n)) for n in range(5)])
    assert w.overflowed >= 3 and got == []
    blocker.release()
    while len(got) < 5:
        handed.run_one()
    assert got == [f"put {n}" for n in range(5)]
    w.close()
    index.close()
    blocker.close()


def test_a_turn_held_past_the_timeout_fails_the_batch_and_what_follows(tmp_path: Path) -> None:
    blocker = WriteTurns(str(tmp_path / "index.sqlite.turns"))
    blocker.take()
    faults: list[BaseException] = []

    def on_fault(exc: BaseException) -> BaseException:
        faults.append(exc)
        return RuntimeError("held")

    w, handed, index = writer(tmp_path, timeout=0.05, commit_every=1, on_fault=on_fault)
    got = results([w.submit(upsert(1))])
    handed.run_one()
    assert len(faults) == 1 and isinstance(faults[0], TurnTimeout)
    assert got[0].check(RuntimeError)
    later = results([w.submit(upsert(2))])  # failed at once: the index is not written again
    assert later[0].check(RuntimeError) and "http://t/2" not in index
    w.close()
    index.close()
    blocker.close()


def test_a_writer_that_takes_turns_back_to_back_does_not_starve_another(tmp_path: Path) -> None:
    path = str(tmp_path / "index.sqlite.turns")
    hog, other = WriteTurns(path), WriteTurns(path)
    turns = 0
    stop = threading.Event()
    hog_started = threading.Event()

    def hogging() -> None:
        nonlocal turns
        while not stop.is_set():
            hog.take()
            turns += 1
            hog_started.set()
            stop.wait(0.02)  # a 20 ms write transaction, then at once the next
            hog.release()

    thread = threading.Thread(target=hogging)
    thread.start()
    hog_started.wait(30)
    before = turns
    other.take()  # SQLite's busy wait would retry behind the hog's back-to-back turns
    during = turns - before
    other.release()
    stop.set()
    thread.join()
    hog.close()
    other.close()
    assert during <= 5, during  # the other writer gets the next turn or nearly
