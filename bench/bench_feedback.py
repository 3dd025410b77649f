"""Relevance feedback, simulated: a crawl given ``--labels`` true labels at page ``--at`` (the
pages the judge was least sure about, as the review page lists them) against the same crawl
without them, recall@1000 per topic (issue 32: target +0.05).

The crawl's own decisions run in-process over the rendered Wikispeedia site
(:mod:`focuseval.simulate`'s loop, the crawl's defaults); at page ``--at`` the simulated user
labels the ``--labels`` least certain pages judged so far (:func:`focuscrawl.relevance.labels.
uncertain_pages`) with the truth (a page is on topic when it is one of the topic's relevant
pages), and the crawl goes on as the spider does with a label file: a page labelled on topic is
fetched again as an example page (it teaches the topic), and a labelled page is judged as
labelled. Nothing is tuned here: no setting of the label path has a knob.

    FOCUSCRAWL_CORPORA=../shared/corpora .venv/bin/python bench/bench_feedback.py \\
        [--topics heldout] [--pages 1000] [--at 200] [--labels 30]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def crawl(site: Any, topic: Any, pages: int, at: int, n_labels: int) -> tuple[Any, int, int]:
    """One crawl; with ``n_labels`` > 0 the user labels at page ``at``. Returns the metrics,
    the labels given on topic and off topic."""
    from bench_cluster_recall import make_policy
    from focuseval.metrics import evaluate, normalize_url
    from focuseval.simulate import _fp, simulate

    from focuscrawl.defaults import DEFAULTS
    from focuscrawl.frontier.state import RequestState
    from focuscrawl.relevance.judge import Judgement
    from focuscrawl.relevance.labels import uncertain_pages
    from focuscrawl.strategy.scoring import SEED_SCORE

    judged: list[dict[str, Any]] = []
    labels: dict[str, bool] = {}
    given = [0, 0]

    def label_at(log: list[Any], frontier: Any) -> None:
        """The simulated user, at page ``at``: the true labels of the least certain pages; one
        labelled on topic is fetched again as an example page, first."""
        if not n_labels or len(log) != at or labels:
            return
        for p in uncertain_pages(judged, {}, n_labels):
            truth = normalize_url(p["url"]) in topic.labels.relevant
            labels[p["url"]] = truth
            given[int(truth)] += 1
            if truth:
                state = RequestState(example=True, score=SEED_SCORE + 1)
                key = _fp(f"{p['url']}#example")
                frontier.push(p["url"], SEED_SCORE + 1, key, state.to_wire(), force=True)

    def judge(policy: Any, page: Any, state: Any) -> Any:
        """As the spider's ``judge_page`` with a label file."""
        label = labels.get(page.url)
        example = state.example or label is True
        judgement = policy.page_judge.judge(page, seed=state.seed, example=example)
        if label is not None and label != judgement.relevant and not state.seed:
            judgement = Judgement(judgement.relevance, label)
        policy.learn(page, state, judgement)
        judged.append({"url": page.url, "relevance": judgement.relevance,
                       "relevant": judgement.relevant})  # fmt: skip
        return judgement

    policy = make_policy(topic, DEFAULTS["FOCUSCRAWL_STRATEGY"])
    log = simulate(site, topic, policy, pages, judge=judge, before_pop=label_at)
    return evaluate(log, topic.labels), given[1], given[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default="heldout")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--at", type=int, default=200)
    parser.add_argument("--labels", type=int, default=30)
    args = parser.parse_args()
    from bench_strategies import TOPICS as CATEGORIES
    from focuseval.site import loopback_hosts
    from focuseval.topics import TOPIC_SETS, wikispeedia_topic
    from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

    names = TOPIC_SETS[args.topics] if args.topics in TOPIC_SETS else args.topics.split(",")
    corpus = WikispeediaCorpus.open()
    site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    n = args.pages
    print(f"{args.labels} true labels at page {args.at}, recall@{n} (topics {args.topics})")
    print(f"  {'topic':<10} {'without':>8} {'with':>8} {'gain':>7}  labels on/off")
    sums = [0.0, 0.0]
    for name in names:
        topic = wikispeedia_topic(corpus, site.url_for, CATEGORIES[name])
        base, _, _ = crawl(site, topic, n, args.at, 0)
        fed, on, off = crawl(site, topic, n, args.at, args.labels)
        r0 = (base.at(n) or {"target_recall": 0.0})["target_recall"]
        r1 = (fed.at(n) or {"target_recall": 0.0})["target_recall"]
        sums[0] += r0 / len(names)
        sums[1] += r1 / len(names)
        print(f"  {name:<10} {r0:>8.3f} {r1:>8.3f} {r1 - r0:>+7.3f}  {on}/{off}", flush=True)
    gain = sums[1] - sums[0]
    verdict = "met" if gain >= 0.05 else "not met"
    print(
        f"  {'mean':<10} {sums[0]:>8.3f} {sums[1]:>8.3f} {gain:>+7.3f}  (target +0.05: {verdict})"
    )


if __name__ == "__main__":
    main()
