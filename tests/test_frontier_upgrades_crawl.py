"""``scrapy crawl topical`` on the local test web: better scores for queued URLs (the learned
judge's re-scores, links found again) reach the in-process frontier as upgrades, not requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from focuscrawl.netguard import allow_private_args
from focuscrawl.strategy.linkjudge import EPOCH_STEP


def _crawl(
    web: Any, tmp: Path, *settings: str, strategy: str = "learned"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(web.seeds["birds"]), "-a", f"strategy={strategy}"]
    cmd += allow_private_args(web.hosts)
    base = (
        "FOCUSCRAWL_DATA_DIR=data",
        "FOCUSCRAWL_CRAWL_LOG=log.jsonl",
        "CLOSESPIDER_PAGECOUNT=250",
    )
    for setting in (*base, "FOCUSCRAWL_STATS_FILE=stats.json", *settings):
        cmd += ["-s", setting]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    tmp.mkdir(exist_ok=True)
    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = [json.loads(x) for x in (tmp / "log.jsonl").read_text().splitlines()]
    return json.loads((tmp / "stats.json").read_text()), log


def test_rescores_move_queued_urls_up_without_requests(
    testweb_synthetic: Any, tmp_path: Path
) -> None:
    direct, log = _crawl(testweb_synthetic, tmp_path / "direct")
    sent, sent_log = _crawl(
        testweb_synthetic, tmp_path / "sent", "FOCUSCRAWL_DIRECT_UPGRADES=False"
    )
    # the re-scores moved queued URLs up without requests, and the crawl fetched them at
    # their new scores; sent as requests, none was an upgrade of its own
    assert direct["focuscrawl/frontier/upgraded_direct"] > 100
    assert "focuscrawl/frontier/upgraded_direct" not in sent
    assert max(r["score"] for r in log[150:]) >= 3 * EPOCH_STEP
    # an upgrade never queues a URL: both crawls queue about as many URLs, find as many pages
    assert abs(direct["focuscrawl/frontier/enqueued"] - sent["focuscrawl/frontier/enqueued"]) < (
        0.1 * sent["focuscrawl/frontier/enqueued"]
    )
    relevant = sum(r["relevant"] for r in log)
    assert relevant >= 0.8 * sum(r["relevant"] for r in sent_log) and relevant >= 40


def test_the_default_strategy_moves_links_found_again_up_directly(
    testweb_synthetic: Any, tmp_path: Path
) -> None:
    stats, log = _crawl(testweb_synthetic, tmp_path, strategy="sharksearch-blocks")
    assert stats["focuscrawl/frontier/upgraded_direct"] > 100  # in-link votes raised them
    assert sum(r["relevant"] for r in log) >= 40
