"""``scrapy crawl topical`` under ``DOWNLOAD_DELAY`` against four loopback hosts that log when
each request arrives: every host's requests are at least the shortest delay of Scrapy's draw
apart (the politeness of the settings), and the drawn delays let no request wait in its
downloader slot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.netguard import allow_private_args

HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")
DELAY = 0.25  # DOWNLOAD_DELAY; Scrapy's default jitter draws 0.125 to 0.375 s
PAGES = 40


class _Web:
    def __init__(self) -> None:
        self.arrivals: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()
        self.servers: list[ThreadingHTTPServer] = []
        self.bases: list[str] = []

    def page(self, host_index: int, n: int) -> bytes:
        links = "".join(
            f'<p>See also <a href="{self.bases[(host_index + k) % len(self.bases)]}/birds/'
            f'{n * 4 + k}">the birds of region {n * 4 + k}</a>.</p>'
            for k in range(1, 5)
        )
        words = " ".join(f"{w}{(n * 7 + i) % 97}" for i, w in enumerate(["wing", "egg"] * 40))
        return (
            f"<html><head><title>Birds of region {n}</title></head><body><main>"
            f"<h1>Birds of region {n}</h1><p>Birds of region {n} nest in trees and lay eggs. "
            f"{words}</p>{links}</main></body></html>"
        ).encode()


@pytest.fixture()
def logged_web() -> Iterator[_Web]:
    web = _Web()

    def handler_for(index: int) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                with web.lock:
                    web.arrivals[HOSTS[index]].append(time.monotonic())
                if self.path == "/robots.txt":
                    body, kind = b"User-agent: *\nAllow: /\n", "text/plain"
                else:
                    n = int(self.path.rsplit("/", 1)[-1] or 0) if self.path != "/" else 0
                    body, kind = web.page(index, n), "text/html; charset=utf-8"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    for i, host in enumerate(HOSTS):
        server = ThreadingHTTPServer((host, 0), handler_for(i))
        web.servers.append(server)
        web.bases.append(f"http://{host}:{server.server_address[1]}")
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield web
    finally:
        for server in web.servers:
            server.shutdown()
            server.server_close()


def _crawl(web: _Web, tmp: Path, *settings: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(f"{b}/birds/0" for b in web.bases)]
    cmd += allow_private_args(HOSTS)
    for setting in (
        f"DOWNLOAD_DELAY={DELAY}",
        "CONCURRENT_REQUESTS=16",
        "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        f"CLOSESPIDER_PAGECOUNT={PAGES}",
        "FOCUSCRAWL_DATA_DIR=data",
        "FOCUSCRAWL_STATS_FILE=stats.json",
        "LOG_LEVEL=INFO",
        *settings,
    ):
        cmd += ["-s", setting]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    tmp.mkdir(exist_ok=True)
    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((tmp / "stats.json").read_text())


def test_drawn_delays_keep_every_host_polite_and_no_request_waits_in_a_slot(
    logged_web: _Web, tmp_path: Path
) -> None:
    stats = _crawl(logged_web, tmp_path)
    assert stats["response_received_count"] >= PAGES
    gaps = [
        later - earlier
        for times in logged_web.arrivals.values()
        for earlier, later in zip(sorted(times), sorted(times)[1:], strict=False)
    ]
    assert len(logged_web.arrivals) == len(HOSTS) and len(gaps) >= PAGES - len(HOSTS)
    # never closer than the shortest draw (0.5 x DOWNLOAD_DELAY; 20 ms for the clocks' and
    # the server's own scheduling), and not all at it: the draws spread over the jitter
    assert min(gaps) >= 0.5 * DELAY - 0.02
    assert max(gaps) >= 0.9 * DELAY
    # every request after a host's first carried its draw, and none waited in its slot
    assert stats.get("focuscrawl/frontier/slot_waits", 0) == 0
    assert stats["focuscrawl/frontier/slot_undrawn"] == 2 * len(HOSTS)  # robots.txt, first page
    # four hosts cannot keep 16 requests busy: the frontier waited for a host to be ready
    # and the engine was asked again then (without it the crawl would stall 5 s a time)
    assert stats["focuscrawl/frontier/all_hosts_delayed"] > 0
