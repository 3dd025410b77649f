"""The work mark: set around each piece of a page's work, cleared after (a real file, read back
as a resume would); dead workers' marks claimed once."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.requests import FP_META
from focuscrawl.frontier.workmark import (
    MARK_FILE,
    WORKER_MARK,
    WorkMark,
    claim_dead_marks,
    payload,
    read_mark,
)
from focuscrawl.middlewares.workmark import (
    WorkEndDownloaderMiddleware,
    WorkEndPipeline,
    WorkMarkSpiderMiddleware,
    WorkStartDownloaderMiddleware,
    WorkStartPipeline,
)

FP = bytes(range(20))


def page(url: str = "http://a.test/p") -> HtmlResponse:
    request = Request(url, meta={FP_META: FP.hex()})
    return HtmlResponse(url, body=b"<html></html>", request=request)


def test_each_piece_of_a_page_marks_it_and_clears_after(tmp_path: Path) -> None:
    crawler = get_crawler(Spider, {**DEFAULTS, "JOBDIR": str(tmp_path)})
    start = WorkStartDownloaderMiddleware.from_crawler(crawler)
    end = WorkEndDownloaderMiddleware.from_crawler(crawler)
    spider_mw = WorkMarkSpiderMiddleware.from_crawler(crawler)
    first, last = WorkStartPipeline.from_crawler(crawler), WorkEndPipeline.from_crawler(crawler)
    start.shared.open()
    path = str(tmp_path / MARK_FILE)
    mine = payload(FP, "a.test")
    assert read_mark(path) is None

    response = page()
    start.process_response(response.request, response)
    assert read_mark(path) == mine  # decompression, partition … run now
    end.process_response(response.request, response)
    assert read_mark(path) is None  # queued for the scraper: a bystander

    spider_mw.process_spider_input(response)
    assert read_mark(path) == mine  # the callback runs now
    seen: list[Any] = []

    def callback() -> Any:
        seen.append(read_mark(path))
        yield {"url": response.url}
        seen.append(read_mark(path))
        yield Request("http://a.test/next")

    out = spider_mw.process_spider_output(response, callback())
    assert read_mark(path) == mine  # the callback returned: its output is worked on next
    item = next(out)
    assert seen == [mine] and read_mark(path) == mine  # until another piece takes the slot
    first.process_item(item)
    assert read_mark(path) == mine  # the item's pipelines work for the same page
    last.process_item(item)
    assert read_mark(path) is None
    assert list(out) and seen == [mine, mine] and read_mark(path) is None

    start.shared.close()  # a graceful end: no mark left
    assert not os.path.exists(path)


def test_no_mark_without_a_quarantine(tmp_path: Path) -> None:
    import pytest
    from scrapy.exceptions import NotConfigured

    settings = {**DEFAULTS, "JOBDIR": str(tmp_path), "FOCUSCRAWL_QUARANTINE_AFTER": 0}
    with pytest.raises(NotConfigured):
        WorkMarkSpiderMiddleware.from_crawler(get_crawler(Spider, settings))


def test_dead_workers_marks_are_claimed_once(tmp_path: Path) -> None:
    child = subprocess.Popen(["true"])
    child.wait()  # a pid no process has now
    dead = WorkMark(str(tmp_path / WORKER_MARK.format(pid=child.pid)))
    dead.open()
    dead.mark(payload(FP, "a.test"))
    alive = WorkMark(str(tmp_path / WORKER_MARK.format(pid=os.getppid())))
    alive.open()
    alive.mark(payload(b"x" * 20, "b.test"))
    (tmp_path / "working-junk.mark").write_bytes(b"\xff" * 300)  # not a pid: ignored
    assert claim_dead_marks(str(tmp_path)) == [payload(FP, "a.test")]
    assert claim_dead_marks(str(tmp_path)) == []  # claimed: never reported twice
    assert (tmp_path / WORKER_MARK.format(pid=os.getppid())).exists()  # a live one's is its own
