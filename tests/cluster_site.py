"""A tiny multi-host site for the cluster tests, served from threads of the test process.

Every page is about birds and links to the next page (so all are reachable from the first) and
to three others across hosts. The server records every GET (path, User-Agent) so that a test
can tell which worker fetched what, and can hold one page until the test releases it (a
request that is surely in flight when its worker is killed).
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HEAD_START = 4
WORDS = [
    "birds",
    "nest",
    "feathers",
    "song",
    "wings",
    "warbler",
    "migration",
    "owls",
    "finch",
    "eggs",
]


class ClusterSite:
    def __init__(
        self, hosts: int = 3, pages_per_host: int = 30, hold_path: str = "", quorum: int = 0
    ) -> None:
        self.n_hosts = hosts
        # with a quorum, an agent past its first HEAD_START pages waits (up to 30 s) until
        # `quorum` agents have shown up: the first worker to start cannot crawl the whole site
        # before the others are up
        self.quorum = quorum
        self.quorum_met = threading.Event()
        self.pages_per_host = pages_per_host
        self.hold_path = hold_path  # GETs of this path wait until release() (or 60 s)
        self.fetches: list[tuple[str, str]] = []  # (url, user agent)
        self.lock = threading.Lock()
        self.held = threading.Event()  # a request for hold_path arrived
        self.release_hold = threading.Event()
        self.milestones: dict[int, threading.Event] = {}
        self.servers: list[ThreadingHTTPServer] = []

    # -- pages ----------------------------------------------------------------------------
    def base(self, h: int) -> str:
        host, port = self.servers[h].server_address[:2]
        return f"http://{host}:{port}"

    def url(self, k: int) -> str:
        return f"{self.base(k % self.n_hosts)}/p/{k}.html"

    @property
    def urls(self) -> list[str]:
        return [self.url(k) for k in range(self.n_hosts * self.pages_per_host)]

    def page(self, k: int) -> bytes:
        n = self.n_hosts * self.pages_per_host
        links = [(k + 1) % n, (k * 7 + 3) % n, (k * 13 + 5) % n, (k * 31 + 11) % n]
        anchors = "".join(f'<p><a href="{self.url(j)}">birds page {j} wings</a></p>' for j in links)
        # drawn per page (not a rotation of WORDS, whose word pairs every page would share):
        # distinct pages, not near-duplicates of each other (FOCUSCRAWL_DEDUP is on by default)
        rng = random.Random(k)
        text = " ".join(rng.choice(WORDS) for _ in range(60))
        return (
            f"<html><head><title>Birds {k}</title></head><body><h1>Birds {k}</h1>"
            f"<p>{text}</p>{anchors}</body></html>"
        ).encode()

    # -- serving --------------------------------------------------------------------------
    def wait_for_fetches(self, count: int, timeout: float = 120) -> bool:
        with self.lock:
            if len(self.page_fetches()) >= count:
                return True
            event = self.milestones.setdefault(count, threading.Event())
        return event.wait(timeout)

    def page_fetches(self) -> list[tuple[str, str]]:
        return [f for f in self.fetches if not f[0].endswith("/robots.txt")]

    def fetch_counts(self) -> Counter[str]:
        return Counter(url for url, _ in self.page_fetches())

    def _record(self, url: str, agent: str) -> None:
        with self.lock:
            self.fetches.append((url, agent))
            done = len(self.page_fetches())
            for count, event in self.milestones.items():
                if done >= count:
                    event.set()

    def start(self) -> ClusterSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                host, port = self.server.server_address[:2]
                url = f"http://{host}:{port}{self.path}"
                agent = self.headers.get("User-Agent", "")
                site._record(url, agent)
                if site.quorum and not site.quorum_met.is_set():
                    with site.lock:
                        if len({a for _, a in site.fetches}) >= site.quorum:
                            site.quorum_met.set()
                        mine = sum(1 for _, a in site.page_fetches() if a == agent)
                    if mine > HEAD_START:
                        site.quorum_met.wait(30)
                if self.path == "/robots.txt":
                    body, ctype = b"User-agent: *\nAllow: /\n", "text/plain"
                elif self.path.startswith("/p/") and self.path.endswith(".html"):
                    if site.hold_path and self.path == site.hold_path:
                        site.held.set()
                        site.release_hold.wait(60)
                    body, ctype = site.page(int(self.path[3:-5])), "text/html; charset=utf-8"
                else:
                    self.send_error(404)
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the worker died while this page was held

            def log_message(self, *args: Any) -> None:
                pass

        for h in range(self.n_hosts):
            server = ThreadingHTTPServer((f"127.0.0.{h + 2}", 0), Handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers.append(server)
        return self

    def stop(self) -> None:
        self.release_hold.set()
        self.quorum_met.set()
        for server in self.servers:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> ClusterSite:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
