"""``topical_redis`` workers (real processes) crawl a small site on a real 3-master Redis
Cluster: frontier, politeness, stats, topic and change store all sharded (marked ``slow``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.cluster.state import publish_topic, read_status
from focuscrawl.topic import load_topic
from tests.cluster_site import ClusterSite
from tests.test_cluster_workers import PREFIX, Worker, check_complete

ON_CLUSTER = ["-s", "FOCUSCRAWL_REDIS_CLUSTER=True", "-s", "FOCUSCRAWL_REDIS_SHARDS=12"]


@pytest.mark.slow
def test_two_workers_crawl_the_site_on_a_redis_cluster(
    tmp_path: Path,
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    with ClusterSite(hosts=3, pages_per_host=20) as site:
        workers = [Worker(tmp_path, f"w{i}", redis_cluster_url, *ON_CLUSTER) for i in (1, 2)]
        try:
            assert all(w.wait_for_line("Waiting to join crawl") for w in workers)
            publish_topic(cluster_client, PREFIX, load_topic("birds", site.url(0)))
            codes = [w.finish() for w in workers]
        finally:
            for w in workers:
                w.kill()
        assert codes == [0, 0], "\n".join(w.log for w in workers)
        errors = [line for w in workers for line in w.lines if "Error caught on signal" in line]
        assert not errors, errors
        result = check_complete(site, cluster_client)
    status = read_status(cluster_client, PREFIX)
    assert len(status.workers) == 2 and result["pages"] >= len(site.urls)
    # the change store's records and the politeness keys are sharded over every master too
    masters = cluster_client.get_primaries()
    records = [
        sum(1 for _ in cluster_client.get_redis_connection(m).scan_iter(match="fc:chg:*:p:*"))
        for m in masters
    ]
    assert sum(records) == len(site.urls) and all(n > 0 for n in records), records
    assert cluster_client.hget(f"{PREFIX}:cluster", "shards") == b"12"


@pytest.mark.slow
def test_a_killed_workers_page_is_fetched_again_on_the_cluster(
    tmp_path: Path,
    redis_cluster_url: str,
    cluster_client,  # type: ignore[no-untyped-def]
) -> None:
    """SIGKILL a worker holding a page in flight: its lease expires (5 s) in the page's shard,
    another worker fetches it, and nothing else is lost."""
    import os
    import signal

    from tests.test_cluster_workers import seeds

    with ClusterSite(hosts=3, pages_per_host=20, hold_path="/p/1.html") as site:
        doomed = Worker(tmp_path, "doomed", redis_cluster_url, *ON_CLUSTER, *seeds(site))
        others: list[Worker] = []
        try:
            assert site.held.wait(120), doomed.log  # its request for /p/1.html is in flight
            os.kill(doomed.proc.pid, signal.SIGKILL)
            assert doomed.finish() == -signal.SIGKILL
            site.release_hold.set()
            assert read_status(cluster_client, PREFIX).in_flight >= 1  # leased to a dead worker
            others = [Worker(tmp_path, f"w{i}", redis_cluster_url, *ON_CLUSTER) for i in (2, 3)]
            codes = [w.finish() for w in others]
        finally:
            for w in (doomed, *others):
                w.kill()
        assert codes == [0, 0], "\n".join(w.log for w in others)
        result = check_complete(site, cluster_client)
        refetched = [agent for url, agent in site.page_fetches() if url == site.url(1)]
        assert refetched[0] == "doomed" and set(refetched[1:]) & {"w2", "w3"}
        assert result["redelivered"] >= 1
