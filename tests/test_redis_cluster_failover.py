"""A master of the Redis Cluster dies mid-crawl: its replica takes over and the frontier goes on
there, losing nothing that was replicated (``WAIT``) before the kill (marked ``slow``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from focuseval.localcluster import LocalCluster

from focuscrawl.frontier.redis_shards import ShardedRedisFrontier
from tests.frontier_contract import push

PREFIX = "fcfail:topical"


@pytest.mark.slow
def test_frontier_survives_a_master_failover(tmp_path: Path) -> None:
    from redis.cluster import RedisCluster

    cluster = LocalCluster(tmp_path, masters=3, replicas=1, node_timeout_ms=1000).start()
    try:
        frontier = ShardedRedisFrontier(cluster.url, PREFIX, shards=6, retry_timeout=120.0)
        frontier.open()
        urls = [f"http://h{i % 30}.test/p{i}" for i in range(300)]
        for i, url in enumerate(urls):
            push(frontier, url, (i * 13 % 300) / 300)
        got: list[str] = []
        for _ in range(50):
            entry = frontier.pop()
            assert entry is not None
            got.append(entry.url)
            frontier.ack(entry.fingerprint)
        frontier.flush()
        client = RedisCluster.from_url(cluster.url)
        for master in client.get_primaries():  # every write so far is on its replica too
            assert client.get_redis_connection(master).execute_command("WAIT", 1, 10_000) == 1
        # kill the master serving the shard of the next pop
        k = frontier._best(set())
        assert k is not None
        victim = int(frontier.shards[k].url.rsplit(":", 1)[1].split("/")[0])
        client.close()
        cluster.kill(victim)
        while True:  # the shard finds its slot's new master, and the crawl goes on
            entry = frontier.pop()
            if entry is None:
                break
            got.append(entry.url)
            frontier.ack(entry.fingerprint)
        assert sorted(got) == sorted(urls)  # nothing lost, nothing twice
        moved = frontier.shards[k].url
        assert not moved.endswith(f":{victim}/0")
        assert len(frontier) == 0 and frontier.in_flight() == 0
        frontier.close()
    finally:
        cluster.stop()
