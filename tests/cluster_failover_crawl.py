"""Real ``topical_redis`` workers crawl :class:`tests.cluster_site.ClusterSite` on a local Redis
Cluster with a replica per master, and the master of a shard the crawl uses is SIGKILLed
mid-crawl (its replica is promoted). Shared by ``tests/test_redis_cluster_crawl_failover.py``
and ``bench/bench_cluster_crawl_failover.py``.

What a run reports: pages of the site never fetched (lost: every page is reachable from the
seeds, so an uninterrupted crawl fetches all of them), pages fetched more than once (repeats)
and the lease re-deliveries counted in Redis, the workers' exit codes, and the stall: the
longest gap, from the kill on, between two fetches from the host whose frontier shard was on the
killed master (the failover, as the site sees it).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuseval.localcluster import LocalCluster

from focuscrawl.cluster.state import publish_topic, read_status
from focuscrawl.frontier.base import host_of
from focuscrawl.frontier.shard_keys import shard_of, shard_tags
from focuscrawl.topic import load_topic
from tests.cluster_site import ClusterSite
from tests.test_cluster_workers import PREFIX, Worker

SHARDS = 12
PAUSED = re.compile(r"is back after ([0-9.]+)s: crawl resumed")


@dataclass
class FailoverRun:
    pages: int = 0  # pages of the site
    lost: list[str] = field(default_factory=list)  # never fetched
    repeats: int = 0  # fetches beyond the first, summed over pages
    redelivered: int = 0  # lease re-deliveries counted in Redis
    codes: list[int] = field(default_factory=list)
    victim: int = 0  # port of the killed master
    killed_at: int = 0  # page fetches before the kill
    stall: float = 0.0  # longest gap between two fetches of the victim's host after the kill (s)
    paused: float = 0.0  # longest pause of a worker's frontier ("is back after N s")
    took: float = 0.0
    queued: int = -1
    in_flight: int = -1
    records: int = 0  # pages with a change-store record
    refused: int = 0  # workers that logged NOREPLICAS (min_replicas)
    states: list[str] = field(default_factory=list)  # the workers' last reported states
    errors: list[str] = field(default_factory=list)  # "Error caught on signal"/Traceback lines
    logs: list[str] = field(default_factory=list)


def shard_master(client: Any, url: str) -> int:
    """The port of the master serving the frontier shard of ``url``'s host."""
    tag = shard_tags(SHARDS)[shard_of(host_of(url), SHARDS)]
    return int(client.get_node_from_key(f"{PREFIX}:{{{tag}}}:n").port)


