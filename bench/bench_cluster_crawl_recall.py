"""Harvest of real ``topical_redis`` workers on one Redis and on a 3-master Redis Cluster:
recall@500 per topic of the Wikispeedia test web, side by side (target: the cluster within 0.02
of one Redis on the mean).

Unlike ``bench/bench_cluster_recall.py`` (simulated workers in one process), every worker here
is a ``scrapy crawl topical_redis`` process with the crawl's defaults, crawling the Wikispeedia
test web (``focuscrawl testweb --corpus wikispeedia``, 8 loopback hosts) over HTTP. For each
topic and each target (one ``redis-server``; a local 3-master cluster with
``FOCUSCRAWL_REDIS_CLUSTER=True``, 16 shards per master) the keys are flushed, ``--workers``
workers start at once (the first brings the topic file with its seeds, the others join
through Redis), each with ``CLOSESPIDER_PAGECOUNT`` = ``ceil(pages / workers) + margin``, and
writes its own crawl log. The logs are merged by fetch time (the ``t`` of each record) into one
crawl, whose first ``--pages`` fetches are scored against the category's labels
(:func:`focuseval.metrics.evaluate`, as ``focuscrawl eval`` does).

    FOCUSCRAWL_CORPORA=/work/shared/corpora .venv/bin/python bench/bench_cluster_crawl_recall.py \\
        [--topics Birds,Space,Health] [--pages 500] [--workers 3] [--rounds 1]

Several workers reorder a crawl a little, differently in each run: ``--rounds`` repeats every
crawl and reports each run and the means.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from focuseval.localcluster import LocalCluster  # noqa: E402
from focuseval.metrics import CrawlRecord, evaluate  # noqa: E402

DEFAULT_TOPICS = "Birds,Space,Health"
MARGIN = 40  # pages per worker beyond its share (robots.txt and start-up differences)


def worker_command(
    redis_url: str, cluster: bool, log: Path, data: Path, pages: int, allow: str, topic: str
) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical_redis"]
    if topic:
        cmd += ["-a", f"topic={topic}"]
    cmd += [
        "-s", f"REDIS_URL={redis_url}",
        "-s", f"FOCUSCRAWL_REDIS_CLUSTER={cluster}",
        "-s", f"FOCUSCRAWL_CRAWL_LOG={log}",
        "-s", f"FOCUSCRAWL_DATA_DIR={data}",
        "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s", f"FOCUSCRAWL_ALLOW_PRIVATE={allow}",
        "-s", "LOG_LEVEL=INFO",
        "-s", "TELNETCONSOLE_ENABLED=False",
    ]  # fmt: skip
    return cmd


def crawl(
    work: Path, redis_url: str, cluster: bool, topic_file: Path, workers: int, pages: int, web: Any
) -> tuple[list[CrawlRecord], list[int], float]:
    """One crawl by ``workers`` processes; the merged records (by fetch time), exit codes."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings", "PYTHONPATH": str(ROOT)}
    share = math.ceil(pages / workers) + MARGIN
    procs = []
    start = time.monotonic()
    for i in range(workers):
        cmd = worker_command(
            redis_url,
            cluster,
            work / f"w{i}.jsonl",
            work / f"w{i}-data",
            share,
            web.allow_private,
            str(topic_file) if i == 0 else "",
        )
        out = (work / f"w{i}.log").open("w")
        procs.append(subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT))
        out.close()
    codes = [p.wait(timeout=1800) for p in procs]
    took = time.monotonic() - start
    rows: list[tuple[float, int, int, CrawlRecord]] = []
    for i in range(workers):
        log = work / f"w{i}.jsonl"
        if not log.exists():
            continue
        for line in log.read_text().splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            rows.append(
                (
                    float(obj["t"]),
                    i,
                    int(obj.get("seq", 0)),
                    CrawlRecord(obj["url"], int(obj.get("status", 200))),
                )
            )
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [r[3] for r in rows], codes, took


def recall_at(records: list[CrawlRecord], labels: Any, n: int) -> tuple[float, int]:
    metrics = evaluate(records[:n], labels)
    at = metrics.at(min(n, metrics.fetched)) if metrics.fetched else None
    return (at["target_recall"] if at else 0.0), metrics.fetched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default=DEFAULT_TOPICS)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    from bench_cluster_memory import Server
    from bench_strategies import TOPICS as CATEGORIES
    from focuseval.harness import build_topic
    from focuseval.testweb import TestWebProcess
    from focuseval.topics import write_topic_toml
    from redis.cluster import RedisCluster

    corpora = Path(os.environ.get("FOCUSCRAWL_CORPORA", "/work/shared/corpora"))
    work = Path(tempfile.mkdtemp(prefix="fc-bench-crawl-recall-"))
    server = Server()
    cluster = LocalCluster(work / "cluster", masters=3).start()
    cluster_client = RedisCluster.from_url(cluster.url)
    targets = {
        "one Redis": (server.url, False, lambda: server.client.flushall()),
        "cluster": (
            cluster.url,
            True,
            lambda: cluster_client.flushall(target_nodes=RedisCluster.PRIMARIES),
        ),
    }
    results: dict[tuple[str, str], list[float]] = {}
    print(
        f"{args.workers} topical_redis workers, recall@{args.pages} of the merged crawl "
        f"(work folder {work})"
    )
    try:
        with TestWebProcess("wikispeedia", corpora=corpora) as web:
            for name in args.topics.split(","):
                topic = build_topic("wikispeedia", CATEGORIES[name], web, corpora)
                topic_file = write_topic_toml(topic, work / name / "topic.toml")
                for r in range(args.rounds):
                    for kind, (url, on_cluster, flush) in targets.items():
                        flush()
                        run = work / name / f"{kind.replace(' ', '-')}-{r}"
                        records, codes, took = crawl(
                            run, url, on_cluster, topic_file, args.workers, args.pages, web
                        )
                        recall, fetched = recall_at(records, topic.labels, args.pages)
                        results.setdefault((name, kind), []).append(recall)
                        print(
                            f"  {name:<10} {kind:<10} round {r + 1}: recall@{args.pages} "
                            f"{recall:.3f} ({fetched} of {len(records)} pages scored, "
                            f"{took:.0f}s, exit codes {codes})",
                            flush=True,
                        )
    finally:
        cluster_client.close()
        cluster.stop()
        server.stop()
        if not args.keep:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    topics = args.topics.split(",")
    print(f"\nrecall@{args.pages} (mean over {args.rounds} round(s) per topic)")
    print(f"  {'topic':<10} {'one Redis':>10} {'cluster':>10} {'diff':>8}")
    means = {"one Redis": 0.0, "cluster": 0.0}
    for name in topics:
        one = sum(results[name, "one Redis"]) / args.rounds
        clu = sum(results[name, "cluster"]) / args.rounds
        means["one Redis"] += one / len(topics)
        means["cluster"] += clu / len(topics)
        print(f"  {name:<10} {one:>10.3f} {clu:>10.3f} {clu - one:>+8.3f}")
    diff = means["cluster"] - means["one Redis"]
    print(f"  {'mean':<10} {means['one Redis']:>10.3f} {means['cluster']:>10.3f} {diff:>+8.3f}")
    verdict = "met" if abs(diff) <= 0.02 else "not met"
    print(
        f"cluster - one Redis, mean recall@{args.pages}: {diff:+.3f} (target within 0.02: {verdict})"
    )


if __name__ == "__main__":
    main()
