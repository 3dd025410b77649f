"""A page model retrained from the user's labels: the refit (``relevance.feedback``), the
worker that learns them (``relevance.online``), the frontier re-scored after a retrain
(``spiders.rescore``), and a real crawl of the local test web that does all three."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from focuscrawl.blocks.partition import partition
from focuscrawl.frontier.state import RequestState
from focuscrawl.netguard import allow_private_args
from focuscrawl.relevance import train
from focuscrawl.relevance.adaptive import AdaptiveCosineModel
from focuscrawl.relevance.features import page_terms
from focuscrawl.relevance.feedback import label_threshold, train_from_labels
from focuscrawl.relevance.judge import Judgement
from focuscrawl.relevance.labels import add_label, uncertain_pages
from focuscrawl.relevance.online import RetrainingModel, WorkerWindow
from focuscrawl.relevance.train import train_pu
from focuscrawl.spiders.rescore import FrontierRescore
from tests.relevance_pages import TOPICS, web


def _terms(topic: str, n: int = 30, seed: int = 3) -> list[dict[str, float]]:
    return [page_terms(partition(h, u)) for u, h in web(n, seed)[topic]]


def test_off_topic_labels_correct_what_pu_learning_got_wrong() -> None:
    """Pages of other topics with the bird words added: PU learning from bird pages takes them
    for birds; with 15 of them labelled off topic, the refitted model rejects the other 15 and
    still accepts the bird pages."""
    pages = web(30, seed=3)
    birds = [page_terms(partition(h, u)) for u, h in pages["birds"]]
    others = [page_terms(partition(h, u)) for t, ps in pages.items() if t != "birds" for u, h in ps]
    bird_words = {t: 3.0 for t in TOPICS["birds"][:6]}
    confusable = [{**o, **bird_words} for o in others[:30]]
    positives, unlabeled = birds[:10], birds[10:] + others[30:] + confusable[15:]
    off = confusable[:15]

    def accepted(model: Any, pages: list[dict[str, float]]) -> int:
        return sum(model.score_terms(t) >= model.threshold for t in pages)

    base = train_pu(positives, unlabeled + off, ["bird"])
    assert accepted(base, confusable[15:]) == 15  # the mistake labels are for
    model = train_from_labels(positives, unlabeled, (), off, ["bird"])
    assert model.info["labels_off_topic"] == 15
    assert accepted(model, confusable[15:]) == 0
    assert accepted(model, birds[10:]) >= 18


def test_without_labels_it_is_the_pu_model() -> None:
    birds, rest = _terms("birds"), _terms("finance") + _terms("football")
    model = train_from_labels(birds[:10], birds[10:] + rest, (), (), ["bird"])
    assert model.kind == "pu-ensemble" and "labels_off_topic" not in model.info


def test_the_threshold_follows_the_labels() -> None:
    positives = np.array([3.0, 4.0, 5.0])
    # labels: on topic above 1, off topic below: the threshold lands near 1, not at default 0
    labelled = np.array([-1.0, -0.5, 0.0, 0.5, 1.5, 2.0])
    y = np.array([-1, -1, -1, -1, 1, 1])
    for rule in ("balanced", "label-share"):
        t = label_threshold(labelled, y, positives, 0.0, positive_weight=0.2, rule=rule)
        assert 0.3 < t < 1.6
        # every label off topic near the default: the threshold moves up, above them
        off = np.array([-0.2, -0.1, 0.0, 0.1])
        t_off = label_threshold(off, np.array([-1] * 4), positives, 0.0, rule=rule)
        assert t_off > 0.1


def _margin_labels(n_on: int, n_off: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Labels as a refitted SVM places them: on-topic pages near its margin +1, off-topic
    pages near -1 (they were trained on, so they are separable)."""
    rng = np.random.default_rng(seed)
    d = np.r_[rng.normal(1.0, 0.05, n_on), rng.normal(-1.0, 0.05, n_off)]
    return d, np.r_[np.ones(n_on), -np.ones(n_off)]


def test_the_balanced_threshold_does_not_follow_the_labels_share() -> None:
    """Uncertainty sampling hands the user mostly off-topic pages: 45 of 50 off topic moves the
    balanced threshold no more than 0.1 from where 5 of 10 put it, and it stays between the two
    classes; the label-share rule (the first one) climbs with the off-topic labels."""
    positives = np.random.default_rng(1).normal(1.0, 0.05, 20)
    balanced, share = [], []
    for n_on, n_off in ((5, 5), (5, 20), (5, 45)):
        d, y = _margin_labels(n_on, n_off)
        balanced.append(label_threshold(d, y, positives, -0.5))
        share.append(label_threshold(d, y, positives, -0.5, rule="label-share"))
    assert max(balanced) - min(balanced) < 0.1
    assert all(-0.8 < t < 0.8 for t in balanced)
    assert share[2] > share[0] + 0.4 and share[2] > balanced[2] + 0.15


