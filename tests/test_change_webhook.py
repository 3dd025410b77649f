"""Change notifications to a webhook: a real HTTP receiver on loopback, down for a while, gets
every change exactly once; the address policy applies; neither the secret nor a token in the
URL is logged."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.utils.test import get_crawler

from focuscrawl.change.outbox import Outbox, notification_key
from focuscrawl.change.webhook import WebhookSender, change_payload
from focuscrawl.netguard import AddressPolicy
from focuscrawl.pipelines.webhook import OUTBOX, ChangeWebhookPipeline
from focuscrawl.validation import setting_errors

SECRET = "s3cret-webhook-key"
TOKEN = "T0KEN-in-the-path"


class Receiver:
    """A loopback HTTP server that records every POST (its headers and JSON body)."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.received: list[tuple[dict[str, str], dict[str, Any], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append((dict(self.headers), json.loads(body), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def a_closed_port(host: str = "127.0.0.1") -> tuple[socket.socket, int]:
    """A port bound but not listening: connections are refused until it is released."""
    sock = socket.socket()
    sock.bind((host, 0))
    return sock, sock.getsockname()[1]


def payload(n: int) -> dict[str, Any]:
    return change_payload(f"http://shop.test/{n}", f"Page {n}", {"added": [f"price {n}"]}, 1.7e9)


def sender(url: str, outbox: Path, allow: str = "127.0.0.1", **kw: Any) -> WebhookSender:
    return WebhookSender(
        url, outbox, AddressPolicy.parse(allow), secret=SECRET, retry=0.01, retry_max=0.05, **kw
    )


def test_every_change_is_delivered_once_across_a_receiver_that_is_down(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    closed, port = a_closed_port()
    url = f"http://127.0.0.1:{port}/hook/{TOKEN}"
    keys = [notification_key(f"http://shop.test/{n}", f"v{n}") for n in range(5)]
    counted: list[str] = []
    first = sender(url, tmp_path / OUTBOX, count=counted.append)  # the first cycle: down
    first.start()
    for n in range(3):
        first.submit(keys[n], payload(n))
    first.close(wait=0.3)
    assert "failed" in counted and "delivered" not in counted
    assert pending(tmp_path / OUTBOX) == 3  # kept for the next crawl

    closed.close()  # the receiver is back, on the same address
    back = Receiver(port)
    try:
        second = sender(url, tmp_path / OUTBOX, count=counted.append)
        second.start()
        second.submit(keys[1], payload(1))  # reported again: not sent twice
        for n in (3, 4):
            second.submit(keys[n], payload(n))
        second.close(wait=60)  # returns once the outbox is empty
    finally:
        back.close()
    got = [h["X-Focuscrawl-Delivery"] for h, _, _ in back.received]
    assert sorted(got) == sorted(keys)  # every change, each once
    for headers, body, raw in back.received:
        assert set(body) >= {"url", "title", "diff"} and body["diff"]["added"]
        expected = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        assert headers["X-Focuscrawl-Signature"] == "sha256=" + expected
    assert pending(tmp_path / OUTBOX) == 0
    assert counted.count("queued/known") == 1
    assert SECRET not in caplog.text and TOKEN not in caplog.text
    assert f"http://127.0.0.1:{port}" in caplog.text  # the receiver is named, without its path


def pending(path: Path) -> int:
    box = Outbox(path).open()
    try:
        return box.pending()
    finally:
        box.close()


def test_the_address_policy_applies_to_the_webhook(
    tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{receiver.port}/hook/{TOKEN}"
    refused = sender(url, tmp_path / OUTBOX, allow="")  # loopback not allowed
    refused.start()
    refused.submit("k", payload(1))
    refused.close(wait=0.2)
    assert receiver.received == []
    assert "address not allowed" in caplog.text and TOKEN not in caplog.text
    assert pending(tmp_path / OUTBOX) == 1  # not lost: sent once the policy allows it


def test_the_outbox_is_bounded_and_remembers_delivered_keys(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.sqlite3", max_pending=2, max_delivered=1).open()
    try:
        assert [box.add(k, {"n": k}) for k in "aab"] == ["added", "known", "added"]
        assert box.add("c", {}) == "full"
        assert [k for k, _, _ in box.due(now=1e12)] == ["a", "b"]
        box.delivered("a", now=1.0)
        box.delivered("b", now=2.0)
        assert box.add("b", {}) == "known"  # delivered: never queued again
        assert box.add("a", {}) == "added"  # forgotten past max_delivered (the oldest first)
        box.failed("a", next_at=5e11)
        assert box.due(now=1e11) == [] and box.next_due() == 5e11
    finally:
        box.close()


def test_the_extension_sends_significant_changes_only(tmp_path: Path, receiver: Receiver) -> None:
    settings = {
        "FOCUSCRAWL_CHANGE_WEBHOOK": f"http://127.0.0.1:{receiver.port}/hook",
        "FOCUSCRAWL_ALLOW_PRIVATE": "127.0.0.1",
        "FOCUSCRAWL_DATA_DIR": str(tmp_path),
    }
    crawler = get_crawler(Spider, settings)
    ext = ChangeWebhookPipeline.from_crawler(crawler)
    spider = Spider(name="t")
    ext.open_spider(spider)
    for change in ("significant", "unchanged", "new"):
        item = {"url": f"http://shop.test/{change}", "title": change, "change": change,
                "change_diff": {"added": ["x"]}, "fingerprints": {"t": "h1"}}  # fmt: skip
        assert ext.process_item(item, spider) is item
    ext.sender.close(wait=60)
    assert [b["url"] for _, b, _ in receiver.received] == ["http://shop.test/significant"]
    assert (tmp_path / OUTBOX).is_file()


def test_a_bad_webhook_url_is_a_setting_error() -> None:
    for url in ("ftp://h/x", "http://user:pw@h/x", "http://h:99999/"):
        errors = setting_errors({"FOCUSCRAWL_CHANGE_WEBHOOK": url})
        assert any("FOCUSCRAWL_CHANGE_WEBHOOK" in e for e in errors), url
        assert not any("pw" in e for e in errors)
