"""Sharing: two crawls on one data dir both work; a second crawl on a JOBDIR in use is refused.

* Two crawls started together with the same ``FOCUSCRAWL_DATA_DIR`` (two scrapyd jobs with the
  default relative ``focuscrawl-data``) both finish: their write transactions are short and each
  waits for the other's (``FOCUSCRAWL_DB_BUSY_TIMEOUT``); no "database is locked", and the index
  holds every page either judged relevant.
* A second ``scrapy crawl`` on a JOBDIR another crawl is using exits at once with status 2 and
  one error line; the first crawl goes on and finishes (``JOBDIR/focuscrawl.lock``, ``flock``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.frontier.journal import JobdirBusy, claim_jobdir, lock_jobdir, release_jobdir
from tests.fault_crawl import CrawlProcess, crawl_args, crawl_facts, topic_file


@pytest.mark.slow
def test_two_crawls_on_one_data_dir_both_work(fault_web: Any, tmp_path: Path) -> None:
    topic = topic_file(tmp_path, fault_web)
    # a short commit delay and many pages per commit: the two crawls' transactions overlap
    extra = ["-s", "FOCUSCRAWL_INDEX_COMMIT_DELAY=0.3", "-s", "FOCUSCRAWL_DB_BUSY_TIMEOUT=30"]
    crawls = [
        CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, run, *extra))
        for run in (1, 2)
    ]
    codes = [c.finish() for c in crawls]
    logs = "".join(c.log for c in crawls)
    assert codes == [0, 0], logs[-4000:]
    assert "locked" not in logs and "is not a focuscrawl index" not in logs
    facts = crawl_facts(tmp_path)  # both crawl logs, the one index, the one change store
    # the two crawls judge a borderline page each in its own way (the model learns from the
    # order): the index holds every page both judged relevant, and only pages one did
    always = {url for url, seen in facts.judged.items() if seen == {True}}
    ever = {url for url, seen in facts.judged.items() if True in seen}
    assert always and always <= facts.indexed <= ever
    assert facts.fetched <= facts.recorded


@pytest.mark.slow
def test_a_second_crawl_on_a_jobdir_in_use_exits_with_one_line(
    fault_web: Any, tmp_path: Path
) -> None:
    topic = topic_file(tmp_path, fault_web)
    job = ["-s", f"JOBDIR={tmp_path / 'job'}"]
    first = CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 1, *job))
    assert first.wait_for_pages(5), first.log[-3000:]
    second = CrawlProcess(tmp_path, "topical", crawl_args(fault_web, topic, tmp_path, 2, *job))
    assert second.finish() == 2
    errors = [line for line in second.lines if "error" in line.lower()]
    assert len(errors) == 1, second.log[-3000:]
    assert "is in use by another crawl" in errors[0] and f"pid {first.proc.pid}" in errors[0]
    assert first.finish() == 0, first.log[-3000:]
    assert not (tmp_path / "log2.jsonl").exists()  # the second crawl touched nothing


def test_one_frontier_per_jobdir_in_a_process(tmp_path: Path) -> None:
    lock_jobdir(str(tmp_path))  # the crawl command's lock: the frontier may then claim it
    lock_jobdir(str(tmp_path))  # idempotent in the process
    claim_jobdir(str(tmp_path))
    with pytest.raises(JobdirBusy, match="another crawl of this process"):
        claim_jobdir(str(tmp_path))
    release_jobdir(str(tmp_path))
    claim_jobdir(str(tmp_path))  # released: free again
    assert (tmp_path / "focuscrawl.lock").read_text().strip() == str(os.getpid())
    release_jobdir(str(tmp_path))
