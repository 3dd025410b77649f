"""Three Redis-fed workers on one data dir, one SIGKILLed (issue 29, the small slice of
``bench/bench_shared_datadir.py``): the live workers fetch no page twice (their leases are
renewed: the index is written off the reactor) and none stops on the index's lock (the index
writers take fair turns); the index is whole (``PRAGMA integrity_check``, every page the live
workers judged relevant)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RedisServer
from tests.fault_crawl import table_urls
from tests.shared_datadir import shared_datadir_run


@pytest.mark.slow
def test_three_workers_on_one_data_dir_one_killed(fault_web: Any, tmp_path: Path) -> None:
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    try:
        # short index transactions that overlap: the three workers want the write lock at once
        extra = ("-s", "FOCUSCRAWL_INDEX_COMMIT_DELAY=0.3", "-s", "FOCUSCRAWL_DB_BUSY_TIMEOUT=20")
        run = shared_datadir_run(fault_web, tmp_path, server.url, kill_after=40, extra=extra)
    finally:
        server.stop()
    tail = "\n".join(log[-2000:] for log in run.logs[1:])
    assert run.codes[1:] == [0, 0], tail
    assert run.lock_stops == 0, tail
    assert run.live_duplicates == 0, tail
    assert run.fetched > 100
    assert table_urls(tmp_path / "data" / "index.sqlite", "pages")  # integrity_check ok