def test_the_balanced_threshold_keeps_the_topic_when_labels_are_90_percent_off_topic() -> None:
    """Overlapping classes (topic pages' decisions around +1, others around -1), 5 of 50 labels
    on topic: the threshold still accepts at least 90% of the topic's pages and rejects at
    least 90% of the others."""
    rng = np.random.default_rng(2)
    topic, others = rng.normal(1.0, 0.5, 1000), rng.normal(-1.0, 0.5, 1000)
    labelled = np.r_[rng.choice(topic, 5), rng.choice(others, 45)]
    y = np.r_[np.ones(5), -np.ones(45)]
    t = label_threshold(labelled, y, rng.normal(1.0, 0.5, 20), -0.5)
    assert np.mean(topic >= t) >= 0.9 and np.mean(others < t) >= 0.9


def test_an_unknown_threshold_rule_is_refused() -> None:
    d, y = _margin_labels(2, 2)
    with pytest.raises(ValueError, match="threshold rule"):
        label_threshold(d, y, np.array([1.0]), 0.0, rule="median")


def test_the_worker_window_keeps_labelled_pages_out_of_the_pu_sets() -> None:
    w = WorkerWindow(window=3)
    w.page(True, [(1.0, "a")], "http://x.test/a")
    w.page(False, [(1.0, "b")], "http://x.test/b")
    w.label("http://x.test/b", False)  # labelled after it was seen: kept from the window
    w.label("http://x.test/c", True)  # labelled before: kept when it is seen
    w.page(False, [(1.0, "c")], "http://x.test/c")
    pos, unl, on, off = w.training_set()
    assert pos == [[(1.0, "a")]] and unl == []
    assert on == [[(1.0, "c")]] and off == [[(1.0, "b")]]
    for i in range(5):  # past the window: the labelled pages stay
        w.page(False, [(1.0, f"z{i}")], f"http://x.test/z{i}")
    _, unl, on, off = w.training_set()
    assert len(unl) == 3 and on and off


@pytest.mark.parametrize("rule", ["balanced", "label-share"])
def test_a_label_makes_the_worker_retrain_and_send_the_recent_pages_scores(rule: str) -> None:
    """The worker retrains on a label, with the threshold rule it was given."""
    raw = web(30, seed=9)
    start = train([], keywords=["bird feather nest"])
    wrapper = RetrainingModel(
        start, ["bird"], every=0, confident=0.2, min_positives=5, threshold_rule=rule
    )
    pages = [partition(h, u) for ps in raw.values() for u, h in ps]
    random.Random(2).shuffle(pages)
    off_url = next(p.url for p in pages[:60] if "finance" in p.url)
    try:
        for page in pages[:60]:
            wrapper.observe(page, wrapper.score_page(page))
        assert wrapper.requests == 0  # every=0: no retrain without a label
        wrapper.label(off_url, False)
        wrapper.label(off_url, False)  # the same label again: nothing new
        wrapper.observe(pages[60], wrapper.score_page(pages[60]))
        assert wrapper.requests == 1 and wrapper.label_retrains_asked == 1
        wrapper.wait()
    finally:
        wrapper.close()
    assert wrapper.failures == 0 and wrapper.label_retrains == 1
    assert wrapper.trained_labels == (0, 1)
    assert wrapper.model.info["labels_off_topic"] == 1
    assert wrapper.model.info["threshold_rule"] == rule
    rescored = dict(wrapper.take_rescored())
    assert len(rescored) == 61 and off_url in rescored
    assert wrapper.take_rescored() == []  # handed out once


def test_a_retrained_model_keeps_its_threshold_and_the_cosine_model_its_top_terms() -> None:
    """Before a retrain the wrapper is the cosine model to the crawl: its threshold set by the
    judge's calibration, its top terms for the link policy's body-word model. After one, the
    retrained model's own threshold stays (the judge's next calibration, on the cosine scale,
    does not overwrite it); a model without top terms has none."""
    raw = web(30, seed=9)
    start = AdaptiveCosineModel(["bird feather nest"])
    wrapper = RetrainingModel(start, ["bird"], every=0, confident=0.2, min_positives=5)
    pages = [partition(h, u) for ps in raw.values() for u, h in ps]
    random.Random(2).shuffle(pages)
    assert wrapper.top_terms(pages[0], 5) == start.top_terms(pages[0], 5)
    wrapper.threshold = 0.07
    assert start.threshold == 0.07
    try:
        for page in pages[:60]:
            wrapper.observe(page, wrapper.score_page(page))
        wrapper.label(next(p.url for p in pages[:60] if "finance" in p.url), False)
        wrapper.observe(pages[60], wrapper.score_page(pages[60]))
        wrapper.wait()
    finally:
        wrapper.close()
    assert wrapper.retrains == 1 and wrapper.model is not start
    own = wrapper.model.threshold
    wrapper.threshold = 0.07  # as PageJudge.set_threshold after a calibration
    assert wrapper.threshold == own != 0.07
    assert wrapper.top_terms(pages[0], 5) is None


