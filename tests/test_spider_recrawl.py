"""``scrapy crawl topical -a mode=recrawl`` end to end against the evolving test web: unchanged
pages answer 304 (no body), a significant change reaches the export, an insignificant one not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from focuseval.evolving import synthetic_evolving
from focuseval.testweb import TestWebProcess

from focuscrawl.netguard import allow_private_args
from tests.test_change_webhook import Receiver, a_closed_port


@pytest.fixture(scope="module")
def evolving_web() -> Iterator[TestWebProcess]:
    with TestWebProcess(corpus="evolving") as web:
        yield web


def crawl(
    tmp: Path, web: TestWebProcess, name: str, *args: str, pages: int = 1000
) -> tuple[list[dict], dict]:
    seeds = [urls[0] for urls in web.seeds.values()]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            "topical",
            "-a",
            "topic=birds",
            "-a",
            "seeds=" + ",".join(seeds),
            "-a",
            "strategy=bfs",
            *args,
            *allow_private_args(web.hosts),
            "-s",
            "FOCUSCRAWL_DATA_DIR=data",
            "-s",
            f"CLOSESPIDER_PAGECOUNT={pages}",
            "-s",
            "FOCUSCRAWL_RECRAWL_PERIOD=1",
            "-s",
            "FOCUSCRAWL_RECRAWL_BUDGET=1000",
            "-s",
            f"FOCUSCRAWL_STATS_FILE={name}.json",
            "-O",
            f"{name}.jsonl:jsonlines",
        ],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (tmp / f"{name}.log").write_text(proc.stderr)
    items = [json.loads(line) for line in (tmp / f"{name}.jsonl").read_text().splitlines()]
    return items, json.loads((tmp / f"{name}.json").read_text())


def evolve(web: TestWebProcess, cycle: int) -> None:
    with urllib.request.urlopen(f"{web.base_urls[0]}/_evolve/{cycle}", timeout=30) as resp:
        assert resp.status == 200


def test_recrawl_sends_only_significant_changes(
    tmp_path: Path, evolving_web: TestWebProcess
) -> None:
    web = evolving_web
    victims = {
        f"http://{host}:{web.port}{path}"
        for host, path in synthetic_evolving(hosts=web.hosts, port=web.port).victims
    }
    first, stats = crawl(tmp_path, web, "first")
    stored = {i["url"] for i in first}
    assert stats.get("focuscrawl/change/new", 0) == len(first) > 100
    changed = victims & stored
    assert changed, "the crawl should reach some of the pages the web will change"

    evolve(web, 4)  # significant: a sentence added (and some titles changed)
    # the webhook's receiver is down for this cycle: its changes wait in the outbox
    closed, port = a_closed_port(web.hosts[0])
    hook = ["-s", f"FOCUSCRAWL_CHANGE_WEBHOOK=http://{web.hosts[0]}:{port}/hook"]
    wait = [
        "-s",
        "FOCUSCRAWL_CHANGE_WEBHOOK_CLOSE_WAIT=1",
        "-s",
        "FOCUSCRAWL_CHANGE_WEBHOOK_RETRY=0.1",
    ]
    items, stats = crawl(tmp_path, web, "second", "-a", "mode=recrawl", *hook, *wait)
    assert stats["focuscrawl/webhook/queued/added"] == len(changed)
    assert stats.get("focuscrawl/webhook/delivered", 0) == 0
    assert {i["url"] for i in items} == changed
    assert all(i["change"] == "significant" for i in items)
    assert all(i["change_diff"].get("added") for i in items)  # the export says what changed
    assert stats["focuscrawl/change/unchanged"] >= len(stored) - len(changed) - 5
    # unchanged pages come back as 304 without a body; a few may be fetched in full (a page
    # found again through a link, or FOCUSCRAWL_CHANGE_VALIDATE_EVERY's periodic full GET)
    not_modified = stats["downloader/response_status_count/304"]
    assert not_modified <= stats["focuscrawl/change/unchanged"] <= not_modified + len(stored) // 50
    # the unchanged pages are counted and summarised, not logged one by one with their text
    log = (tmp_path / "second.log").read_text()
    assert "Dropped" not in log
    assert not any(i["text"][:80] in log for i in first if i["url"] not in changed)
    n = {k: stats.get(f"focuscrawl/change/{k}", 0) for k in ("new", "significant", "insignificant")}
    n |= {k: stats.get(f"focuscrawl/change/{k}", 0) for k in ("unchanged", "deleted")}
    assert n["significant"] == len(changed)
    line = ", ".join(f"{k} {v}" for k, v in n.items())
    assert f"INFO:   changes: {line}\n" in log
    dropped = stats["item_dropped_count"]
    assert f"INFO:   dropped: {dropped} items (recrawl: unchanged or insignificant " in log

    evolve(web, 5)  # insignificant: layout, attributes, styles, ads
    closed.close()
    receiver = Receiver(port, web.hosts[0])  # back: the next crawl sends what it missed
    try:
        items, stats = crawl(tmp_path, web, "third", "-a", "mode=recrawl", *hook)
    finally:
        receiver.close()
    assert items == []
    assert sorted(b["url"] for _, b, _ in receiver.received) == sorted(changed)  # each once
    assert stats["focuscrawl/webhook/delivered"] == len(changed)
    assert stats["focuscrawl/change/insignificant"] == len(changed)
