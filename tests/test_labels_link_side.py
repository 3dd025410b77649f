"""The user's labels (and a page model retrained from them) on the link side: a page the link
strategy learned from with one judgement is moved to the other (``relabel``), and a retrained
model that only decides which pages are relevant (``RetrainingModel(judge_only=True)``)."""

from __future__ import annotations

from typing import Any

import pytest

from focuscrawl.blocks.model import Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.online import RetrainingModel
from focuscrawl.spiders.rescore import FrontierRescore
from focuscrawl.strategy.linklearner import LinkLearner
from focuscrawl.strategy.scoring import SharkParams
from focuscrawl.strategy.wordmodel import BodyWordModel
from tests.test_strategy_policy import KeywordModel, judge, make_page, make_policy


def test_a_relabelled_page_counts_as_if_it_had_been_learned_with_the_new_judgement() -> None:
    moved, truth = BodyWordModel(every=1, min_examples=1), BodyWordModel(every=1, min_examples=1)
    for m in (moved, truth):
        m.learn(["city", "road"], False)
        m.learn(["eagle", "nest"], True)
    words = moved.learn(["owl", "nest", "owl"], False)
    truth.learn(["owl", "nest"], True)
    assert moved.lift(["owl"]) < truth.lift(["owl"])
    moved.relabel(words, True)
    moved.refresh()
    assert moved.counts == truth.counts and moved.docs == truth.docs
    assert moved.lift(["owl"]) == pytest.approx(truth.lift(["owl"]))
    assert moved.lift(["owl"]) > 0


def test_a_relabelled_link_counts_as_if_it_had_been_credited_with_the_new_outcome() -> None:
    moved, truth = LinkLearner(every=1, min_examples=1), LinkLearner(every=1, min_examples=1)
    for m in (moved, truth):
        m.learn(["a:city"], False)
        m.learn(["a:eagle"], True)
    moved.learn(["a:owl", "h:b.test"], False)
    truth.learn(["a:owl", "h:b.test"], True)
    moved.relabel(["a:owl", "h:b.test"], True)
    moved.fit()
    assert moved.counts == truth.counts and moved.tokens == truth.tokens
    assert moved.prob(["a:owl"]) == pytest.approx(truth.prob(["a:owl"]))


def _judged_policy() -> Any:
    params = SharkParams(words=1.0, learn=0.1, learn_every=1)
    policy = make_policy(KeywordModel(0.3), "sharksearch-blocks", params)
    policy.relabel_pages = 100
    for i in range(6):
        judge(policy, make_page(f"http://a.test/b{i}", "bird bird wing", []), RequestState())
        judge(policy, make_page(f"http://a.test/c{i}", "town road", []), RequestState())
    # judged irrelevant by the model; the user will say it is on topic
    page = make_page("http://a.test/owl", "owl owl nest", [])
    judge(policy, page, RequestState(1, parent="http://a.test/b0", anchor="barn owl"))
    return policy


def test_the_policy_moves_what_it_learned_from_a_page_the_user_labelled() -> None:
    policy = _judged_policy()
    words, learner = policy.words, policy.learner
    before = words.docs[:], learner.docs[:]
    assert words.counts["owl"] == [1, 0]
    assert policy.relabel("http://a.test/owl", False) is False  # as judged: nothing moves
    assert policy.relabel("http://a.test/unknown", True) is False
    assert policy.relabel("http://a.test/owl", True) is True
    assert words.counts["owl"] == [0, 1] and words.docs == [before[0][0] - 1, before[0][1] + 1]
    assert learner.counts["a:barn"] == [0, 1] and learner.docs == [0, before[1][1] + 1]
    assert policy.relabelled == 1
    assert policy.relabel("http://a.test/owl", True) is False  # moved once


def test_a_policy_keeps_no_lessons_unless_asked_and_only_the_last_ones() -> None:
    params = SharkParams(words=1.0, learn=0.1, learn_every=1)
    policy = make_policy(KeywordModel(0.3), "sharksearch-blocks", params)
    judge(policy, make_page("http://a.test/owl", "owl", []), RequestState(1, parent="x"))
    assert policy.relabel("http://a.test/owl", True) is False  # the default keeps none
    policy.relabel_pages = 2
    for i in range(3):
        judge(policy, make_page(f"http://a.test/p{i}", "owl", []), RequestState(1, parent="x"))
    assert policy.relabel("http://a.test/p0", True) is False  # forgotten
    assert policy.relabel("http://a.test/p2", True) is True


def test_a_retrains_scores_relabel_the_link_side_labels_first() -> None:
    moved: list[tuple[str, bool]] = []

    def relabel(url: str, relevant: bool) -> bool:
        moved.append((url, relevant))
        return True

    r = FrontierRescore(lambda *a: [], relabel=relabel)
    labels = {"http://x.test/c": True}
    scores = [("http://x.test/a", 0.9), ("http://x.test/b", 0.1), ("http://x.test/c", 0.1)]
    assert list(r.rescored(scores, 0.5, labels.get)) == []  # no page kept: nothing sent
    assert moved == [
        ("http://x.test/a", True),
        ("http://x.test/b", False),
        ("http://x.test/c", True),
    ]
    assert r.relabelled == 3


class _Retrained:
    """A retrained model's stand-in: relevance 0.9 for pages about owls, else 0.1."""

    threshold = 0.5

    def score_page(self, page: Page) -> float:
        return 0.9 if "owl" in page.main_text else 0.1

    def score_text(self, text: str) -> float:
        return 0.77


def test_a_judge_only_retrained_model_decides_and_the_base_keeps_its_scale() -> None:
    base = KeywordModel(0.3)
    wrapper = RetrainingModel(base, ["bird"], every=0, judge_only=True)
    owl = make_page("http://a.test/owl", "owl nest bird", [])  # base 1/3: relevant
    owl2 = make_page("http://a.test/owl2", "owl nest tree", [])  # base 0: irrelevant
    bird = make_page("http://a.test/bird", "bird bird", [])  # base 1: relevant
    assert wrapper.score_page(owl2) == 0.0  # before a retrain: the base
    wrapper.model = _Retrained()  # as a retrain swaps it in
    assert wrapper.deciding
    assert wrapper.score_page(owl) == pytest.approx(1 / 3)  # agree: the base's relevance
    assert wrapper.score_page(owl2) == 0.3  # raised to the base's threshold
    assert wrapper.score_page(bird) < 0.3 < 1.0  # vetoed: just below it
    assert wrapper.score_text("bird wing") == 0.5  # link texts: the base's scores
    wrapper.threshold = 0.25  # the judge's calibration still reaches the base
    assert base.threshold == 0.25 and wrapper.threshold == 0.25
    wrapper._rescored = [("http://a.test/owl2", 0.9), ("http://a.test/bird", 0.1)]
    assert dict(wrapper.take_rescored()) == {
        "http://a.test/owl2": 0.25,
        "http://a.test/bird": pytest.approx(0.25),
    }
    assert wrapper.take_rescored() == []
    lenient = RetrainingModel(KeywordModel(0.3), ["bird"], every=0, judge_only=True, veto=False)
    lenient.model = _Retrained()
    assert lenient.score_page(bird) == 1.0  # without the veto the base's relevant pages stay


def test_without_judge_only_the_retrained_model_scores_everything() -> None:
    wrapper = RetrainingModel(KeywordModel(0.3), ["bird"], every=0)
    wrapper.model = _Retrained()
    page = make_page("http://a.test/bird", "bird bird", [])
    assert wrapper.score_page(page) == 0.1 and wrapper.score_text("x") == 0.77
    assert wrapper.threshold == 0.5
