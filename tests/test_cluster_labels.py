"""The user's labels of a cluster crawl in the frontier's Redis (``<prefix>:labels``), against a
real redis-server: read as they are added, hostile entries skipped and counted, capped, Redis
away counted with its password masked, ``focuscrawl label --redis``, and a real Redis crawl that
judges the labelled pages as labelled."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.cluster import labels as cluster_labels
from focuscrawl.cluster.labels import RedisLabelBook, add_redis_label, labels_key
from focuscrawl.netguard import allow_private_args
from focuscrawl.relevance.labels import LabelError, UserLabels, uncertain_pages
from tests.browser import serving
from tests.conftest import free_port
from tests.test_labels import _post


def prefix() -> str:
    return f"test:labels:{uuid.uuid4().hex[:8]}"


def test_labels_are_read_as_they_are_added_and_the_last_one_wins(redis_client: Any) -> None:
    p = prefix()
    book = RedisLabelBook(redis_client, p)
    assert book.poll() == []  # no stream yet
    add_redis_label(redis_client, p, "http://a.test/1", True)
    add_redis_label(redis_client, p, "http://a.test/2", False)
    assert [(x.url, x.on_topic) for x in book.poll()] == [
        ("http://a.test/1", True),
        ("http://a.test/2", False),
    ]
    assert book.poll() == []  # each entry read once
    add_redis_label(redis_client, p, "http://a.test/1", False)
    add_redis_label(redis_client, p, "http://a.test/2", False)  # no change: not reported
    assert [(x.url, x.on_topic) for x in book.poll()] == [("http://a.test/1", False)]
    # a worker that starts later reads every label from the first one kept
    late = RedisLabelBook(redis_client, p).read_all()
    assert late.labels == {"http://a.test/1": False, "http://a.test/2": False}
    with pytest.raises(LabelError):
        add_redis_label(redis_client, p, "javascript:alert(1)", True)


def test_hostile_entries_are_skipped_and_counted(redis_client: Any) -> None:
    p = prefix()
    key = labels_key(p)
    hostile: list[dict[str, Any]] = [
        {"x": "no l field"},
        {"l": b"\xff\xfe not utf-8 json"},
        {"l": "not json"},
        {"l": json.dumps([1, 2])},
        {"l": json.dumps({"url": "ftp://a.test/x", "on_topic": True})},
        {"l": json.dumps({"url": "http://a.test/x", "on_topic": "yes"})},
        {"l": json.dumps({"url": "http://a.test/" + "x" * 9000, "on_topic": True})},
    ]
    for fields in hostile:
        redis_client.xadd(key, fields)
    add_redis_label(redis_client, p, "http://a.test/ok", True)
    book = RedisLabelBook(redis_client, p)
    assert [x.url for x in book.poll()] == ["http://a.test/ok"]
    assert book.skipped == len(hostile)
    redis_client.set(f"{p}:other", "x")  # a key of another type under the prefix: no harm
    redis_client.delete(key)
    redis_client.set(key, "not a stream")
    assert book.poll() == [] and book.errors == 1  # a wrong-type key is an error, counted


def test_the_stream_and_the_book_are_capped(
    redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = prefix()
    monkeypatch.setattr(cluster_labels, "STREAM_MAXLEN", 10)
    monkeypatch.setattr(cluster_labels, "MAX_LABELS", 5)
    monkeypatch.setattr(cluster_labels, "READ_ENTRIES", 7)
    for i in range(600):
        add_redis_label(redis_client, p, f"http://a.test/{i}", True)
    assert redis_client.xlen(labels_key(p)) < 600  # trimmed (MAXLEN ~: in whole nodes)
    book = RedisLabelBook(redis_client, p)
    assert len(book.poll()) == 5  # at most READ_ENTRIES entries a poll, MAX_LABELS URLs kept
    assert book.dropped == 2
    book.read_all()
    assert len(book) == 5 and book.dropped == redis_client.xlen(labels_key(p)) - 5


def test_redis_away_is_counted_and_its_password_never_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"
    book = RedisLabelBook(redis.Redis.from_url(url, socket_connect_timeout=0.5), prefix(), url)
    with caplog.at_level(logging.WARNING):
        assert book.poll() == []
    assert book.errors == 1
    assert "s3cret-pw" not in caplog.text and "did not answer" in caplog.text
    labels = UserLabels("unused.jsonl", poll_every=1, book=book)
    assert labels.label_of("http://a.test/1") is None  # the crawl goes on


def test_the_label_command_writes_to_the_crawls_redis(redis_url: str, redis_client: Any) -> None:
    p = prefix()
    cmd = [sys.executable, "-m", "focuscrawl.cli", "label", "--redis", redis_url, "--prefix", p]
    proc = subprocess.run(
        [*cmd, "--url", "http://a.test/on", "--on"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    book = RedisLabelBook(redis_client, p).read_all()
    assert book.labels == {"http://a.test/on": True}


def test_the_review_page_reads_and_writes_the_crawls_redis(
    redis_url: str, redis_client: Any, tmp_path: Path
) -> None:
    p = prefix()
    add_redis_label(redis_client, p, "http://a.test/1", False)
    log = tmp_path / "log.jsonl"
    rows = [
        {"url": "http://a.test/1", "status": 200, "relevance": 0.5, "relevant": True},
        {"url": "http://a.test/2", "status": 200, "relevance": 0.1, "relevant": False},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ("--index", str(tmp_path / "index.sqlite"), "--crawl-log", str(log))
    with serving(*args, "--redis", redis_url, "--prefix", p) as url:
        with urllib.request.urlopen(url + "api/review", timeout=10) as resp:
            listed = json.loads(resp.read())
        assert [x["url"] for x in listed["pages"]] == ["http://a.test/2"]  # 1 is labelled
        with urllib.request.urlopen(url + "review", timeout=10) as resp:
            token = resp.read().decode().split('name="token" value="', 1)[1].split('"', 1)[0]
        ok = json.dumps({"url": "http://a.test/2", "label": "on", "token": token}).encode()
        assert _post(url + "api/label", ok, "application/json")[0] == 200
        bad = json.dumps({"url": "http://a.test/2", "label": "off", "token": "x"}).encode()
        assert _post(url + "api/label", bad, "application/json")[0] == 403
    assert not (tmp_path / "labels.jsonl").exists()
    book = RedisLabelBook(redis_client, p).read_all()
    assert book.labels == {"http://a.test/1": False, "http://a.test/2": True}


def test_a_redis_crawl_judges_the_labels_in_redis(
    testweb_synthetic: Any, redis_url: str, redis_client: Any, tmp_path: Path
) -> None:
    """A first Redis crawl; the user labels its least certain off-topic page on topic, in the
    crawl's Redis; a second crawl (a worker starting later) reads it from there, fetches that
    page as an example and judges it on topic. Hostile entries in the stream are counted."""

    def crawl(name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
        cmd += ["-a", "seeds=" + ",".join(testweb_synthetic.seeds["birds"])]
        cmd += allow_private_args(testweb_synthetic.hosts)
        for setting in (
            f"REDIS_URL={redis_url}",
            f"FOCUSCRAWL_REDIS_PREFIX={p}:{name}",
            f"FOCUSCRAWL_DATA_DIR={tmp_path / name}",
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

    p = prefix()
    first, _ = crawl("first")
    seeds = set(testweb_synthetic.seeds["birds"])
    ranked = uncertain_pages([r for r in first if r["url"] not in seeds], {}, limit=200)
    to_on = next(r["url"] for r in ranked if not r["relevant"])
    redis_client.xadd(labels_key(f"{p}:second"), {"l": "not a label"})
    add_redis_label(redis_client, f"{p}:second", to_on, True)
    second, stats = crawl("second")
    assert not (tmp_path / "second" / "labels.jsonl").exists()  # Redis, not the data dir
    judged = {r["url"]: r["relevant"] for r in second if r.get("relevance") is not None}
    assert judged[to_on] is True
    assert stats["focuscrawl/labels/examples"] == 1
    assert stats["focuscrawl/labels/known"] == 1
    assert stats["focuscrawl/labels/skipped"] == 1
    assert stats["focuscrawl/labels/redis_errors"] == 0


def test_the_review_page_with_redis_away_answers_503(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"url": "http://a.test/1", "status": 200, "relevance": 0.2}) + "\n")
    away = f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"
    args = ("--index", str(tmp_path / "index.sqlite"), "--crawl-log", str(log))
    with serving(*args, "--redis", away, "--prefix", prefix()) as url:
        with urllib.request.urlopen(url + "review", timeout=30) as resp:
            html = resp.read().decode()  # listed: no label could be read
        assert "http://a.test/1" in html and "s3cret-pw" not in html
        token = html.split('name="token" value="', 1)[1].split('"', 1)[0]
        body = json.dumps({"url": "http://a.test/1", "label": "on", "token": token}).encode()
        status, answer = _post(url + "api/label", body, "application/json")
        assert status == 503 and b"s3cret-pw" not in answer
