"""A page whose processing kills the crawler (``tests.poison``: ``os._exit`` as an OOM kill or a
parser's segfault would) comes back once after the death, kills again, and is then quarantined:
the next run (JOBDIR) or worker (Redis leases) logs it, counts it and crawls every other page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from focuseval.site import loopback_hosts

from focuscrawl.cluster.state import read_status
from focuscrawl.frontier.quarantine import QUARANTINE_FILE, read_records, read_redis_quarantine
from focuscrawl.netguard import allow_private_args
from tests.cluster_site import ClusterSite
from tests.poison import EXIT_CODE, MARK
from tests.test_cluster_workers import PREFIX, Worker, seeds

ROOT = Path(__file__).resolve().parents[1]
POISON = "/p/4.html"
POISON_ARGS = [
    "-s",
    'SPIDER_MIDDLEWARES={"tests.poison.PoisonMiddleware": 50}',
    "-s",
    f"TEST_POISON={POISON}",
]


def local_crawl(tmp_path: Path, site: ClusterSite, run: int) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings",
        "PYTHONPATH": str(ROOT),  # tests.poison
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", f"seeds={site.url(0)}", "-s", f"JOBDIR={tmp_path / 'job'}"]
    cmd += ["-s", "FOCUSCRAWL_CHANGE_ENABLED=False", "-s", f"USER_AGENT=run{run}"]
    cmd += ["-s", f"FOCUSCRAWL_DATA_DIR={tmp_path / 'data'}"]
    cmd += ["-s", f"FOCUSCRAWL_STATS_FILE={tmp_path / f'stats{run}.json'}"]
    cmd += [*POISON_ARGS, *allow_private_args(loopback_hosts(3))]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


def test_jobdir_poison_page_is_quarantined_after_two_deaths(tmp_path: Path) -> None:
    with ClusterSite(hosts=3, pages_per_host=10) as site:
        poison = site.url(4)
        assert poison.endswith(POISON)
        for run in (1, 2):
            died = local_crawl(tmp_path, site, run)
            assert died.returncode == EXIT_CODE, died.stderr[-3000:]
            assert f"{MARK} {poison}" in died.stderr
            assert "Quarantined" not in died.stderr
        done = local_crawl(tmp_path, site, 3)
        assert done.returncode == 0, done.stderr[-3000:]
        counts = site.fetch_counts()
        agents = [agent for url, agent in site.page_fetches() if url == poison]
    warnings = [line for line in done.stderr.splitlines() if "Quarantined" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0] and poison in warnings[0]
    assert agents == ["run1", "run2"]  # delivered twice, never a third time
    assert set(counts) == set(site.urls), f"never fetched: {set(site.urls) - set(counts)}"
    stats = json.loads((tmp_path / "stats3.json").read_text())
    assert stats["focuscrawl/quarantine/urls"] == 1
    assert stats["focuscrawl/frontier/left"] == 0
    (record,) = read_records(str(tmp_path / "job" / QUARANTINE_FILE))
    assert (record.url, record.attempts) == (poison, 2)


@pytest.mark.slow
def test_redis_poison_page_is_quarantined_after_two_dead_workers(
    tmp_path: Path,
    redis_url: str,
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import tests.poison
    with ClusterSite(hosts=3, pages_per_host=10) as site:
        poison = site.url(4)
        workers = []
        try:
            # w1 starts the crawl and dies working on the poison; restarted on its data dir, it
            # finds its work mark, blames the page (its lease due now), gets it again and dies
            for args in (seeds(site), []):
                worker = Worker(tmp_path, "w1", redis_url, *args, *POISON_ARGS)
                workers.append(worker)
                assert worker.finish() == EXIT_CODE, worker.log
                assert worker.wait_for_line(f"{MARK} {poison}", 0), worker.log
            last = Worker(tmp_path, "w1", redis_url, *POISON_ARGS)
            workers.append(last)
            assert last.finish() == 0, last.log
        finally:
            for w in workers:
                w.kill()
        counts = site.fetch_counts()
        agents = [agent for url, agent in site.page_fetches() if url == poison]
    warnings = [line for line in last.lines if "Quarantined" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0] and poison in warnings[0]
    assert agents == ["w1", "w1"]
    assert set(counts) == set(site.urls), f"never fetched: {set(site.urls) - set(counts)}"
    (record,) = read_redis_quarantine(redis_client, PREFIX)
    assert (record.url, record.attempts) == (poison, 2)
    assert redis_client.hget(f"{PREFIX}:stats", "quarantine/urls") == b"1"
    status = read_status(redis_client, PREFIX)
    assert status.queued == 0 and status.in_flight == 0
