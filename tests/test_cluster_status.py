"""``focuscrawl status`` and the cluster state it reads, against a real Redis."""

from __future__ import annotations

import json

import pytest

from focuscrawl.cli import main
from focuscrawl.cluster.state import publish_topic, read_status, read_topic, write_worker
from focuscrawl.frontier.redis_frontier import RedisFrontier
from focuscrawl.topic import Topic, TopicError
from tests.frontier_contract import push

PREFIX = "focuscrawl:topical_redis"


def test_status_shows_queue_in_flight_and_workers(
    redis_url: str, redis_client, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    frontier = RedisFrontier(redis_url, PREFIX)
    frontier.open()
    for i in range(5):
        push(frontier, f"http://a.test/{i}", i / 10)
    assert frontier.pop() is not None  # one in flight (closing would put it back: after)
    publish_topic(redis_client, PREFIX, Topic("birds", ["birds"], ["http://a.test/"]))
    write_worker(redis_client, PREFIX, "m1:10", {"state": "running", "pages": 30, "judged": 20,
                                                 "relevant": 15, "harvest_rate": 0.75, "updated": 0})  # fmt: skip
    write_worker(redis_client, PREFIX, "m2:11", {"state": "running", "pages": 10, "judged": 10,
                                                 "relevant": 5, "harvest_rate": 0.5, "updated": 0})  # fmt: skip

    assert main(["status", "--redis-url", redis_url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["queued"], out["in_flight"], out["pages"], out["relevant"]) == (4, 1, 40, 20)
    assert out["harvest_rate"] == pytest.approx(20 / 30, abs=1e-4)
    assert out["topic"] == "birds" and set(out["workers"]) == {"m1:10", "m2:11"}

    assert main(["status", "--redis-url", redis_url]) == 0
    text = capsys.readouterr().out
    assert "queued 4" in text and "in flight 1" in text and "m2:11" in text
    frontier.close()


def test_status_without_redis_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--redis-url", ""]) == 2
    assert "no Redis" in capsys.readouterr().err


def test_topic_round_trips_and_first_publisher_wins(redis_url: str, redis_client) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TopicError, match="no topic in Redis"):
        read_topic(redis_client, PREFIX)
    first = Topic("birds", ["birds", "owls"], ["http://a.test/"], examples=["http://a.test/ex"])
    assert publish_topic(redis_client, PREFIX, first)
    assert not publish_topic(redis_client, PREFIX, Topic("cats", ["cats"], ["http://b.test/"]))
    got = read_topic(redis_client, PREFIX)
    assert (got.name, got.keywords, got.seeds, got.examples) == (
        "birds", ["birds", "owls"], ["http://a.test/"], ["http://a.test/ex"],
    )  # fmt: skip
    assert read_status(redis_client, PREFIX).topic == "birds"
