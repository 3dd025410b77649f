"""``focuscrawl serve`` answers only requests for its own address (DNS rebinding): a real
loopback server, requests with forged ``Host`` headers."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from focuscrawl.index import PageIndex
from focuscrawl.web.app import Sources, WebServer, make_server
from focuscrawl.web.hostcheck import allowed_hosts, host_allowed, host_name


def fetch(port: int, path: str, host: str | None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.fixture
def index(tmp_path: Path) -> Path:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        ix.upsert("http://t/eagle", "Eagle", "The bald eagle eats fish", relevance=0.9)
    return path


@pytest.fixture
def server(index: Path) -> Iterator[WebServer]:
    server = make_server(Sources(index=index), extra_hosts=["search.lan"])
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:8300", "127.0.0.1"), ("[::1]:80", "::1"), ("Local.Host.", "local.host"),
     ("a:b:c", ""), ("[::1]x", ""), ("h:80x", "")],
)  # fmt: skip
def test_host_name(header: str, name: str) -> None:
    assert host_name(header) == name


def test_allowed_names() -> None:
    allowed = allowed_hosts("127.0.0.1", ["Search.LAN"])
    assert allowed == {"127.0.0.1", "localhost", "search.lan"}
    assert not host_allowed("127.0.0.1.evil.example", allowed)
    assert not host_allowed(None, allowed)


def test_forged_host_headers_are_refused_and_counted(server: WebServer) -> None:
    port = server.server_address[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"search.lan:{port}"):
        status, body = fetch(port, "/api/search?q=eagle", host)
        assert status == 200 and b"Eagle" in body, host
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}",
                 "attacker.test:80", f"[::1]:{port}"):  # fmt: skip
        status, body = fetch(port, "/api/search?q=eagle", host)
        assert status == 421 and b"Eagle" not in body, host
    status, body = fetch(port, "/api/search?q=eagle", None)  # no Host at all
    assert status == 400 and b"Eagle" not in body
    status, body = fetch(port, "/api/dashboard", f"127.0.0.1:{port}")
    assert status == 200 and json.loads(body)["rejected_hosts"] == 6
    assert server.rejected_hosts == 6


def test_serve_command_checks_the_host(index: Path) -> None:
    cmd = [sys.executable, "-m", "focuscrawl.cli", "serve", "--index", str(index), "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, "--allowed-host", "crawler.lan"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())  # the ready line: no waiting on a timer
        port = int(ready["url"].rstrip("/").rsplit(":", 1)[1])
        assert fetch(port, "/", "crawler.lan")[0] == 200
        assert fetch(port, "/", f"127.0.0.1:{port}")[0] == 200
        assert fetch(port, "/", f"rebound.example:{port}")[0] == 421
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
