"""The simulated crawl given labels mid-crawl (``focuseval.feedback_crawl``, needs
../shared/corpora): a small slice of ``bench/bench_feedback.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from focuseval.feedback_crawl import feedback_crawl, recall_at
from focuseval.site import loopback_hosts
from focuseval.topics import WIKISPEEDIA_TOPICS, wikispeedia_topic
from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite


@pytest.fixture(scope="module")
def mammals(corpora: Path) -> tuple[WikispeediaSite, object]:
    corpus = WikispeediaCorpus.open(corpora)
    site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    return site, wikispeedia_topic(corpus, site.url_for, WIKISPEEDIA_TOPICS["Mammals"])


def test_labels_then_a_retrained_model_and_a_rescored_frontier(
    mammals: tuple[WikispeediaSite, object],
) -> None:
    """The same crawl until the labels (the wrapper changes nothing before its first retrain:
    the same pages are the least certain, so the same labels are given); then the retrained
    model is swapped in, keeps its own threshold, and the links of pages it judges more
    relevant are sent again."""
    site, topic = mammals
    plain = feedback_crawl(site, topic, 160, 60, 10)
    fed = feedback_crawl(site, topic, 160, 60, 10, retrain=True)
    assert plain.labels_on + plain.labels_off == 10
    assert (fed.labels_on, fed.labels_off) == (plain.labels_on, plain.labels_off)
    assert plain.retrains == 0 and plain.rescored_links == 0
    assert fed.retrains >= 1 and fed.rescored_pages > 0 and fed.rescored_links > 0
    # page 100: the retrained model's own threshold (a probability), not the cosine one the
    # judge's calibration would have put on it
    assert plain.thresholds[0] < 0.2 and fed.thresholds[0] == 0.5
    assert 0.0 <= recall_at(fed, 160) <= 1.0
    # the experiment: the link scale follows the retrained model (its own threshold kept)
    resc = feedback_crawl(site, topic, 160, 60, 10, retrain=True, rescale=True)
    assert (resc.labels_on, resc.labels_off) == (plain.labels_on, plain.labels_off)
    assert resc.retrains >= 1 and resc.thresholds[0] == 0.5


def test_without_labels_nothing_is_labelled(mammals: tuple[WikispeediaSite, object]) -> None:
    site, topic = mammals
    run = feedback_crawl(site, topic, 80, 40, 0, retrain=True)
    assert (run.labels_on, run.labels_off, run.retrains, run.rescored_links) == (0, 0, 0, 0)
    assert recall_at(run, 80) == recall_at(feedback_crawl(site, topic, 80, 40, 0), 80)