def test_the_frontier_is_rescored_for_pages_judged_more_relevant() -> None:
    sent: list[str] = []

    def links(page: Any, url: str, state: Any, judgement: Judgement) -> Any:
        sent.append(url)
        return [(f"{url}/child", judgement.relevance, RequestState())]

    r = FrontierRescore(links, capacity=2)
    page = partition("<html><title>t</title><body><p>x</p></body></html>", "http://x.test/")
    r.remember("http://x.test/a", page, RequestState(), Judgement(0.1, False), 0.2)
    r.remember("http://x.test/b", page, RequestState(), Judgement(0.3, True), 0.2)
    r.remember("http://x.test/c", page, RequestState(), Judgement(0.1, False), 0.2)
    assert list(r.recent) == ["http://x.test/b", "http://x.test/c"]  # bounded
    labels = {"http://x.test/c": False}
    scores = [("http://x.test/a", 0.9), ("http://x.test/b", 0.6), ("http://x.test/c", 0.9)]
    out = list(r.rescored(scores, 0.5, labels.get))
    # a: forgotten; b: relevant before, 0.6/0.5 < 0.3/0.2 (not more relevant); c: labelled off
    assert out == [] and sent == []
    out = list(r.rescored([("http://x.test/b", 0.9)], 0.5, labels.get))
    assert [t for t, _, _ in out] == ["http://x.test/b/child"] and r.pages == 1 and r.sent == 1
    # a retrain's pages are looked at per_page at a time, over the pages that follow
    r.per_page = 1
    r.remember("http://x.test/d", page, RequestState(), Judgement(0.1, False), 0.2)
    scores = [("http://x.test/c", 0.9), ("http://x.test/d", 0.9)]
    assert list(r.rescored(scores, 0.5, labels.get)) == []  # c: labelled off topic
    assert [t for t, _, _ in r.rescored([], 0.5, labels.get)] == ["http://x.test/d/child"]
    assert r.pending == []


def test_a_crawl_retrains_from_the_labels_and_rescores_its_frontier(
    testweb_synthetic: Any, tmp_path: Path
) -> None:
    """A first crawl; the user labels its least certain pages with the truth of the test web;
    a second crawl with FOCUSCRAWL_LABELS_RETRAIN retrains its page model from them in its
    worker process while it runs, and sends the links of the pages the new model judges more
    relevant again."""

    def crawl(name: str, *settings: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
        cmd += ["-a", "seeds=" + ",".join(testweb_synthetic.seeds["birds"])]
        cmd += allow_private_args(testweb_synthetic.hosts)
        for setting in (
            f"FOCUSCRAWL_DATA_DIR={tmp_path / name}",
            f"FOCUSCRAWL_LABELS={tmp_path / 'labels.jsonl'}",
            f"FOCUSCRAWL_CRAWL_LOG={name}.jsonl",
            f"FOCUSCRAWL_STATS_FILE={name}.json",
            *settings,
        ):
            cmd += ["-s", setting]
        env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
        proc = subprocess.run(
            cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        log = [json.loads(x) for x in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
        return log, json.loads((tmp_path / f"{name}.json").read_text()), proc.stderr

    first, _, _ = crawl("first", "CLOSESPIDER_PAGECOUNT=150")
    from focuseval.testweb import build_site

    # the same web built here (same seed, hosts and port) knows each page's topic
    site = build_site(
        "synthetic", testweb_synthetic.port, testweb_synthetic.hosts, seed=testweb_synthetic.seed
    )
    relevant = {u for u in (r["url"] for r in first) if site.topic_of(u) == "birds"}
    seeds = set(testweb_synthetic.seeds["birds"])
    ranked = uncertain_pages([r for r in first if r["url"] not in seeds], {}, limit=20)
    for p in ranked:
        add_label(tmp_path / "labels.jsonl", p["url"], p["url"] in relevant)
    given_on = sum(p["url"] in relevant for p in ranked)
    # each retrain waited for (FOCUSCRAWL_RETRAIN_SYNC): the model trained on the labels is
    # swapped in while the crawl runs however slow the machine is
    _, stats, stderr = crawl(
        "second",
        "FOCUSCRAWL_LABELS_RETRAIN=True",
        "FOCUSCRAWL_RETRAIN_SYNC=True",
        "CLOSESPIDER_PAGECOUNT=400",
    )
    assert "Traceback" not in stderr, stderr[-3000:]
    assert stats["focuscrawl/labels/known"] == len(ranked)
    assert stats["focuscrawl/labels/retrains"] >= 1  # a model trained on the labels swapped in
    # the labels of the labelled pages the worker had seen when it fitted
    learned = (
        stats["focuscrawl/labels/model_labels_on"] + stats["focuscrawl/labels/model_labels_off"]
    )
    assert 1 <= learned <= len(ranked)
    assert stats["focuscrawl/labels/model_labels_on"] <= given_on
    assert stats["focuscrawl/labels/rescores"] >= 1  # the frontier was re-scored
    assert stats.get("focuscrawl/labels/rescored_links", 0) >= 1
    assert stats.get("focuscrawl/relevance/retrain_worker_deaths") is None
