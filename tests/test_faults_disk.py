"""A full disk or a read-only data dir: a clear error, a clean stop, no corrupted store.

The crawls run on a small tmpfs the test mounts (``mount -t tmpfs -o size=…``): they need root,
and are skipped with a message otherwise (CI runs as root). The journal's own checks run
anywhere, with ``os.write`` made to fail the way a filling disk does.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.change.store import StoreError
from focuscrawl.change.store_sqlite import SqliteChangeStore
from focuscrawl.faults import storage_fault
from focuscrawl.frontier import journal as journal_module
from focuscrawl.frontier.journal import JournalBroken
from focuscrawl.frontier.memory import MemoryFrontier
from tests.fault_crawl import (
    BFS,
    CrawlFacts,
    CrawlProcess,
    comparable,
    crawl_args,
    crawl_facts,
    topic_file,
)
from tests.frontier_contract import fp


def journaled(path: Path) -> MemoryFrontier:
    f = MemoryFrontier(str(path / "frontier.jsonl"), quarantine_after=2)
    f.open()
    return f


def journal_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "frontier.jsonl").read_bytes().splitlines()]


def test_a_short_write_leaves_no_partial_record_and_no_later_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = journaled(tmp_path)
    f.push("http://a.test/1", 0.9, fp("1"), {})
    f.push("http://a.test/3", 0.1, fp("3"), {})
    first = f.pop()
    assert first is not None and first.url == "http://a.test/1"
    real_write = os.write
    calls = []

    def filling_disk(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[: len(data) // 2])  # a short write…
        raise OSError(errno.ENOSPC, "No space left on device")  # …then the disk is full

    monkeypatch.setattr(journal_module.os, "write", filling_disk)
    with pytest.raises(OSError) as raised:
        f.push("http://a.test/2", 0.8, fp("2"), {"meta": {"x": "y" * 100}})
    assert storage_fault(raised.value) == "full"
    assert len(f) == 1 and not f.seen(fp("2"))  # the memory did not change
    monkeypatch.setattr(journal_module.os, "write", real_write)  # space again, but:
    with pytest.raises(JournalBroken):  # no record after a lost one (a page's ack after its links)
        f.ack(first.fingerprint)
    with pytest.raises(JournalBroken):
        f.pop()
    assert len(f) == 1  # the pop changed nothing either
    f.close()  # the graceful close still writes its release record for /1
    records = journal_records(tmp_path)  # every line whole: the partial record was cut off
    assert [r["p"][0] for r in records if "p" in r] == ["http://a.test/1", "http://a.test/3"]
    g = journaled(tmp_path)
    assert [g.pop().url, g.pop().url] == ["http://a.test/1", "http://a.test/3"]  # type: ignore[union-attr]
    assert g.redelivered == 0
    g.close()


def test_a_failed_pop_or_ack_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = journaled(tmp_path)
    f.push("http://a.test/1", 0.9, fp("1"), {})
    f.push("http://a.test/2", 0.5, fp("2"), {})
    first = f.pop()
    assert first is not None
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", full)
    with pytest.raises(OSError):
        f.pop()
    with pytest.raises(OSError):
        f.ack(first.fingerprint)
    monkeypatch.setattr(journal_module.os, "write", real_write)
    assert len(f) == 1  # /2 still queued
    f.close()  # /1 still in flight: released, using the reserve's room
    g = journaled(tmp_path)
    assert {g.pop().url, g.pop().url} == {"http://a.test/1", "http://a.test/2"}  # type: ignore[union-attr]
    assert g.redelivered == 0  # released by the close, not counted as a death
    g.close()


# --- on a real filesystem that fills up (root: a tmpfs) --------------------------------------
@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs the suite as root)")
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def remount(path: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(path)], check=True)


def fill(path: Path, leave: int = 0) -> Path:
    """Fill the filesystem of ``path`` with a filler file, then give back ``leave`` bytes."""
    filler = path / "filler"
    chunk = b"\0" * 65536
    # the file is closed inside the suppression: a partly written chunk left in the buffer
    # fails its last flush at close with ENOSPC too
    with contextlib.suppress(OSError), filler.open("wb") as fh:
        while True:
            fh.write(chunk)
            fh.flush()
    if leave:
        filler.truncate(max(0, filler.stat().st_size - leave))
    return filler


def test_sqlite_change_store_on_a_full_disk_raises_a_store_error(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "1m") as disk:
        store = SqliteChangeStore(str(disk / "change.sqlite3"))
        store.open()
        store.record("http://a.test/0", None, "new", 1.0)
        fill(disk)
        with pytest.raises(StoreError) as raised:
            for n in range(1, 2000):  # until the WAL cannot grow
                store.record(f"http://a.test/{n}", None, "new", 1.0, {"pad": "x" * 2000})
        assert storage_fault(raised.value.__cause__) == "full"  # type: ignore[arg-type]
        store.close()
        (disk / "filler").unlink()
        db = sqlite3.connect(disk / "change.sqlite3")
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()


def test_spider_state_on_a_full_disk_keeps_the_previous_one(tmp_path: Path) -> None:
    """Scrapy's SpiderState cut spider.state on a full disk (a traceback, and a resume that
    cannot unpickle it); focuscrawl's writes it whole or not at all."""
    from scrapy import Spider

    from focuscrawl.extensions.spiderstate import SpiderState

    with tmpfs(tmp_path / "disk", "1m") as disk:
        ext = SpiderState(str(disk))
        spider = Spider("s")
        spider.state = {"seen": 1}  # type: ignore[attr-defined]
        ext.spider_closed(spider)
        fill(disk)
        spider.state = {"seen": 2, "pad": "x" * 200_000}  # type: ignore[attr-defined]
        ext.spider_closed(spider)  # ENOSPC: logged, not raised
        assert not (disk / "spider.state.tmp").exists()
        again = Spider("s")
        ext.spider_opened(again)
        assert again.state == {"seen": 1}  # type: ignore[attr-defined]


