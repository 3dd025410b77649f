"""A lost Redis is noticed: a Redis that comes back empty (restarted without persistence) has
lost the crawl's epoch key, and the crawl stops with one line and exit status 5 instead of
ending as if it had finished. Each test runs its own real ``redis-server`` on a free port and
restarts it empty (never the session-wide one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.crawlstop import FRONTIER_LOST_EXIT
from focuscrawl.frontier.redis_frontier import RedisFrontier
from focuscrawl.frontier.redis_health import FrontierLost
from tests.conftest import RedisServer
from tests.fault_crawl import BFS, CrawlProcess, crawl_args, topic_file
from tests.frontier_contract import push


@pytest.fixture
def volatile(tmp_path: Path) -> Iterator[RedisServer]:
    own = RedisServer(tmp_path)  # no AOF, no RDB: a restart comes back empty
    own.start()
    yield own
    own.stop()


def test_an_emptied_redis_raises_frontier_lost(volatile: RedisServer) -> None:
    f = RedisFrontier(volatile.url, "fclost:topical", lease=60.0, capacity=1000)
    f.open()
    push(f, "http://a.test/1", 0.5)
    assert len(f) == 1
    other = RedisFrontier(volatile.url, "fclost:topical", lease=60.0, capacity=1000)
    other.open()  # a second worker joins the same crawl: same epoch
    assert other.epoch == f.epoch and len(other) == 1
    other.close()
    volatile.stop()
    volatile.start()  # the same port, nothing kept
    with pytest.raises(FrontierLost, match="Redis lost the frontier.*AOF"):
        len(f)
    f.wire.abandon()


def test_a_redis_flushed_mid_crawl_stops_the_crawl_non_zero(
    volatile: RedisServer, fault_web: Any, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    extra = [*BFS, "-s", f"REDIS_URL={volatile.url}", "-s", "FOCUSCRAWL_REDIS_LEASE=30"]
    extra += ["-s", "FOCUSCRAWL_CHANGE_STORE=sqlite"]  # the frontier alone on the lost Redis
    crawl = CrawlProcess(
        work, "topical", crawl_args(fault_web, topic_file(work, fault_web), work, 1, *extra)
    )
    try:
        assert crawl.wait_for_pages(30), crawl.log[-3000:]
        volatile.stop()
        volatile.start()  # back empty: the frontier (and its epoch) is gone
        status = crawl.finish()
    finally:
        crawl.finish()
    assert status == FRONTIER_LOST_EXIT, crawl.log[-3000:]
    lines = [line for line in crawl.log.splitlines() if "Redis lost the frontier" in line]
    assert len(lines) == 1 and "ERROR" in lines[0], crawl.log[-3000:]


def test_a_cluster_master_that_lost_its_keys_is_noticed(
    redis_cluster_url: str, cluster_client: Any
) -> None:
    """The epoch is in every shard's own slot (``P:{t}:meta``): a master that comes back empty
    (or an empty replica that took over) is noticed whichever shards it serves."""
    from redis.cluster import RedisCluster

    from focuscrawl.frontier.redis_shards import ShardedRedisFrontier

    f = ShardedRedisFrontier(redis_cluster_url, "fclost:topical", shards=6)
    f.open()
    push(f, "http://a.test/1", 0.5)
    assert len(f) == 1
    node = cluster_client.get_node_from_key(f"{f.shards[-1].prefix}:meta")
    assert node in cluster_client.get_primaries()
    cluster_client.flushall(target_nodes=[node])  # one master of three loses everything
    with pytest.raises(FrontierLost):
        len(f)
    for shard in f.shards:
        shard.wire.abandon()
    assert RedisCluster.PRIMARIES
