"""Relevance feedback: the label file, the review order, ``focuscrawl label``, the review API of
``focuscrawl serve`` (a real server on loopback) and a real crawl that learns the labels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.netguard import allow_private_args
from focuscrawl.relevance import labels as labels_mod
from focuscrawl.relevance.labels import (
    LabelBook,
    LabelError,
    UserLabels,
    add_label,
    estimate_threshold,
    read_labels,
    uncertain_pages,
)
from tests.browser import serving


def test_labels_are_read_as_they_are_added_and_the_last_one_wins(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    book = LabelBook(path)
    assert book.poll() == []  # no file yet
    add_label(path, "http://a.test/1", True)
    add_label(path, "http://a.test/2", False)
    assert [(x.url, x.on_topic) for x in book.poll()] == [
        ("http://a.test/1", True),
        ("http://a.test/2", False),
    ]
    add_label(path, "http://a.test/1", True)  # the same label again: nothing changes
    add_label(path, "http://a.test/2", True)  # turned
    assert [(x.url, x.on_topic) for x in book.poll()] == [("http://a.test/2", True)]
    assert book.labels == {"http://a.test/1": True, "http://a.test/2": True}


def test_lines_that_are_not_labels_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    bad = [
        b"{not json",
        json.dumps({"url": "file:///etc/passwd", "on_topic": True}).encode(),
        json.dumps({"url": "http://a.test/x", "on_topic": "yes"}).encode(),
        json.dumps(["http://a.test/y", True]).encode(),
        json.dumps({"url": "http://a.test/" + "z" * 9000, "on_topic": True}).encode(),
    ]
    good = json.dumps({"url": "http://a.test/ok", "on_topic": False}).encode()
    path.write_bytes(b"\n".join([*bad, good]) + b"\n" + b'{"url": "http://a.test/half"')
    book = read_labels(path)
    assert book.labels == {"http://a.test/ok": False}
    assert book.skipped == len(bad)
    with path.open("ab") as f:  # the unfinished line ends: read at the next look
        f.write(b', "on_topic": true}\n')
    assert [x.url for x in book.poll()] == ["http://a.test/half"]
    with pytest.raises(LabelError):
        add_label(path, "javascript:alert(1)", True)


def test_the_label_book_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(labels_mod, "MAX_LABELS", 3)
    path = tmp_path / "labels.jsonl"
    for i in range(5):
        add_label(path, f"http://a.test/{i}", True)
    book = read_labels(path)
    assert len(book) == 3 and book.dropped == 2


def test_uncertain_pages_come_first() -> None:
    records = [
        {"url": "http://a.test/sure-yes", "relevance": 0.9, "relevant": True},
        {"url": "http://a.test/near-yes", "relevance": 0.32, "relevant": True},
        {"url": "http://a.test/near-no", "relevance": 0.27, "relevant": False},
        {"url": "http://a.test/sure-no", "relevance": 0.01, "relevant": False},
        {"url": "http://a.test/gone", "relevance": 0.3, "relevant": False, "status": 404},
        {"url": "http://a.test/labelled", "relevance": 0.3, "relevant": False},
    ]
    assert estimate_threshold(records) == pytest.approx(0.31, abs=0.011)
    got = uncertain_pages(records, {"http://a.test/labelled": True}, limit=3)
    assert [g["url"] for g in got] == [
        "http://a.test/near-yes",
        "http://a.test/near-no",
        "http://a.test/sure-no",
    ]


def test_the_crawl_polls_for_new_labels_every_n_pages(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    add_label(path, "http://a.test/1", True)
    user = UserLabels(path, poll_every=3)
    assert user.take_examples() == ["http://a.test/1"]
    add_label(path, "http://a.test/2", True)
    add_label(path, "http://a.test/3", False)
    assert user.label_of("http://a.test/3") is None  # not looked at yet
    user.label_of("http://a.test/x")
    assert user.label_of("http://a.test/3") is False  # the third page: looked
    assert user.take_examples() == ["http://a.test/2"]
    assert user.take_examples() == []  # each example once


def test_label_command_asks_about_the_least_certain_pages(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    rows = [
        {"url": f"http://a.test/{i}", "status": 200, "relevance": r, "relevant": r >= 0.3}
        for i, r in enumerate((0.9, 0.31, 0.29, 0.05))
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.jsonl"
    cmd = [sys.executable, "-m", "focuscrawl.cli", "label", "--crawl-log", str(log)]
    cmd += ["--labels", str(labels), "--index", str(tmp_path / "none.sqlite")]
    proc = subprocess.run(cmd, input="n\ny\nq\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(x) for x in labels.read_text().splitlines()]
    assert [(g["url"], g["on_topic"]) for g in got] == [
        ("http://a.test/1", False),  # 0.31: nearest the threshold
        ("http://a.test/2", True),
    ]
    one = subprocess.run(
        [*cmd[:4], "--labels", str(labels), "--url", "http://a.test/3", "--on"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert one.returncode == 0 and read_labels(labels).get("http://a.test/3") is True
    bad = subprocess.run(
        [*cmd[:4], "--labels", str(labels), "--url", "file:///etc/passwd", "--off"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode != 0 and "http(s)" in bad.stderr


def _post(url: str, body: bytes, ctype: str) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_review_api_needs_the_servers_token(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    rows = [
        {"url": "http://a.test/1", "status": 200, "relevance": 0.5, "relevant": True},
        {"url": "http://a.test/2", "status": 200, "relevance": 0.1, "relevant": False},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.jsonl"
    args = ("--index", str(tmp_path / "index.sqlite"), "--crawl-log", str(log))
    with serving(*args, "--labels", str(labels)) as url:
        with urllib.request.urlopen(url + "api/review", timeout=10) as resp:
            listed = json.loads(resp.read())
        assert {p["url"] for p in listed["pages"]} == {"http://a.test/1", "http://a.test/2"}
        with urllib.request.urlopen(url + "review", timeout=10) as resp:
            html = resp.read().decode()
        token = html.split('name="token" value="', 1)[1].split('"', 1)[0]
        ok = json.dumps({"url": "http://a.test/2", "label": "on", "token": token}).encode()
        assert _post(url + "api/label", ok, "application/json")[0] == 200
        form = f"url=http%3A%2F%2Fa.test%2F1&label=off&token={token}".encode()
        assert _post(url + "api/label", form, "application/x-www-form-urlencoded")[0] == 303
        wrong = json.dumps({"url": "http://a.test/1", "label": "on", "token": "x"}).encode()
        assert _post(url + "api/label", wrong, "application/json")[0] == 403
        local = json.dumps({"url": "file:///etc/passwd", "label": "on", "token": token})
        assert _post(url + "api/label", local.encode(), "application/json")[0] == 400
        huge = b"url=" + b"a" * (20 * 1024)
        assert _post(url + "api/label", huge, "application/x-www-form-urlencoded")[0] == 400
    assert read_labels(labels).labels == {"http://a.test/2": True, "http://a.test/1": False}


def test_a_crawl_judges_labelled_pages_as_labelled(testweb_synthetic: Any, tmp_path: Path) -> None:
    """A first crawl; the user labels its least certain off-topic page on topic and its least
    certain on-topic page off topic; a second crawl judges both as labelled and fetches the
    on-topic one as an example page."""

    def crawl(name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
        cmd += ["-a", "seeds=" + ",".join(testweb_synthetic.seeds["birds"])]
        cmd += allow_private_args(testweb_synthetic.hosts)
        for setting in (
            f"FOCUSCRAWL_DATA_DIR={tmp_path / name}",
            f"FOCUSCRAWL_LABELS={tmp_path / 'labels.jsonl'}",
            f"FOCUSCRAWL_CRAWL_LOG={name}.jsonl",
            f"FOCUSCRAWL_STATS_FILE={name}.json",
            "CLOSESPIDER_PAGECOUNT=80",
        ):
            cmd += ["-s", setting]
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
        proc = subprocess.run(
            cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        log = [json.loads(x) for x in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        return log, json.loads((tmp_path / f"{name}.json").read_text())

    first, _ = crawl("first")
    seeds = set(testweb_synthetic.seeds["birds"])
    ranked = uncertain_pages([r for r in first if r["url"] not in seeds], {}, limit=200)
    to_on = next(p["url"] for p in ranked if not p["relevant"])
    to_off = next(p["url"] for p in ranked if p["relevant"])
    add_label(tmp_path / "labels.jsonl", to_on, True)
    add_label(tmp_path / "labels.jsonl", to_off, False)
    second, stats = crawl("second")
    judged = {r["url"]: r["relevant"] for r in second if r.get("relevance") is not None}
    assert judged[to_on] is True
    if to_off in judged:
        assert judged[to_off] is False
    # an example page: fetched with the seeds, before any page they lead to (concurrent
    # fetches, so the start batch is handled in the order its responses come back)
    assert to_on in [r["url"] for r in second[: len(seeds) + 1]]
    assert stats["focuscrawl/labels/examples"] == 1
    assert stats["focuscrawl/labels/known"] == 2
    assert stats["focuscrawl/labels/judged_as_labelled"] >= 1