@pytest.mark.slow
def test_disk_full_stops_the_crawl_cleanly_and_it_resumes(
    fault_web: Any, fault_reference: CrawlFacts, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        topic = topic_file(tmp_path, fault_web)
        stores = ["-s", f"JOBDIR={disk / 'job'}", "-s", f"FOCUSCRAWL_DATA_DIR={disk / 'data'}"]
        first = CrawlProcess(
            tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 1, *BFS, *stores)
        )
        assert first.wait_for_pages(30), first.log[-3000:]
        filler = fill(disk)  # the disk fills up under the running crawl
        code = first.finish()
        errors = [line for line in first.lines if "cannot write: the disk is full" in line]
        print("".join(line for line in first.lines if "ERROR" in line))
        assert code == 4, first.log[-4000:]
        assert errors, first.log[-4000:]
        assert "Traceback" not in first.log, first.log[-4000:]
        stats = json.loads((tmp_path / "stats1.json").read_text())
        assert stats["finish_reason"] == "storage_full"

        filler.unlink()  # space again (more than the whole crawl needs): the same command resumes
        remount(disk, "size=64m")
        second = CrawlProcess(
            tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 2, *BFS, *stores)
        )
        assert second.finish() == 0, second.log[-3000:]
        assert "Resuming crawl" in second.log
        (tmp_path / "data").symlink_to(disk / "data")  # where crawl_facts reads the stores
        facts = crawl_facts(tmp_path)  # PRAGMA integrity_check of both stores: ok
    missing = comparable(fault_reference.reached) - comparable(facts.reached)
    assert not missing, sorted(missing)[:20]
    assert facts.indexed == facts.relevant
    assert facts.fetched <= facts.recorded


@pytest.mark.slow
def test_a_read_only_data_dir_stops_the_crawl_at_start_with_one_line(
    fault_web: Any, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        (disk / "data").mkdir()
        remount(disk, "ro")
        topic = topic_file(tmp_path, fault_web)
        data = ["-s", f"FOCUSCRAWL_DATA_DIR={disk / 'data'}"]
        crawl = CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 1, *data))
        code = crawl.finish()
    assert code != 0
    errors = [line for line in crawl.lines if "read-only" in line and "ERROR" in line]
    assert len(errors) == 1, crawl.log[-4000:]
    assert "Traceback" not in crawl.log, crawl.log[-4000:]
    stats = json.loads((tmp_path / "stats1.json").read_text())
    assert stats["finish_reason"] == "storage_error"
