"""A topic and seed pages read from Redis are checked as local ones are: a joining worker never
crawls a non-http(s) seed, never reads a local file named in Redis, and ignores forged seed
pages (counted), against a real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.utils.test import get_crawler

from focuscrawl.cluster.state import publish_topic, read_topic
from focuscrawl.defaults import DEFAULTS
from focuscrawl.spiders.topical_redis import MAX_SHARED_PAGE, TopicalRedisSpider
from focuscrawl.topic import Topic, TopicError, shared_topic

PREFIX = "fctopic:topical_redis"
PAGE = (
    "<html><head><title>Birds</title></head><body><article><p>Herons, egrets and warblers "
    "nest in the reeds; birds migrate in spring.</p></article></body></html>"
)


def spider(redis_url: str, **kwargs: Any) -> TopicalRedisSpider:
    settings = {**DEFAULTS, "REDIS_URL": redis_url, "FOCUSCRAWL_REDIS_PREFIX": "fctopic:%(spider)s"}
    crawler = get_crawler(TopicalRedisSpider, settings)
    return TopicalRedisSpider.from_crawler(crawler, **kwargs)


def forge_topic(client: Any, **record: Any) -> None:
    client.set(f"{PREFIX}:topic", json.dumps({"name": "birds", "keywords": ["birds"], **record}))


@pytest.mark.parametrize(
    "seed",
    ["file:///etc/passwd", "/etc/passwd", "data:text/html,hi", "ftp://a.test/", "gopher://x/"],
)
def test_a_topic_with_a_non_http_seed_is_refused(redis_client: Any, seed: str) -> None:
    forge_topic(redis_client, seeds=["http://a.test/", seed])
    with pytest.raises(TopicError, match="not an http"):
        read_topic(redis_client, PREFIX)


@pytest.mark.parametrize(
    "record",
    [
        ["not", "an", "object"],
        {"name": "", "seeds": ["http://a.test/"]},
        {"name": "birds", "seeds": "http://a.test/"},
        {"name": "birds", "seeds": []},
        {"name": "birds", "seeds": ["http://a.test/"], "keywords": [1, 2]},
    ],
)
def test_malformed_topics_are_refused(record: Any) -> None:
    with pytest.raises(TopicError):
        shared_topic(record, "P:topic")


def test_local_example_paths_from_redis_are_never_read(
    redis_client: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text("<p>private key material</p>")
    forge_topic(
        redis_client,
        seeds=["http://a.test/"],
        examples=[str(secret), "file:///etc/passwd", "http://a.test/ex"],
        negatives=["/etc/shadow"],
        source="/root/.ssh/id_rsa",
    )
    topic = read_topic(redis_client, PREFIX)
    assert topic.examples == ["http://a.test/ex"] and topic.negatives == []
    assert topic.example_files() == [] and topic.source == f"{PREFIX}:topic"
    assert "are not URLs and are not read" in caplog.text


def test_the_first_worker_publishes_urls_only(redis_client: Any, tmp_path: Path) -> None:
    local = Topic("birds", ["birds"], ["http://a.test/"], examples=[str(tmp_path / "e.html")])
    local.examples.append("http://a.test/ex")
    assert publish_topic(redis_client, PREFIX, local)
    record = json.loads(redis_client.get(f"{PREFIX}:topic"))
    assert record["examples"] == ["http://a.test/ex"]


def test_a_joining_worker_stops_on_a_forged_topic(redis_url: str, redis_client: Any) -> None:
    forge_topic(redis_client, seeds=["file:///etc/passwd"])
    joiner = spider(redis_url)
    with pytest.raises(CloseSpider) as info:
        joiner.setup(joiner)
    assert info.value.reason == "bad_topic"
    joiner.spider_closed_redis(joiner)


def test_forged_seed_pages_are_ignored_and_counted(redis_url: str, redis_client: Any) -> None:
    worker = spider(redis_url, topic="birds", seeds="http://a.test/seed")
    worker.setup(worker)
    calib = f"{PREFIX}:calib"
    forged = [
        b"{not json",
        json.dumps(["a", "list"]),
        json.dumps({"w": "x", "kind": "seed", "url": "file:///etc/passwd", "html": PAGE}),
        json.dumps({"w": "x", "kind": "re", "url": "http://a.test/", "html": PAGE}),
        json.dumps({"w": "x", "kind": "seed", "url": "http://a.test/", "html": ["x"]}),
        json.dumps({"w": "x", "kind": "ex", "url": "http://a.test/", "html": "x" * (MAX_SHARED_PAGE + 1)}),
    ]  # fmt: skip
    redis_client.rpush(calib, *forged)
    redis_client.rpush(calib, json.dumps({"w": "x", "kind": "seed", "url": "http://a.test/s", "html": PAGE}))  # fmt: skip
    worker._replay_calibration()
    stats = worker.crawler.stats
    assert stats.get_value("focuscrawl/skip/bad_calibration_entry") == len(forged)
    for kind, n in (("json", 2), ("url", 1), ("kind", 1), ("html", 2)):
        assert stats.get_value(f"focuscrawl/skip/bad_calibration_entry/{kind}") == n
    assert worker.page_judge.seed_scores  # the good record was judged as a seed
    worker.spider_closed_redis(worker)
