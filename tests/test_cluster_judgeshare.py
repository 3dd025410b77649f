"""The learned link judge across workers: one epoch counter and the pages' outcomes, shared
through a real Redis (:mod:`focuscrawl.cluster.judgeshare`)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis

from focuscrawl.cluster.judgeshare import MAX_EPOCH, RedisJudgeShare
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import PageJudge
from focuscrawl.strategy.policy import CrawlPolicy
from focuscrawl.strategy.scoring import SEED_SCORE, SharkParams
from tests.conftest import free_port
from tests.test_strategy_linkjudge import fetch, fp
from tests.test_strategy_policy import KeywordModel


def prefix() -> str:
    return f"test:judge:{uuid.uuid4().hex[:8]}"


def test_workers_count_one_epoch_and_learn_each_others_outcomes(redis_client: Any) -> None:
    p = prefix()
    a = RedisJudgeShare(redis_client, p, "a")
    b = RedisJudgeShare(redis_client, p, "b")
    assert a.start() == b.start() == 0
    assert a.advance([("http://h/1", True)]) == (1, [], True)  # its own entry is skipped
    assert b.advance([("http://h/2", False)]) == (2, [("http://h/1", True)], True)
    assert a.advance([]) == (3, [("http://h/2", False)], True)
    assert b.advance([]) == (4, [], True)  # nothing new
    late = RedisJudgeShare(redis_client, p, "c")
    assert late.start() == 4  # a worker that joins late starts at the crawl's epoch
    assert late.advance([])[1] == [("http://h/1", True), ("http://h/2", False)]


def test_epoch_only_shares_no_outcomes(redis_client: Any) -> None:
    p = prefix()
    a = RedisJudgeShare(redis_client, p, "a", share=False)
    assert a.advance([("http://h/1", True)]) == (1, [], True)
    assert not redis_client.exists(f"{p}:judge:outcomes")


def test_entries_no_worker_wrote_are_skipped_and_counted(redis_client: Any) -> None:
    p = prefix()
    stream = f"{p}:judge:outcomes"
    good = ["http://h/ok", 1]
    bad_items = [["file:///etc/passwd", 1], ["http://h/x", 7], "http://h/y", [1, 1]]
    redis_client.xadd(stream, {"w": "x", "d": json.dumps([good, *bad_items])})
    redis_client.xadd(stream, {"w": "x", "d": "{not json"})
    redis_client.xadd(stream, {"w": "x", "d": json.dumps({"a": 1})})
    redis_client.xadd(stream, {"w": "x"})
    redis_client.xadd(stream, {"w": "x", "d": "x" * (2 << 20)})
    share = RedisJudgeShare(redis_client, p, "me")
    epoch, theirs, _ = share.advance([])
    assert theirs == [("http://h/ok", True)]
    assert share.skipped == len(bad_items) + 4
    redis_client.set(f"{p}:judge:epoch", str(MAX_EPOCH * 4))
    assert share.advance([])[0] == MAX_EPOCH  # a hostile epoch is capped


def test_a_redis_away_keeps_the_outcomes_and_the_epoch_goes_on(redis_client: Any) -> None:
    away = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
    share = RedisJudgeShare(away, prefix(), "a", url="redis://:s3cret@127.0.0.1:1/0")
    assert share.start() == 0
    assert share.advance([("http://h/1", True)]) == (-1, [], False)
    assert share.errors == 2
    policy, _ = worker(share)
    policy._outbox = [("http://h/1", True)]
    policy._next_epoch()
    assert policy._epoch == 1  # counted locally
    assert policy._outbox == [("http://h/1", True)]  # sent when Redis is back
    policy.judge_share = RedisJudgeShare(redis_client, prefix(), "a")
    policy._next_epoch()
    assert policy._outbox == []


def worker(share: RedisJudgeShare | None) -> tuple[CrawlPolicy, Any]:
    params = SharkParams(votes=0.0, words=0.0, judge_explore=0.0)
    policy = CrawlPolicy(PageJudge(KeywordModel()), "learned", params)
    if share is not None:
        policy.share_judge(share)
    return policy, policy.link_judge


def test_two_workers_one_frontier_learn_the_topics_block_together(redis_client: Any) -> None:
    """Two workers take turns over one frontier, each with its own policy and judge: they count
    one epoch and each learns the outcomes of the links it queued that the other fetched."""
    p = prefix()
    policies = [worker(RedisJudgeShare(redis_client, p, name))[0] for name in ("a", "b")]
    frontier = MemoryFrontier()
    frontier.open()
    seed = RequestState(seed=True, score=SEED_SCORE)
    frontier.push("http://w/bird/0", SEED_SCORE, fp("http://w/bird/0"), seed.to_wire())
    fetched: list[str] = []
    while len(fetched) < 200:
        entry = frontier.pop()
        if entry is None:
            break
        policy = policies[len(fetched) % 2]
        fetched.append(entry.url)
        pg = fetch(entry.url)
        state = RequestState.from_wire(entry.data)
        judgement = policy.page_judge.judge(pg, seed=state.seed, example=state.example)
        policy.learn(pg, state, judgement)
        for url, s, child in policy.links(pg, entry.url, state, judgement):
            frontier.push(url, s, fp(url), child.to_wire())
    assert len(fetched) == 200
    epoch = int(redis_client.get(f"{p}:judge:epoch"))
    assert epoch >= 6  # each re-scored about every 25 of its own pages
    for policy in policies:
        assert policy.foreign_outcomes > 50  # the other's pages, learned
        assert policy._epoch >= epoch - 1
    birds = sum("/bird/" in u for u in fetched[-100:])
    assert birds >= 90


def test_a_learned_crawl_on_a_redis_frontier_shares_its_judge(
    testweb_synthetic: Any, redis_url: str, redis_client: Any, tmp_path: Any
) -> None:
    """``strategy=learned`` with a Redis frontier (refused before): the crawl counts its epochs
    in Redis and writes its pages' outcomes to the stream."""
    import os
    import subprocess
    import sys

    from focuscrawl.netguard import allow_private_args

    p = prefix()
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(testweb_synthetic.seeds["birds"]), "-a", "strategy=learned"]
    cmd += allow_private_args(testweb_synthetic.hosts)
    for setting in (
        f"REDIS_URL={redis_url}",
        f"FOCUSCRAWL_REDIS_PREFIX={p}",
        "FOCUSCRAWL_DATA_DIR=data",
        "FOCUSCRAWL_STATS_FILE=stats.json",
        "CLOSESPIDER_PAGECOUNT=120",
    ):
        cmd += ["-s", setting]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert int(redis_client.get(f"{p}:judge:epoch")) >= 2
    assert stats["focuscrawl/judge_share/sent"] >= 50
    assert stats["focuscrawl/judge_share/errors"] == 0
    assert redis_client.xlen(f"{p}:judge:outcomes") >= 2
