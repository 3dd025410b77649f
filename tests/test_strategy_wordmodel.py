from __future__ import annotations

import math

import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.strategy.scoring import SharkParams
from focuscrawl.strategy.wordmodel import BodyWordModel, link_words
from tests.test_strategy_policy import KeywordModel, judge, make_policy


def test_link_words_are_the_distinct_anchor_and_url_path_words() -> None:
    assert link_words("Bald Eagle", "http://w.test/wiki/Bald_Eagle?x=1") == (
        "bald",
        "eagle",
        "wiki",
    )
    assert link_words("", "http://w.test/wiki/Barn_Owl_%28bird%29") == (
        "wiki",
        "barn",
        "owl",
        "bird",
    )


def test_model_abstains_until_it_has_seen_both_classes() -> None:
    model = BodyWordModel(min_examples=2)
    for _ in range(5):
        model.learn(["eagle", "plumage"], True)
    assert model.lift(["eagle"]) == 0.0
    model.learn(["city"], False)
    model.learn(["city"], False)
    assert model.lift(["eagle"]) > 0.0


def test_words_of_relevant_pages_lift_a_link_and_words_of_irrelevant_pages_lower_it() -> None:
    model = BodyWordModel(every=1, min_examples=2)
    for i in range(10):
        model.learn(["eagle", "nest", "eagle", f"rare{i}"], True)  # repeats count once
        for _ in range(3):
            model.learn(["city", "nest", "economy"], False)
    assert model.counts["eagle"] == [0, 10]
    assert model.prior == pytest.approx(0.25)
    assert model.evidence("eagle") > 1.0
    assert model.evidence("city") < -1.0
    assert model.evidence("nest") == pytest.approx(0.0)  # on every page: no evidence
    assert model.evidence("unseen") == 0.0
    assert model.lift(["bald", "eagle"]) > 0.3
    assert model.lift(["economy"]) < 0.0
    assert model.lift(["bald"]) == 0.0  # unknown words: the prior, centred to 0
    # the summed evidence is clipped: many strong words cannot make P reach 1
    bound = 1 / (1 + math.exp(-(math.log(0.25 / 0.75) + model.clip))) - model.prior
    assert model.lift(["eagle"] * 50) == pytest.approx(bound)


def test_a_page_teaches_only_its_most_frequent_words_when_bounded() -> None:
    model = BodyWordModel(max_words=2)
    model.learn(["owl", "owl", "owl", "nest", "nest", "barn", "tree"], True)
    assert set(model.counts) == {"owl", "nest"}


def _page(url: str, text: str, links: list[tuple[str, str]]) -> Page:
    lks = [Link(t, a, "", 0, "text", 1.0) for t, a in links]
    return Page(url, "t", [Block(0, "text", text, 1.0, links=lks)], lks)


def _crawl(words: float) -> dict[str, float]:
    """Relevant pages mention eagles in their text (never in an anchor); irrelevant ones do
    not. Then a page links to an eagle name, a town name and a name never seen."""
    params = SharkParams(learn=0.0, words=words, words_top=0, learn_every=1)
    policy = make_policy(KeywordModel(), "sharksearch", params, auto_threshold=0.5)
    judge(policy, _page("http://a.test/s", "bird bird eagle", []), RequestState(seed=True))
    for i in range(6):
        judge(
            policy,
            _page(f"http://a.test/b{i}", "bird eagle bird owl", []),
            RequestState(parent="s"),
        )
        judge(
            policy, _page(f"http://a.test/t{i}", "town road market", []), RequestState(parent="s")
        )
    links = [("http://b/Bald_Eagle", "Bald Eagle"), ("http://b/X", "Market Town")]
    links.append(("http://b/Y", "Sutton Hoo"))
    page = _page("http://a.test/p", "bird song", links)
    return {
        u: s
        for u, s, _ in policy.links(
            page, page.url, RequestState(1), judge(policy, page, RequestState())
        )
    }


def test_policy_lifts_anchors_named_by_the_words_of_relevant_pages() -> None:
    off, on = _crawl(0.0), _crawl(1.0)
    assert on["http://b/Bald_Eagle"] > off["http://b/Bald_Eagle"] + 0.3
    assert on["http://b/X"] < off["http://b/X"]
    assert on["http://b/Y"] == pytest.approx(off["http://b/Y"])  # unknown words: no change


def test_cosine_model_gives_a_pages_most_frequent_terms_ties_to_the_rarer() -> None:
    model = CosineModel(["bird"])
    known = _page("http://a.test/k", "barn road", [])
    model.observe(known, model.score_page(known))
    page = _page("http://a.test/p", "owl owl owl nest nest barn tree", [])
    model.score_page(page)
    assert model.top_terms(page, 2) == ["owl", "nest"]
    # barn and tree occur once each: tree is in fewer of the pages seen
    assert model.top_terms(page, 3) == ["owl", "nest", "tree"]
    assert sorted(model.top_terms(page, 10) or []) == ["barn", "nest", "owl", "tree"]


def test_policy_takes_the_cosine_models_terms_of_the_judged_page() -> None:
    params = SharkParams(words=1.0, words_top=2)
    policy = make_policy(CosineModel(["bird"]), "sharksearch", params, auto_threshold=0.5)
    judge(
        policy, _page("http://a.test/s", "bird bird owl owl owl nest", []), RequestState(seed=True)
    )
    assert policy.words is not None
    assert set(policy.words.counts) == {"owl", "bird"}


def test_a_full_vocabulary_forgets_the_words_of_one_page() -> None:
    model = BodyWordModel(every=1, max_vocab=10)
    for i in range(20):
        model.learn(["owl", f"name{i}"], i % 2 == 0)
    assert "owl" in model.counts
    assert len(model.counts) <= 11


def test_memoised_lift_is_the_lift_until_the_next_refresh() -> None:
    model = BodyWordModel(every=4, min_examples=1)
    model.learn(["eagle", "nest"], True)
    model.learn(["city"], False)
    words = ("bald", "eagle", "owl")
    assert model.lift_of(words) == model.lift(words) > 0.0
    before = model.lift_of(words)  # "bald" and "owl" unknown: looked up again next time
    model.learn(["owl", "eagle"], True)  # "owl" becomes known, on a relevant page
    assert model.lift_of(words) == model.lift(words) > before
    known = ("eagle", "owl")
    cached = model.lift_of(known)
    model.learn(["owl", "eagle"], True)
    model.learn(["city", "owl"], False)  # no refresh yet: known words keep their evidence
    assert model.lift_of(known) == model.lift(known) == cached
    model.learn(["city"], False)  # the 4th page since the last refresh refreshes
    assert model.lift_of(known) == model.lift(known) != cached


def test_chosen_words_are_taken_as_they_are() -> None:
    chosen, sorted_ = BodyWordModel(max_words=2), BodyWordModel(max_words=2)
    chosen.learn(["owl", "nest"], True, chosen=True)
    sorted_.learn(["owl", "owl", "nest", "nest", "tree"], True)
    assert chosen.counts == sorted_.counts == {"owl": [0, 1], "nest": [0, 1]}
