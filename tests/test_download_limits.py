"""Download limits by default: a gzip bomb, an endless body and a slow drip cannot fill the memory
or hold the crawl; ordinary pages next to them are fetched. Each kind is counted."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.addon import DOWNLOADER_MIDDLEWARES, FocusCrawlAddon
from focuscrawl.middlewares.compression import STAT_TOO_LARGE, CountedHttpCompressionMiddleware
from focuscrawl.netguard import allow_private_args
from tests.loopback_web import drip, endless, gzip_bomb, loopback_web, page, robots

MB = 1024 * 1024


def test_the_addon_sets_download_limits_a_project_can_override() -> None:
    settings = Settings()
    FocusCrawlAddon().update_settings(settings)
    assert settings.getint("DOWNLOAD_MAXSIZE") == 10 * MB
    assert settings.getint("DOWNLOAD_WARNSIZE") == 2 * MB
    assert settings.getint("DOWNLOAD_TIMEOUT") == 30
    project = Settings({"DOWNLOAD_MAXSIZE": 50 * MB}, priority="project")
    FocusCrawlAddon().update_settings(project)
    assert project.getint("DOWNLOAD_MAXSIZE") == 50 * MB
    mws = DOWNLOADER_MIDDLEWARES
    assert mws["scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware"] is None
    assert mws["focuscrawl.middlewares.compression.CountedHttpCompressionMiddleware"] == 590


def gzipped(body: bytes) -> Response:
    return Response(
        "http://example.com/", body=gzip.compress(body), headers={"Content-Encoding": "gzip"}
    )


def test_a_body_that_decompresses_past_maxsize_is_dropped_and_counted() -> None:
    crawler = get_crawler(settings_dict={"DOWNLOAD_MAXSIZE": MB})
    crawler.stats.open_spider()
    mw = build_from_crawler(CountedHttpCompressionMiddleware, crawler)
    request = Request("http://example.com/")
    assert (
        mw.process_response(request, gzipped(b"<p>birds</p>" * 100)).body == b"<p>birds</p>" * 100
    )
    assert crawler.stats.get_value(STAT_TOO_LARGE) is None
    with pytest.raises(IgnoreRequest, match="exceeded DOWNLOAD_MAXSIZE"):
        mw.process_response(request, gzipped(bytes(4 * MB)))  # 4 KB that inflate to 4 MB
    assert crawler.stats.get_value(STAT_TOO_LARGE) == 1


def test_a_crawl_cuts_bombs_endless_bodies_and_drips_and_fetches_the_rest(tmp_path: Path) -> None:
    routes: dict[str, Any] = {
        "/robots.txt": robots,
        "/bomb": gzip_bomb(64 * MB),  # ~64 KB on the wire, 64 MB inflated
        "/endless": endless(),
        "/drip": drip(pause=0.05),  # a byte every 50 ms: never idle long, never done
        **{f"/ok{i}": page(f"Birds {i}") for i in range(3)},
    }
    with loopback_web(["127.0.0.1"], routes) as web:
        links = [web.url("127.0.0.1", p) for p in ["/bomb", "/endless", "/drip"]]
        links += [web.url("127.0.0.1", f"/ok{i}") for i in range(3)]
        routes["/"] = page("Birds", links)
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
        stats_file, log = tmp_path / "stats.json", tmp_path / "log.jsonl"
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds",
             "-a", f"seeds={web.url('127.0.0.1', '/')}",
             *allow_private_args(["127.0.0.1"]),
             # DOWNLOAD_MAXSIZE and _WARNSIZE: the add-on's defaults (10 MB, 2 MB)
             "-s", "DOWNLOAD_TIMEOUT=2", "-s", "RETRY_TIMES=0",
             "-s", f"FOCUSCRAWL_STATS_FILE={stats_file}", "-s", f"FOCUSCRAWL_CRAWL_LOG={log}",
             "-s", f"FOCUSCRAWL_DATA_DIR={tmp_path / 'data'}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        # the crawler hung up on both never-ending bodies (the server notices at its next write)
        assert web.hung_up["endless"].wait(60)
        assert web.hung_up["drip"].wait(60)
    stats = json.loads(stats_file.read_text())
    fetched = {json.loads(line)["url"] for line in log.read_text().splitlines()}
    assert {web.url("127.0.0.1", f"/ok{i}") for i in range(3)} <= fetched
    assert not fetched & set(links[:3])
    exceptions = "downloader/exception_type_count/scrapy.exceptions."
    assert stats[STAT_TOO_LARGE] == 1  # the bomb, cut while inflating
    assert stats[exceptions + "DownloadCancelledError"] == 1  # the endless body, at 10 MB
    assert stats[exceptions + "DownloadTimeoutError"] == 1  # the drip, at the deadline
    assert stats["focuscrawl/error/IgnoreRequest"] == 1
    assert "exceeded DOWNLOAD_MAXSIZE" in proc.stderr
    assert "Traceback" not in proc.stderr
