"""Cluster throughput: 1, 2 and 3 Redis-fed workers against one local-scheduler crawl.

All runs crawl the synthetic test web (``focuscrawl testweb``) for the topic "birds" from the
same seeds. Pages per second are measured from the crawl logs (first to last fetch, so process
start-up is left out). Target: one worker fed through Redis reaches at least 0.9 times the
pages per second of the same spider fed from its local frontier.

    .venv/bin/python bench/bench_cluster.py             # 400 pages per run
    .venv/bin/python bench/bench_cluster.py --pages 1000 --rounds 3

Wall-clock rates are noisy on a shared machine, so each run also reports the CPU seconds per
page of its crawl processes (and with redis-server's CPU added); ``--rounds`` alternates local
and one-worker runs and the target ratio is over all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench_cluster_memory import Server
from focuseval.testweb import TestWebProcess

from focuscrawl.cluster.state import publish_topic
from focuscrawl.netguard import allow_private_args
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
    log = workdir / f"{name}.jsonl"
    cmd += ["-s", f"CLOSESPIDER_PAGECOUNT={pages}", "-s", f"FOCUSCRAWL_CRAWL_LOG={log}"]
    cmd += ["-s", "LOG_LEVEL=WARNING", "-s", "FOCUSCRAWL_PROGRESS_INTERVAL=0"]
    cwd = workdir / name  # each run its own working folder: no index or change store shared
    cwd.mkdir()
    return subprocess.Popen(cmd, cwd=cwd, env=env, stderr=subprocess.DEVNULL, text=True)


@dataclass
class Run:
    pages: int
    pps: float  # pages per second, first to last fetch
    cpu: float  # CPU seconds of the crawl processes (user + system)
    redis_cpu: float = 0.0  # CPU seconds of redis-server during the run

    def ms_per_page(self, with_redis: bool = False) -> float:
        return 1000 * (self.cpu + (self.redis_cpu if with_redis else 0.0)) / max(self.pages, 1)


def pages_per_second(logs: list[Path]) -> tuple[int, float]:
    times = sorted(json.loads(line)["t"] for log in logs for line in log.read_text().splitlines())
    if len(times) < 2 or times[-1] <= times[0]:
        return len(times), 0.0
    return len(times), (len(times) - 1) / (times[-1] - times[0])


def wait_cpu(proc: subprocess.Popen[str], what: str, workdir: Path) -> float:
    """Wait for ``proc``; its CPU seconds (user + system) from the kernel's accounting."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{what} failed ({proc.returncode}); see {workdir}")
    return usage.ru_utime + usage.ru_stime


def redis_cpu(server: Server) -> float:
    info = server.client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def run_local(workdir: Path, seeds: str, pages: int, allow: list[str], name: str = "local") -> Run:
    args = ["-a", "topic=birds", "-a", f"seeds={seeds}", *allow]
    proc = crawl(workdir, "topical", name, pages, *args)
    cpu = wait_cpu(proc, "local crawl", workdir)
    return Run(*pages_per_second([workdir / f"{name}.jsonl"]), cpu)


def run_cluster(
    workdir: Path, server: Server, seeds: str, pages: int, allow: list[str], k: int, tag: str = ""
) -> Run:
    server.client.flushall()
    publish_topic(server.client, "focuscrawl:topical_redis", load_topic("birds", seeds))
    names = [f"redis{k}{tag}-w{i}" for i in range(k)]
    redis = ["-s", f"REDIS_URL={server.url}", *CLUSTER, *allow]
    before = redis_cpu(server)
    procs = [crawl(workdir, "topical_redis", n, pages // k, *redis) for n in names]
    cpu = sum(wait_cpu(proc, "worker", workdir) for proc in procs)
    run = Run(*pages_per_second([workdir / f"{n}.jsonl" for n in names]), cpu)
    run.redis_cpu = redis_cpu(server) - before
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400, help="pages per run")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat the local / 1-worker pair this many times, alternating (a shared machine)",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fc-bench-cluster-"))
    server = Server()
    pairs: list[tuple[Run, Run]] = []
    try:
        with TestWebProcess(corpus="synthetic") as web:
            seeds = ",".join(web.seeds["birds"])
            allow = allow_private_args(web.hosts)  # the test web's loopback hosts
            for r in range(args.rounds):
                local = run_local(workdir, seeds, args.pages, allow, f"local{r}")
                one = run_cluster(workdir, server, seeds, args.pages, allow, 1, f"r{r}")
                pairs.append((local, one))
            results = {k: run_cluster(workdir, server, seeds, args.pages, allow, k) for k in (2, 3)}
    finally:
        server.stop()
    local, one = pairs[-1]
    results = {1: one, **results}
    print(f"cluster throughput, synthetic test web, {args.pages} pages per run (2-core machine:")
    print("the test web, Redis and every worker share the same two cores)")
    print(
        f"{'run':28} {'pages':>6} {'pages/s':>8} {'vs local':>9} {'CPU ms/page':>12} {'+Redis':>7}"
    )
    for i, (lo, on) in enumerate(pairs):
        tag = f" #{i + 1}" if len(pairs) > 1 else ""
        print(f"{'local frontier, 1 process' + tag:28} {lo.pages:6d} {lo.pps:8.1f} {1:9.2f} "
              f"{lo.ms_per_page():12.2f} {lo.ms_per_page(True):7.2f}")  # fmt: skip
        print(f"{'Redis frontier, 1 worker' + tag:28} {on.pages:6d} {on.pps:8.1f} "
              f"{on.pps / lo.pps:9.2f} {on.ms_per_page():12.2f} {on.ms_per_page(True):7.2f}")  # fmt: skip
    for k in (2, 3):
        run = results[k]
        print(f"{f'Redis frontier, {k} workers':28} {run.pages:6d} {run.pps:8.1f} "
              f"{run.pps / local.pps:9.2f} {run.ms_per_page():12.2f} {run.ms_per_page(True):7.2f}")  # fmt: skip
    ratio = sum(on.pps for _, on in pairs) / sum(lo.pps for lo, _ in pairs)
    cpu_ratio = sum(lo.ms_per_page() for lo, _ in pairs) / sum(on.ms_per_page() for _, on in pairs)
    verdict = "met" if ratio >= TARGET else "MISSED"
    print(f"target: 1 Redis-fed worker >= {TARGET:.1f} x local pages/s: {ratio:.2f} ({verdict}); "
          f"by worker CPU per page: {cpu_ratio:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
