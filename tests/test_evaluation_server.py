"""The test-web server over real sockets: conditional GET, robots, 404, hosts, bad cases."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from focuseval.testweb import TestWebProcess


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def fetch(url: str, method: str = "GET", **headers: str) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers=headers, method=method)
    try:
        with _opener.open(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


@pytest.fixture(scope="module")
def seed(testweb_synthetic: Any) -> str:
    return testweb_synthetic.seeds["birds"][0]


def test_all_hosts_listen_on_one_port(testweb_synthetic: Any) -> None:
    assert len(testweb_synthetic.hosts) == 6
    assert len(set(testweb_synthetic.hosts)) == 6
    for base in testweb_synthetic.base_urls:
        assert urlsplit(base).port == testweb_synthetic.port
        status, _, _ = fetch(base + "/")
        assert status == 200


def test_page_has_validators_and_conditional_get_gives_304(seed: str) -> None:
    status, headers, body = fetch(seed)
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    assert body.startswith(b"<!doctype html>")
    etag, modified = headers["ETag"], headers["Last-Modified"]
    status, _, body = fetch(seed, **{"If-None-Match": etag})
    assert (status, body) == (304, b"")
    status, _, body = fetch(seed, **{"If-Modified-Since": modified})
    assert (status, body) == (304, b"")
    status, _, body = fetch(seed, **{"If-None-Match": '"another"'})
    assert status == 200 and body


def test_if_modified_since_before_last_modified_serves_the_page(seed: str) -> None:
    status, _, body = fetch(seed, **{"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"})
    assert status == 200 and body


def test_head_has_no_body(seed: str) -> None:
    status, headers, body = fetch(seed, method="HEAD")
    assert status == 200 and body == b"" and headers["ETag"]


def test_robots_per_host(testweb_synthetic: Any) -> None:
    for base in testweb_synthetic.base_urls:
        status, headers, body = fetch(base + "/robots.txt")
        assert status == 200 and headers["Content-Type"].startswith("text/plain")
        assert b"Disallow: /private/" in body


def test_unknown_path_and_wrong_host_are_404(testweb_synthetic: Any, seed: str) -> None:
    parts = urlsplit(seed)
    assert fetch(f"http://{parts.netloc}/no/such/page.html")[0] == 404
    other = next(h for h in testweb_synthetic.hosts if h != parts.hostname)
    assert fetch(f"http://{other}:{parts.port}{parts.path}")[0] == 404


def test_bad_cases(testweb_synthetic: Any) -> None:
    base = testweb_synthetic.base_urls[0]
    status, headers, _ = fetch(base + "/loop/a")
    assert status == 302 and headers["Location"] == "/loop/b"
    status, headers, _ = fetch(base + "/loop/b")
    assert status == 302 and headers["Location"] == "/loop/a"
    status, headers, body = fetch(base + "/files/report-1.pdf")
    assert (
        status == 200 and headers["Content-Type"] == "application/pdf" and body.startswith(b"%PDF")
    )
    status, _, body = fetch(base + "/media/blob-3")
    assert status == 200 and len(body) == 2048 and any(b > 127 for b in body)  # binary as HTML
    # The calendar never ends: every month links to the next one.
    status, _, body = fetch(base + "/trap/calendar?m=2999-12")
    assert status == 200 and b"/trap/calendar?m=3000-01" in body
    status, _, _ = fetch(base + "/trap/calendar?m=not-a-month")
    assert status == 404


def test_post_is_refused(seed: str) -> None:
    assert fetch(seed, method="POST")[0] == 405


def test_a_failed_start_is_reported_not_waited_for(tmp_path: Path) -> None:
    web = TestWebProcess("wikispeedia", corpora=tmp_path)  # no corpus there
    with pytest.raises(RuntimeError, match="exited with 2 before it was ready"):
        web.start()
    web.stop()
