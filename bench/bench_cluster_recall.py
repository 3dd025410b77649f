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


def make_policy(topic: Any, strategy: str) -> Any:
    """A worker's policy with the crawl's defaults, as bench_strategies builds them."""
    from focuscrawl.defaults import DEFAULTS
    from focuscrawl.relevance.adaptive import AdaptiveCosineModel
    from focuscrawl.relevance.judge import PageJudge
    from focuscrawl.strategy.policy import CrawlPolicy

    judge = PageJudge(
        AdaptiveCosineModel(topic.keywords),
        auto_threshold=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD"],
        calibrate=DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION"],
    )
    return CrawlPolicy(judge, strategy)


def crawl(
    site: Any, topic: Any, frontiers: list[Any], pages: int, policies: list[Any]
) -> list[CrawlRecord]:
    """The loop of :func:`focuseval.simulate.simulate`, over ``frontiers`` (one per
    worker, sharing one crawl), the workers taking turns; ``policies``: one per worker (the
    same object for all: one judge, as if the workers were one process). A seed or example page
    one worker judges, every other worker's page judge judges too (as ``topical_redis`` shares
    them through ``<prefix>:calib``)."""
    from focuseval.simulate import _fp, _own_links, judge_page, partition

    from focuscrawl.blocks import TemplateLinks
    from focuscrawl.frontier.state import RequestState
    from focuscrawl.strategy.scoring import SEED_SCORE

    templates = TemplateLinks()
    first = frontiers[0]
    for url in topic.seeds:
        seed = RequestState(seed=True, score=SEED_SCORE)
        first.push(url, SEED_SCORE, _fp(url), seed.to_wire())
    log: list[CrawlRecord] = []
    idle = 0
    while len(log) < pages and idle < len(frontiers):
        for frontier, policy in zip(frontiers, policies, strict=True):
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
                    if state.seed or state.example:
                        for other in {id(p): p for p in policies if p is not policy}.values():
                            calib = RequestState(seed=state.seed, example=state.example)
                            judge_page(other, page, calib)
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


#: how the workers' policies are kept: ``one`` policy object for all (as one process would),
#: ``own`` (each worker its own, as separate processes: sharing nothing but the frontier), and
#: with ``--strategy learned`` ``epoch`` / ``outcomes`` (each its own, sharing through Redis)
JUDGES = ("one", "own", "epoch", "outcomes")


def configurations(targets: list[str], strategy: str, judges: list[str]) -> list[tuple[str, str]]:
    """``(target, judges)`` rows: the in-memory frontier (one worker) first, then every target
    with every way of sharing the judge (``one``: one policy object for all workers)."""
    rows = [("memory", "one")] if "memory" in targets else []
    for target in targets:
        if target != "memory":
            rows += [(target, j) for j in judges if strategy == "learned" or j in ("one", "own")]
    return rows


