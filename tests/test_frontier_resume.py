"""A crawl with JOBDIR killed with SIGKILL resumes: nothing queued is lost, and only the requests
in flight at the kill are fetched again."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.netguard import allow_private_args
from tests.test_spider_topical import topic_file

CONCURRENCY = 8


def crawl_cmd(
    topic: Path, jobdir: Path, log: Path, pages: int, web: Any, writer_thread: bool = False
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "topical",
        "-a",
        f"topic={topic}",
        "-s",
        f"JOBDIR={jobdir}",
        "-s",
        f"FOCUSCRAWL_CRAWL_LOG={log}",
        "-s",
        f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s",
        "FOCUSCRAWL_PROGRESS_INTERVAL=0.5",
        "-s",
        f"CONCURRENT_REQUESTS={CONCURRENCY}",
        "-s",
        "FOCUSCRAWL_CHANGE_ENABLED=False",
        "-s",
        f"FOCUSCRAWL_INDEX_WRITER_THREAD={writer_thread}",
        "-s",  # a page is acknowledged once its index write is committed: at most this many
        f"FOCUSCRAWL_INDEX_COMMIT_EVERY={CONCURRENCY}",  # wait for a commit (inline writes)
        *allow_private_args(web.hosts),
    ]


def urls(log: Path) -> list[str]:
    out = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):  # the line being written at the kill
            out.append(json.loads(line)["url"])
    return out


@pytest.mark.parametrize("writer_thread", [False, True], ids=["inline", "writer_thread"])
def test_sigkill_and_resume(tmp_path: Path, testweb_synthetic: Any, writer_thread: bool) -> None:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    topic = topic_file(tmp_path, testweb_synthetic)
    jobdir = tmp_path / "job"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    proc = subprocess.Popen(
        crawl_cmd(topic, jobdir, first, 5000, testweb_synthetic, writer_thread),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # the progress line says how far the crawl got
        m = re.search(r"Crawled (\d+) pages", line)
        if m and int(m.group(1)) >= 120:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stderr.close()
    before = urls(first)
    assert len(before) >= 100

    resumed = subprocess.run(
        crawl_cmd(topic, jobdir, second, 150, testweb_synthetic, writer_thread),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "Resuming crawl" in resumed.stderr
    after = urls(second)
    assert len(after) >= 100
    repeated = set(before) & set(after)
    # only what was in flight may come again: downloading (CONCURRENCY) or parsed and waiting
    # for its index commit (at most CONCURRENCY: FOCUSCRAWL_INDEX_COMMIT_EVERY); with the
    # default 64 the bound would follow the crawl's speed (0.1 s of pages at most)
    assert len(repeated) <= 2 * CONCURRENCY, sorted(repeated)
    seeds = set(testweb_synthetic.seeds["birds"])
    assert not seeds & set(after), "the crawl started over instead of resuming"
