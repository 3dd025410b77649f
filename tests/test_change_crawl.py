"""End to end: a real Scrapy crawl (subprocess) against the real test server serving the evolving
web: conditional GETs answered 304 cost no body, a recrawl passes on only the changed pages.
(Insignificant changes and tombstones through the same adapters: tests/test_change_pipeline.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from focuseval.evolving import EvolvingWeb
from focuseval.server import bind_sockets, serve
from focuseval.site import loopback_hosts
from focuseval.synthetic import SyntheticWeb

WATCH = Path(__file__).with_name("watch_crawl.py")  # the crawl, as its own process


@pytest.fixture(scope="module")
def served_web() -> Iterator[EvolvingWeb]:
    hosts = loopback_hosts(2)
    port, socks = bind_sockets(hosts)
    base = SyntheticWeb(hosts=hosts, port=port, n_pages=240)
    web = EvolvingWeb(base, [(p.host, p.path) for p in base.pages[:24]], changed=4)
    web.port = port  # type: ignore[attr-defined]
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        holder["runner"] = loop.run_until_complete(serve(web, socks))
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield web
    asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


def crawl(web: EvolvingWeb, tmp: Path, name: str, mode: str) -> tuple[list[dict], dict]:
    urls = [f"http://{h}:{web.port}{p}" for h, p in web.pages]  # type: ignore[attr-defined]
    out, stats = tmp / f"{name}.jsonl", tmp / f"{name}.stats.json"
    env = {**os.environ, "URLS": json.dumps(urls)}
    proc = subprocess.run(
        [sys.executable, str(WATCH), str(out), str(stats), mode, str(tmp / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return items, json.loads(stats.read_text())


def test_crawl_then_recrawl_with_conditional_gets(served_web: EvolvingWeb, tmp_path: Path) -> None:
    web = served_web
    web.state.clear()
    n = len(web.pages)
    items, stats = crawl(web, tmp_path, "initial", "crawl")
    assert len(items) == n and {i["change"] for i in items} == {"new"}
    assert all(i["fingerprints"].get("b") for i in items)  # from the response, not the fallback

    web.step(4)  # significant change of the victims
    items, stats = crawl(web, tmp_path, "significant", "recrawl")
    victims = {f"http://{h}:{web.port}{p}" for h, p in web.victims}  # type: ignore[attr-defined]
    assert {i["url"] for i in items} == victims
    assert {i["change"] for i in items} == {"significant"}
    # the others answered 304: recorded unchanged, no body downloaded
    assert stats["focuscrawl/change/unchanged"] == n - len(victims)
    assert stats["downloader/response_status_count/304"] == n - len(victims)
    assert stats["downloader/response_status_count/200"] == len(victims)

    web.state.clear()