def main() -> None:
    from focuscrawl.defaults import DEFAULTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default=",".join(TOPICS))
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--shards", type=int, default=0)
    parser.add_argument("--strategy", default=DEFAULTS["FOCUSCRAWL_STRATEGY"])
    parser.add_argument(
        "--judges",
        default=",".join(JUDGES),
        help="how the workers' policies are kept: one (one policy for all workers, as in one "
        "process), own (each worker its own, as separate processes); with --strategy learned "
        "also epoch (each its own judge, one epoch counter in Redis) and outcomes (as epoch, "
        "and the pages' outcomes shared)",
    )
    parser.add_argument("--targets", default="memory,one Redis,cluster")
    parser.add_argument(
        "--pop-ahead", action="store_true", help="each pop sends the next ahead, as in a crawl"
    )
    args = parser.parse_args()
    from bench_cluster_memory import Server
    from focuseval.oracle import LinkGraph, reference_metrics
    from focuseval.site import loopback_hosts
    from focuseval.topics import TOPIC_SETS, wikispeedia_topic
    from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

    from focuscrawl.cluster.judgeshare import RedisJudgeShare
    from focuscrawl.frontier.connection import connect

    checkpoints = tuple(n for n in (250, 500, 1000) if n <= args.pages)
    names = TOPIC_SETS[args.topics] if args.topics in TOPIC_SETS else args.topics.split(",")
    targets = [t.strip() for t in args.targets.split(",")]
    rows_of = configurations(targets, args.strategy, args.judges.split(","))
    corpus = WikispeediaCorpus.open()
    site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    graph = LinkGraph(site)
    server = Server()
    cluster = (
        LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-recall-")), masters=3).start()
        if "cluster" in targets
        else None
    )
    rows: list[tuple[str, str, dict[int, float]]] = []

    def at(metrics: Any, n: int) -> float:
        return (metrics.at(n) or {"target_recall": 0.0})["target_recall"]

    try:
        from bench_strategies import TOPICS as CATEGORIES

        for name in names:
            topic = wikispeedia_topic(corpus, site.url_for, CATEGORIES[name])
            refs = reference_metrics(graph, topic.seeds, topic.labels, args.pages)
            rows.append((name, "oracle", {n: at(refs["oracle"], n) for n in checkpoints}))
            for target, judges in rows_of:
                prefix = f"recall:{name}"
                url = server.url
                if target == "memory":
                    frontiers: list[Any] = [MemoryFrontier()]
                elif target == "one Redis":
                    server.client.flushall()
                    frontiers = [RedisFrontier(server.url, prefix) for _ in range(args.workers)]
                else:
                    from redis.cluster import RedisCluster

                    assert cluster is not None
                    url = cluster.url
                    client = RedisCluster.from_url(cluster.url)
                    client.flushall(target_nodes=RedisCluster.PRIMARIES)
                    client.close()
                    frontiers = [
                        ShardedRedisFrontier(cluster.url, prefix, shards=args.shards)
                        for _ in range(args.workers)
                    ]
                if judges == "one":
                    policies = [make_policy(topic, args.strategy)] * len(frontiers)
                else:
                    policies = [make_policy(topic, args.strategy) for _ in frontiers]
                    for i, policy in enumerate(policies if judges != "own" else ()):
                        share = RedisJudgeShare(
                            connect(url), prefix, f"w{i}", share=judges == "outcomes"
                        )
                        policy.share_judge(share)
                for frontier in frontiers:
                    frontier.pop_ahead = args.pop_ahead
                    frontier.open()
                log = crawl(site, topic, frontiers, args.pages, policies)
                for frontier in frontiers:
                    frontier.close()
                for policy in {id(p): p for p in policies}.values():
                    if policy.judge_share is not None:
                        policy.judge_share.client.close()
                metrics = evaluate(log, topic.labels)
                recall = {n: at(metrics, n) for n in checkpoints}
                kind = target if target == "memory" else f"{target}, judges {judges}"
                rows.append((name, kind, recall))
                print(
                    f"{name:<10} {kind:<28} "
                    + "  ".join(f"recall@{n} {r:.3f}" for n, r in recall.items()),
                    flush=True,
                )
    finally:
        server.stop()
        if cluster is not None:
            cluster.stop()
    kinds = list(dict.fromkeys(k for _, k, _ in rows))
    print(
        f"\nstrategy {args.strategy}, {args.workers} workers on Redis, mean over "
        f"{len(names)} topics ({args.topics}); ×oracle: the mean recall / the oracle's"
    )
    means: dict[str, dict[int, float]] = {}
    for kind in kinds:
        mine = [r for _, k, r in rows if k == kind]
        means[kind] = {n: sum(r[n] for r in mine) / len(mine) for n in checkpoints}
    for kind in kinds:
        ratio = "  ".join(
            f"{means[kind][n] / means['oracle'][n]:.2f}x@{n}" if means["oracle"][n] else "-"
            for n in checkpoints
        )
        print(
            f"  {kind:<28} "
            + "  ".join(f"recall@{n} {v:.3f}" for n, v in means[kind].items())
            + f"   {ratio}"
        )
    one = next((k for k in kinds if k.startswith("one Redis")), None)
    clu = next((k for k in kinds if k.startswith("cluster")), None)
    if one and clu and 500 in checkpoints:
        diff = means[clu][500] - means[one][500]
        print(f"{clu} - {one}, recall@500: {diff:+.3f} (target: within 0.02)")


if __name__ == "__main__":
    main()