def crawl_with_failover(
    work: Path,
    *,
    workers: int = 2,
    pages_per_host: int = 60,
    kill_after: int = 40,
    wait: bool = False,
    kill: bool = True,
    timeout: float = 300,
    lease: float = 5.0,
    through_victim: bool = True,
    min_replicas: bool = False,
    extra: tuple[str, ...] = (),
) -> FailoverRun:
    """One crawl of the site by ``workers`` workers; the master of the shard of the site's
    first host SIGKILLed once ``kill_after`` pages were fetched (``wait``: ``WAIT 1`` on every
    master first, so that the replicas have every write acknowledged so far; ``kill=False``: the
    same crawl uninterrupted, for reference; ``min_replicas``: every node has
    ``min-replicas-to-write 1``, so the promoted master refuses writes (``NOREPLICAS``) until
    the killed node, restarted once a worker logged the refusal, is its replica)."""
    from redis.cluster import RedisCluster

    run = FailoverRun()
    cluster = LocalCluster(work / "cluster", masters=3, replicas=1, node_timeout_ms=1000).start()
    client = RedisCluster.from_url(cluster.url)
    if min_replicas:  # on the replicas too: the setting holds once one is promoted
        import redis

        for port in cluster.ports:
            node = redis.Redis(host="127.0.0.1", port=port)
            node.config_set("min-replicas-to-write", 1)
            node.config_set("min-replicas-max-lag", 10)
            node.close()
    on_cluster = ["-s", "FOCUSCRAWL_REDIS_CLUSTER=True", "-s", f"FOCUSCRAWL_REDIS_SHARDS={SHARDS}"]
    started: list[Worker] = []
    try:
        with ClusterSite(hosts=3, pages_per_host=pages_per_host) as site:
            run.pages = len(site.urls)
            run.victim = shard_master(client, site.url(0))
            # REDIS_URL names the master that will die (``through_victim``): the workers must
            # find the rest of the cluster without it
            port = next(p for p in cluster.ports if (p == run.victim) == through_victim)
            url = f"redis://127.0.0.1:{port}/0"
            started = [
                Worker(work, f"w{i}", url, *on_cluster, *extra, lease=lease)
                for i in range(1, workers + 1)
            ]
            assert all(w.wait_for_line("Waiting to join crawl") for w in started), started[0].log
            start = time.monotonic()
            publish_topic(client, PREFIX, load_topic("birds", f"{site.url(0)},{site.url(1)}"))
            assert site.wait_for_fetches(kill_after), started[0].log
            if wait:
                for master in client.get_primaries():
                    client.get_redis_connection(master).execute_command("WAIT", 1, 10_000)
            run.killed_at = len(site.page_fetches())
            killed = time.monotonic()
            if kill:
                cluster.kill(run.victim)
            if kill and min_replicas:  # the promoted master refuses writes: its replica back
                seen = threading.Event()
                for w in started:
                    threading.Thread(
                        target=lambda w=w: w.wait_for_line("NOREPLICAS", 60) and seen.set(),
                        daemon=True,
                    ).start()
                seen.wait(60)  # the first worker refused
                cluster.start_node(run.victim)
            stamps: list[tuple[float, str]] = []
            site_record = site._record

            def record(u: str, agent: str) -> None:  # time every fetch after the kill
                stamps.append((time.monotonic(), u))
                site_record(u, agent)

            site._record = record  # type: ignore[method-assign]
            try:
                run.codes = [w.finish(timeout) for w in started]
            except BaseException:
                (work / "state.txt").write_text(_state(client, site))
                raise
            run.took = time.monotonic() - start
            host = host_of(site.url(0))
            mine = [killed, *sorted(t for t, u in stamps if host_of(u) == host)]
            run.stall = max((b - a for a, b in zip(mine, mine[1:], strict=False)), default=0.0)
            counts = site.fetch_counts()
            run.lost = sorted(set(site.urls) - set(counts))
            run.repeats = sum(n - 1 for n in counts.values())
            status = read_status(client, PREFIX)
            run.redelivered = status.redelivered
            run.queued, run.in_flight = status.queued, status.in_flight
            run.states = sorted(w["state"] for w in status.workers.values())
            run.records = sum(
                1
                for m in client.get_primaries()
                for _ in client.get_redis_connection(m).scan_iter(match="fc:chg:*:p:*")
            )
        run.logs = [w.log for w in started]
        run.refused = sum(1 for log in run.logs if "NOREPLICAS" in log)
        pauses = [float(m) for log in run.logs for m in PAUSED.findall(log)]
        run.paused = max(pauses, default=0.0)
        run.errors = [
            line
            for w in started
            for line in w.lines
            if "Error caught on signal" in line or "Traceback" in line
        ]
    finally:
        for w in started:
            w.kill()
            (work / f"{w.name}.log").write_text(w.log)  # kept for a failed run
        client.close()
        cluster.stop()
    return run


def _state(client: Any, site: ClusterSite) -> str:
    """What Redis and the site hold when a crawl did not end: for a failed run's report."""
    from focuscrawl.frontier.shard_keys import frontier_prefixes

    lines = [f"never fetched: {sorted(set(site.urls) - set(site.fetch_counts()))}"]
    for prefix in frontier_prefixes(client, PREFIX):
        leases = client.zrange(f"{prefix}:lease", 0, -1, withscores=True)
        queued = client.zcard(f"{prefix}:hosts")
        if leases or queued:
            lines.append(f"{prefix}: hosts {queued}, leases {leases}")
    status = read_status(client, PREFIX)
    lines.append(f"queued {status.queued} in flight {status.in_flight} workers {status.workers}")
    return "\n".join(lines) + "\n"
