"""Several ``topical_redis`` workers (real processes) on one real Redis crawl a small site.

Marked ``slow`` (``make test`` runs them, ``make test-fast`` does not): each starts Scrapy
processes.

No URL is fetched twice except lease re-deliveries (each one counted in Redis); a killed
worker's in-flight pages are fetched by the others once its leases expire; the crawl survives a
Redis restart with AOF; every worker stops by itself when the frontier is empty.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest
import redis
from focuseval.site import loopback_hosts

from focuscrawl.cluster.state import publish_topic, read_status
from focuscrawl.netguard import allow_private_args
from focuscrawl.topic import load_topic
from tests.cluster_site import ClusterSite
from tests.conftest import RedisServer
from tests.fault_crawl import CrawlProcess

PREFIX = "focuscrawl:topical_redis"
CLUSTER_COMPONENTS = [
    "-s",
    'DOWNLOADER_MIDDLEWARES={"focuscrawl.cluster.middleware.ClusterPolitenessMiddleware": 990}',
    "-s",
    'EXTENSIONS={"focuscrawl.cluster.stats.ClusterStats": 30}',
]


class Worker(CrawlProcess):
    """``scrapy crawl topical_redis`` in a subprocess; its log lines can be waited for."""

    def __init__(
        self, cwd: Path, name: str, redis_url: str, *args: str, lease: float = 5.0
    ) -> None:
        argv = [*args, "-s", f"REDIS_URL={redis_url}", "-s", f"USER_AGENT={name}"]
        argv += [*CLUSTER_COMPONENTS, "-s", f"FOCUSCRAWL_REDIS_LEASE={lease:g}"]
        argv += ["-s", "FOCUSCRAWL_CLUSTER_STATS_INTERVAL=1"]
        argv += ["-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]
        # each worker its own local data (SQLite index), as on separate machines: workers
        # sharing one SQLite file in one directory failed with "database is locked"
        argv += ["-s", f"FOCUSCRAWL_DATA_DIR={cwd / (name + '-data')}"]
        argv += allow_private_args(loopback_hosts(3))  # ClusterSite's hosts: 127.0.0.2 and up
        self.name = name
        super().__init__(cwd, "topical_redis", argv)

    def wait_for_line(self, text: str, timeout: float = 120) -> bool:
        return self.wait_for(re.escape(text), timeout)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """After a failed assertion: never leave a worker running."""
        if self.proc.poll() is None:
            super().kill(sig)
            self.finish()


def seeds(site: ClusterSite) -> list[str]:
    return ["-a", "topic=birds", "-a", f"seeds={site.url(0)},{site.url(1)}"]


def check_complete(site: ClusterSite, client: redis.Redis) -> dict[str, int]:
    """Every page fetched; a page fetched twice only through a counted lease re-delivery."""
    counts = site.fetch_counts()
    assert set(counts) == set(site.urls), f"never fetched: {set(site.urls) - set(counts)}"
    status = read_status(client, PREFIX)
    repeats = sum(n - 1 for n in counts.values())
    assert repeats <= status.redelivered, (counts.most_common(5), status.redelivered)
    assert status.queued == 0 and status.in_flight == 0
    return {"repeats": repeats, "redelivered": status.redelivered, "pages": status.pages}


@pytest.mark.slow
def test_three_workers_share_the_crawl_and_stop_when_done(
    tmp_path: Path, redis_url: str, redis_client: redis.Redis
) -> None:
    with ClusterSite(hosts=3, pages_per_host=20) as site:
        feed = tmp_path / "w1.jsonl"
        warc = ["-s", f"FOCUSCRAWL_WARC_DIR={tmp_path / 'warc'}"]  # one folder for all workers
        workers = [  # one command each; a feed export, whose open reads every spider attribute
            Worker(tmp_path, f"w{i}", redis_url, *(["-O", str(feed)] if i == 1 else []), *warc)
            for i in (1, 2, 3)
        ]
        try:
            # started before the crawl has a topic (as scrapyd starts jobs): they wait for it
            assert all(w.wait_for_line("Waiting to join crawl") for w in workers)
            topic = load_topic("birds", f"{site.url(0)},{site.url(1)}")
            publish_topic(redis_client, PREFIX, topic)
            codes = [w.finish() for w in workers]
        finally:
            for w in workers:
                w.kill()
        assert codes == [0, 0, 0], "\n".join(w.log for w in workers)
        errors = [line for w in workers for line in w.lines if "Error caught on signal" in line]
        assert not errors and feed.exists(), errors
        result = check_complete(site, redis_client)
    # how the pages split between the workers depends on their start-up times: not asserted
    status = read_status(redis_client, PREFIX)
    assert len(status.workers) == 3
    assert all(w["state"].startswith("finished") for w in status.workers.values())
    assert result["pages"] >= len(site.urls)
    # each worker its own WARC series in the shared folder; together they hold every page
    archived = warc_responses(tmp_path / "warc")
    assert set(site.urls) <= {url for url, _ in archived}
    assert 1 <= len({series for _, series in archived}) <= 3


def warc_responses(folder: Path) -> list[tuple[str, str]]:
    """(URL, file series) of every response record in the folder's WARC files."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    for path in folder.glob("*.warc.gz"):
        with path.open("rb") as f:
            for rec in ArchiveIterator(f, check_digests="raise"):
                if rec.rec_type == "response":
                    rec.content_stream().read()
                    url = rec.rec_headers.get_header("WARC-Target-URI")
                    out.append((url, path.name.rsplit("-", 1)[0]))
    return out


@pytest.mark.slow
def test_killed_worker_and_redis_restart_lose_nothing(tmp_path: Path) -> None:
    """SIGKILL a worker holding a page in flight, then restart Redis (AOF) under the others."""
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    client = redis.Redis.from_url(server.url)
    try:
        with ClusterSite(hosts=3, pages_per_host=20, hold_path="/p/1.html") as site:
            doomed = Worker(tmp_path, "doomed", server.url, *seeds(site))
            assert site.held.wait(120), doomed.log  # its request for /p/1.html is in flight
            os.kill(doomed.proc.pid, signal.SIGKILL)
            assert doomed.finish() == -signal.SIGKILL
            site.release_hold.set()
            assert client.zcard(f"{PREFIX}:lease") >= 1  # leased to a dead worker

            others = [Worker(tmp_path, f"w{i}", server.url) for i in (2, 3)]
            assert site.wait_for_fetches(len(site.page_fetches()) + 8), others[0].log
            server.stop()  # SIGTERM: Redis writes its AOF and exits, mid-crawl
            assert others[0].wait_for_line("unreachable"), others[0].log
            server.start()  # same port, same AOF: the workers reconnect and carry on
            try:
                codes = [w.finish() for w in others]
            finally:
                for w in (doomed, *others):
                    w.kill()
            assert codes == [0, 0], "\n".join(w.log for w in others)

            result = check_complete(site, client)
            refetched = [agent for url, agent in site.page_fetches() if url == site.url(1)]
            assert refetched[0] == "doomed" and set(refetched[1:]) & {"w2", "w3"}
            assert result["redelivered"] >= 1
            states = sorted(w["state"] for w in read_status(client, PREFIX).workers.values())
            # the killed worker never reported again: status shows it as stale "running"
            assert [s.split()[0] for s in states] == ["finished", "finished", "running"]
    finally:
        client.close()
        server.stop()
