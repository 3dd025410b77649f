from __future__ import annotations

import random

import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import otsu
from focuscrawl.strategy.linklearner import LinkLearner, link_features
from focuscrawl.strategy.scoring import SharkParams
from focuscrawl.text import fast_tokens
from tests.test_strategy_policy import KeywordModel, judge, make_policy


def test_link_features_are_anchor_url_and_host_words() -> None:
    feats = link_features("Golden Eagle", "http://w.test/wiki/Golden_Eagle?x=1")
    assert feats == ["a:golden", "a:eagle", "u:wiki", "u:golden", "u:eagle", "h:w.test"]


def test_url_path_words_split_on_every_non_alphanumeric_character() -> None:
    feats = link_features("", "http://w.test/wiki/Côte_d'Ivoire-(état)/Ærø%20x", kinds="u")
    assert feats == ["u:wiki", "u:côte", "u:ivoire", "u:état", "u:ærø"]


def test_url_path_split_equals_splitting_on_every_non_alphanumeric_character() -> None:
    rng = random.Random(0)
    chars = [chr(i) for i in range(32, 0x3000) if chr(i).isprintable() and chr(i) not in "?#"]
    for _ in range(3000):
        path = "/" + "".join(rng.choice(chars) for _ in range(rng.randint(0, 30)))
        words = "".join(c if c.isalnum() else " " for c in path)  # the definition
        expected = [f"u:{w}" for w in fast_tokens(words)]
        assert link_features("", "http://w.test" + path, kinds="u") == expected, path


def test_stored_anchor_words_give_the_raw_anchors_features() -> None:
    rng = random.Random(1)
    pieces = list("abcdeé XYZ,.;:'-()0123456789\u2019\u201c") + [" the ", " of ", "A "]
    for _ in range(3000):
        anchor = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 100)))
        stored = " ".join(fast_tokens(anchor[:80]))  # what CrawlPolicy.links queues
        assert link_features(stored, "http://h/x") == link_features(anchor[:80], "http://h/x")


def test_learner_abstains_until_it_has_seen_both_classes() -> None:
    learner = LinkLearner(min_examples=2)
    for _ in range(5):
        learner.learn(["a:owl"], True)
    assert learner.prob(["a:owl"]) is None
    learner.learn(["a:city"], False)
    learner.learn(["a:city"], False)
    assert learner.prob(["a:owl"]) is not None


def test_learner_ranks_features_that_led_to_relevant_pages_first() -> None:
    learner = LinkLearner(every=1, min_examples=2)
    for _ in range(10):
        learner.learn(["a:owl", "h:x"], True)
        learner.learn(["a:city", "h:x"], False)
        learner.learn(["a:river", "h:x"], False)
    owl, city, unseen = (learner.prob([f, "h:x"]) for f in ("a:owl", "a:city", "a:gull"))
    assert owl is not None and city is not None and unseen is not None
    assert owl > 0.9 > unseen > city
    assert unseen == pytest.approx(1 / 3, abs=0.05)  # an unknown link: the prior


def test_otsu_splits_a_bimodal_histogram_between_its_modes() -> None:
    hist = [0] * 20
    hist[3], hist[4], hist[14], hist[15] = 30, 20, 10, 15
    assert 5 <= otsu(hist) <= 14


def _page(url: str, text: str, links: list[tuple[str, str]]) -> Page:
    lks = [Link(t, a, "", 0, "text", 1.0) for t, a in links]
    return Page(url, "t", [Block(0, "text", text, 1.0, links=lks)], lks)


def test_policy_learns_from_fetched_children_and_lifts_similar_anchors() -> None:
    params = SharkParams(learn=1.0, learn_every=1)
    policy = make_policy(KeywordModel(), "sharksearch", params, auto_threshold=0.5)
    seed = _page("http://a.test/s", "bird bird", [("http://a.test/o1", "The Barn-Owl, of 1902")])
    judgement = judge(policy, seed, RequestState(seed=True))
    (child,) = [c for _, _, c in policy.links(seed, seed.url, RequestState(seed=True), judgement)]
    # the anchor's words the learner uses travel with the child (lower-cased, no stop words,
    # no numbers: fewer bytes per queued request), and give the raw anchor's features
    assert child.anchor == "barn-owl"
    assert link_features(child.anchor, "http://x/") == link_features(
        "The Barn-Owl, of 1902", "http://x/"
    )
    # owl links led to relevant pages, town links to irrelevant ones
    for i in range(6):
        judge(
            policy,
            _page(f"http://a.test/o{i}", "bird bird", []),
            RequestState(parent="s", anchor="owl"),
        )
        judge(
            policy,
            _page(f"http://a.test/t{i}", "town road", []),
            RequestState(parent="s", anchor="town"),
        )
    assert policy.learner is not None and policy.learner.ready
    page = _page("http://a.test/p", "bird song", [("http://b/1", "owl"), ("http://b/2", "town")])
    scores = {
        u: s
        for u, s, _ in policy.links(
            page, page.url, RequestState(1), judge(policy, page, RequestState())
        )
    }
    assert scores["http://b/1"] > scores["http://b/2"] + 0.5


def test_otsu_calibration_moves_the_threshold_within_its_range() -> None:
    policy = make_policy(KeywordModel(), "sharksearch", auto_threshold=0.35, calibrate="otsu")
    judge(
        policy, _page("http://a.test/s", "bird bird bird bird", []), RequestState(seed=True)
    )  # mean 1.0
    assert policy.page_judge.model.threshold == pytest.approx(0.35)
    # crawled pages: most at 0.1 of the seeds, a relevant mode at 0.8 or more
    for i in range(50):
        text = (
            "bird bird bird bird bird town" if i % 3 == 0 else "bird road town lane hill a b c d e"
        )
        judge(policy, _page(f"http://a.test/{i}", text, []), RequestState(parent="s"))
    assert 0.2 < policy.page_judge.model.threshold <= 0.6
    assert policy.page_judge.model.threshold != pytest.approx(0.35)
    with pytest.raises(ValueError):
        make_policy(KeywordModel(), "sharksearch", calibrate="median")
