"""The SQLite change store's writer thread: visits written off the reactor, answered after.

As in tests/test_index_writer.py, the writer's hand-overs go to a queue the test runs."""

from __future__ import annotations

from pathlib import Path

from focuscrawl.change.store_sqlite import SqliteChangeStore
from focuscrawl.index.turns import WriteTurns
from focuscrawl.pipelines.change_writer import ChangeWriter
from tests.test_index_writer import Handed, results


def opened(tmp_path: Path, timeout: float = 30.0) -> SqliteChangeStore:
    store = SqliteChangeStore(str(tmp_path / "change.sqlite3"), busy_timeout=timeout)
    store.open()  # the reactor's connection (reads)
    return store


def visit(n: int):  # type: ignore[no-untyped-def]
    return lambda store: store.record(f"http://t/{n}", None, "new", 1000.0 + n)


def test_visits_are_written_by_the_thread_and_answered_after(tmp_path: Path) -> None:
    store = opened(tmp_path)
    handed = Handed()
    writer = ChangeWriter(store, deliver=handed, commit_every=2, commit_delay=30.0)
    writer.start()
    got = results([writer.submit(visit(1)), writer.submit(visit(2))])
    handed.run_one()
    assert [r.url for r in got] == ["http://t/1", "http://t/2"]
    assert store.get("http://t/2") is not None  # the reactor's connection reads it
    writer.close()
    store.close()


def test_another_process_holding_the_turn_fails_the_visits_not_the_reactor(
    tmp_path: Path,
) -> None:
    store = opened(tmp_path, timeout=0.05)
    blocker = WriteTurns(str(tmp_path / "change.sqlite3.turns"))
    blocker.take()
    faults: list[BaseException] = []

    def on_fault(exc: BaseException) -> BaseException:
        faults.append(exc)
        return RuntimeError("held back")

    handed = Handed()
    writer = ChangeWriter(store, deliver=handed, commit_every=1, on_fault=on_fault)
    writer.start()
    got = results([writer.submit(visit(1))])
    handed.run_one()
    assert got[0].check(RuntimeError) and len(faults) == 1
    assert store.get("http://t/1") is None
    writer.close()
    blocker.close()
    store.close()


def test_the_next_item_of_a_url_waits_for_its_queued_visit(tmp_path: Path) -> None:
    from focuscrawl.pipelines.settle import Answer
    from tests.test_change_pipeline import TEXT, html, item, make

    crawler, pipe = make(tmp_path, FOCUSCRAWL_CHANGE_WRITER_THREAD=True)
    assert pipe.writer is not None
    handed = Handed()
    pipe.writer._deliver = handed  # the reactor's hand-overs, run by the test
    first = pipe.process_item(item(html(TEXT), at=1.0), crawler.spider)
    assert first.change == "new"  # its visit queued for the thread
    second = pipe.process_item(item(html(TEXT), at=2.0), crawler.spider)
    assert isinstance(second, Answer)  # read only after the first visit is written
    out = results([second.deferred])
    handed.run_one()
    assert out and out[0].change == "unchanged"
    pipe.close_spider(crawler.spider)
