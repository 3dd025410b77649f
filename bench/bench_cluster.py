"""Cluster throughput: 1, 2 and 3 Redis-fed workers against one local-scheduler crawl.

All runs crawl the synthetic test web (``focuscrawl testweb``) for the topic "birds" from the
same seeds. Pages per second are measured from the crawl logs (first to last fetch, so process
start-up is left out). Target: one worker fed through Redis reaches at least 0.9 times the
pages per second of the same spider fed from its local frontier.

    .venv/bin/python bench/bench_cluster.py             # 400 pages per run
    .venv/bin/python bench/bench_cluster.py --pages 1000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cluster_memory import Server

from focuscrawl.cluster.state import publish_topic
from focuscrawl.evaluation.testweb import TestWebProcess
from focuscrawl.topic import load_topic

TARGET = 0.9
CLUSTER = [
    "-s",
    'DOWNLOADER_MIDDLEWARES={"focuscrawl.cluster.middleware.ClusterPolitenessMiddleware": 990}',
    "-s",
    'EXTENSIONS={"focuscrawl.cluster.stats.ClusterStats": 30}',
]


def crawl(workdir: Path, spider: str, name: str, pages: int, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, *extra]
    cmd += ["-s", f"CLOSESPIDER_PAGECOUNT={pages}", "-s", f"FOCUSCRAWL_CRAWL_LOG={name}.jsonl"]
    cmd += ["-s", "LOG_LEVEL=WARNING", "-s", "FOCUSCRAWL_PROGRESS_INTERVAL=0"]
    return subprocess.Popen(cmd, cwd=workdir, env=env, stderr=subprocess.DEVNULL, text=True)


def pages_per_second(logs: list[Path]) -> tuple[int, float]:
    times = sorted(json.loads(line)["t"] for log in logs for line in log.read_text().splitlines())
    if len(times) < 2 or times[-1] <= times[0]:
        return len(times), 0.0
    return len(times), (len(times) - 1) / (times[-1] - times[0])


def run_local(workdir: Path, seeds: str, pages: int) -> tuple[int, float]:
    proc = crawl(workdir, "topical", "local", pages, "-a", "topic=birds", "-a", f"seeds={seeds}")
    if proc.wait() != 0:
        sys.exit(f"local crawl failed ({proc.returncode}); see {workdir}")
    return pages_per_second([workdir / "local.jsonl"])


def run_cluster(workdir: Path, server: Server, seeds: str, pages: int, k: int) -> tuple[int, float]:
    server.client.flushall()
    publish_topic(server.client, "focuscrawl:topical_redis", load_topic("birds", seeds))
    names = [f"redis{k}-w{i}" for i in range(k)]
    redis = ["-s", f"REDIS_URL={server.url}", *CLUSTER]
    procs = [crawl(workdir, "topical_redis", n, pages // k, *redis) for n in names]
    for proc in procs:
        if proc.wait() != 0:
            sys.exit(f"worker failed ({proc.returncode}); see {workdir}")
    return pages_per_second([workdir / f"{n}.jsonl" for n in names])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fc-bench-cluster-"))
    server = Server()
    try:
        with TestWebProcess(corpus="synthetic") as web:
            seeds = ",".join(web.seeds["birds"])
            local = run_local(workdir, seeds, args.pages)
            results = {k: run_cluster(workdir, server, seeds, args.pages, k) for k in (1, 2, 3)}
    finally:
        server.stop()
    print(f"cluster throughput, synthetic test web, {args.pages} pages per run (2-core machine:")
    print("the test web and every worker share the same two cores)")
    print(f"{'run':28} {'pages':>6} {'pages/s':>8} {'vs local':>9}")
    print(f"{'local frontier, 1 process':28} {local[0]:6d} {local[1]:8.1f} {1:9.2f}")
    for k, (n, pps) in results.items():
        print(f"{f'Redis frontier, {k} worker(s)':28} {n:6d} {pps:8.1f} {pps / local[1]:9.2f}")
    ratio = results[1][1] / local[1]
    verdict = "met" if ratio >= TARGET else "MISSED"
    print(f"target: 1 Redis-fed worker >= {TARGET:.1f} x local: {ratio:.2f} ({verdict})")


if __name__ == "__main__":
    main()
