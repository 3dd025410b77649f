"""Harvest of the same focused crawl with the frontier in memory, on one Redis and on a 3-master
Redis Cluster (sharded, best-first across shards): target recall at 250/500 pages per topic.

The crawl's own decisions (:class:`CrawlPolicy`, the page partition) run in-process over the
rendered Wikispeedia site as in ``bench/bench_strategies.py`` (:mod:`focuseval.simulate`),
but through the real frontiers, fed by ``--workers`` simulated workers that take turns: each
pops one entry, judges the page, and sends its links and its ack as the scheduler does
(``push_many`` without waiting). On Redis every worker has its own frontier object (its own
connections and, on the cluster, its own view of the shards' heads), as separate processes do.

    FOCUSCRAWL_CORPORA=/work/shared/corpora .venv/bin/python bench/bench_cluster_recall.py \\
        [--topics Birds,Chemistry] [--pages 500] [--workers 3] [--pop-ahead]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from focuseval.localcluster import LocalCluster  # noqa: E402
from focuseval.metrics import CrawlRecord, evaluate  # noqa: E402

from focuscrawl.frontier.memory import MemoryFrontier  # noqa: E402
from focuscrawl.frontier.redis_frontier import RedisFrontier  # noqa: E402
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier  # noqa: E402

TOPICS = ("Birds", "Space", "Health", "Chemistry", "British", "African")
CHECKPOINTS = (250, 500)


def crawl(site: Any, topic: Any, frontiers: list[Any], pages: int) -> list[CrawlRecord]:
    """The loop of :func:`focuseval.simulate.simulate`, over ``frontiers`` (one per
    worker, sharing one crawl), the workers taking turns."""
    from focuseval.simulate import _fp, _own_links, judge_page, partition

    from focuscrawl.blocks import TemplateLinks
    from focuscrawl.defaults import DEFAULTS
    from focuscrawl.frontier.state import RequestState
    from focuscrawl.relevance.adaptive import AdaptiveCosineModel
    from focuscrawl.relevance.judge import PageJudge
    from focuscrawl.strategy.policy import CrawlPolicy
    from focuscrawl.strategy.scoring import SEED_SCORE

    judge = PageJudge(  # the crawl's defaults, as bench_strategies builds them
        AdaptiveCosineModel(topic.keywords),
        auto_threshold=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD"],
        calibrate=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION"],
    )
    policy = CrawlPolicy(judge, DEFAULTS["FOCUSCRAWL_STRATEGY"])
    templates = TemplateLinks()
    first = frontiers[0]
    for url in topic.seeds:
        seed = RequestState(seed=True, score=SEED_SCORE)
        first.push(url, SEED_SCORE, _fp(url), seed.to_wire())
    log: list[CrawlRecord] = []
    idle = 0
    while len(log) < pages and idle < len(frontiers):
        for frontier in frontiers:
            entry = frontier.pop()
            if entry is None:
                idle += 1
                continue
            idle = 0
            parts = urlsplit(entry.url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            resource = site.get(parts.hostname or "", path)
            status = resource.status if resource is not None else 404
            log.append(CrawlRecord(entry.url, status))
            items: list[Any] = []
            if resource is not None and status == 200 and "html" in resource.content_type:
                page = partition(resource.body, entry.url)
                if not page.error:
                    page = _own_links(page)
                    templates.mark(page)
                    state = RequestState.from_wire(entry.data)
                    judgement = judge_page(policy, page, state)
                    for url, score, child in policy.links(page, entry.url, state, judgement):
                        items.append((url, score, _fp(url), child.to_wire()))
            if isinstance(frontier, MemoryFrontier):
                for item in items:
                    frontier.push(*item)
                frontier.ack(entry.fingerprint)
            else:  # as the scheduler: links and ack go out with the next pop
                frontier.push_many(items, ack=[entry.fingerprint], on_results=lambda r: None)
            if len(log) >= pages:
                break
    return log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default=",".join(TOPICS))
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--shards", type=int, default=0)
    parser.add_argument(
        "--pop-ahead", action="store_true", help="each pop sends the next ahead, as in a crawl"
    )
    args = parser.parse_args()
    from bench_cluster_memory import Server
    from focuseval.site import loopback_hosts
    from focuseval.topics import wikispeedia_topic
    from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

    corpus = WikispeediaCorpus.open()
    site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    server = Server()
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-recall-")), masters=3).start()
    rows: list[tuple[str, str, dict[int, float]]] = []
    try:
        from bench_strategies import TOPICS as CATEGORIES

        for name in args.topics.split(","):
            topic = wikispeedia_topic(corpus, site.url_for, CATEGORIES[name])
            for kind in ("memory", "one Redis", "cluster"):
                prefix = f"recall:{name}"
                if kind == "memory":
                    frontiers: list[Any] = [MemoryFrontier()]
                elif kind == "one Redis":
                    server.client.flushall()
                    frontiers = [RedisFrontier(server.url, prefix) for _ in range(args.workers)]
                else:
                    from redis.cluster import RedisCluster

                    client = RedisCluster.from_url(cluster.url)
                    client.flushall(target_nodes=RedisCluster.PRIMARIES)
                    client.close()
                    frontiers = [
                        ShardedRedisFrontier(cluster.url, prefix, shards=args.shards)
                        for _ in range(args.workers)
                    ]
                for frontier in frontiers:
                    frontier.pop_ahead = args.pop_ahead
                    frontier.open()
                log = crawl(site, topic, frontiers, args.pages)
                for frontier in frontiers:
                    frontier.close()
                metrics = evaluate(log, topic.labels)
                recall = {
                    n: (metrics.at(n) or {"target_recall": 0.0})["target_recall"]
                    for n in CHECKPOINTS
                }
                rows.append((name, kind, recall))
                print(
                    f"{name:<10} {kind:<10} "
                    + "  ".join(f"recall@{n} {r:.3f}" for n, r in recall.items()),
                    flush=True,
                )
    finally:
        server.stop()
        cluster.stop()
    print(f"\nmean over {len(rows) // 3} topics ({args.workers} workers on Redis):")
    means: dict[str, dict[int, float]] = {}
    for kind in ("memory", "one Redis", "cluster"):
        mine = [r for _, k, r in rows if k == kind]
        means[kind] = {n: sum(r[n] for r in mine) / len(mine) for n in CHECKPOINTS}
        print(f"  {kind:<10} " + "  ".join(f"recall@{n} {v:.3f}" for n, v in means[kind].items()))
    diff = means["cluster"][500] - means["one Redis"][500]
    print(f"cluster - one Redis, recall@500: {diff:+.3f} (target: within 0.02)")


if __name__ == "__main__":
    main()
