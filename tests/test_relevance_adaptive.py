from __future__ import annotations

import random
from collections import Counter

import pytest

from focuscrawl.blocks.partition import partition
from focuscrawl.relevance import train
from focuscrawl.relevance.adaptive import AdaptiveCosineModel, profile_similarity
from focuscrawl.relevance.online import RetrainingModel
from tests.relevance_pages import TOPICS, web


def _pages(n=30, seed=5):
    return {t: [partition(h, u) for u, h in ps] for t, ps in web(n, seed).items()}


def _drifting_stream(pages, rng):
    """Bird pages, then pages mixing bird words with football words, then pure football."""
    stream = list(pages["birds"])
    stream += [p for p in pages["football"]]
    rng.shuffle(stream)
    return stream


@pytest.mark.parametrize("guard", [True, False])
def test_adaptation_adds_cooccurring_terms_within_the_cap(guard):
    pages = _pages()
    model = AdaptiveCosineModel(
        ["bird feather"], min_relevance=0.0, guard=guard, min_pages=2, update_every=5
    )
    for page in _drifting_stream(pages, random.Random(0)):
        model.observe(page, 1.0)  # every page "confident": only the guard can stop drift
    model.refresh()
    football = set(TOPICS["football"])
    if guard:
        assert model.new_share() <= 0.3 + 1e-9
        assert not football & model.added.keys()  # no co-occurrence with bird terms
        assert set(TOPICS["birds"]) & model.added.keys()
    else:
        assert football & model.added.keys()  # unguarded: the topic drifts to football
    for term, weight in model.original.items():
        assert model.profile[term] >= weight


def test_guarded_profile_stays_closer_to_the_original_than_unguarded():
    pages = _pages()
    sims = {}
    for guard in (True, False):
        model = AdaptiveCosineModel(["bird feather"], min_relevance=0.0, guard=guard, min_pages=2)
        for page in _drifting_stream(pages, random.Random(1)):
            model.observe(page, 1.0)
        model.refresh()
        sims[guard] = profile_similarity(model.profile, model.original, model)
    assert sims[True] > sims[False]
    assert profile_similarity({"a": 1.0}, {"a": 2.0}) == pytest.approx(1.0)
    assert profile_similarity({"a": 1.0}, {"b": 1.0}) == 0.0


def test_low_relevance_pages_never_feed_the_profile():
    pages = _pages()
    model = AdaptiveCosineModel(["bird"], min_relevance=0.9, min_pages=1, update_every=1)
    for page in pages["birds"]:
        model.observe(page, 0.5)
    assert model.added == {} and model.confident_pages == 0


def test_retraining_model_swaps_in_a_model_trained_in_the_worker_process():
    raw = web(30, seed=9)
    start = train([], keywords=["bird feather nest"])
    wrapper = RetrainingModel(start, ["bird"], every=40, confident=0.2, min_positives=5)
    assert wrapper.threshold == start.threshold
    pages = [partition(h, u) for ps in raw.values() for u, h in ps]
    random.Random(2).shuffle(pages)
    for page in pages[:120]:
        wrapper.observe(page, wrapper.score_page(page))
    wrapper.wait()
    wrapper.close()
    assert wrapper.failures == 0
    assert wrapper.retrains >= 1
    assert wrapper.model is not start and wrapper.model.kind == "pu-ensemble"
    bird = partition(*reversed(raw["birds"][-1]))
    money = partition(*reversed(raw["finance"][-1]))
    assert wrapper.score_page(bird) > wrapper.score_page(money)


def test_seed_texts_added_by_the_spider_join_the_original_topic():
    model = AdaptiveCosineModel(["bird"])
    wrapper = RetrainingModel(model, ["bird"])
    wrapper.add_text("heron plumage nest")
    assert {"heron", "plumage", "nest", "bird"} <= model.original.keys()
    assert model.added == {}


def test_cosine_counts_each_page_once_and_as_the_token_list_did():
    from collections import Counter

    from focuscrawl.relevance.cosine import CosineModel, token_counts
    from focuscrawl.text import tokens

    pages = [p for ps in _pages().values() for p in ps]
    odd = "The owl's nest — an OWL, a heron; x y 3d _a naïve-ly ’quoted’ 12 of-the"
    for text in [odd] + [p.main_text for p in pages[:20]]:
        assert token_counts(text) == Counter(tokens(text))
    reused, fresh = CosineModel(["bird"]), CosineModel(["bird"])
    for page in pages:
        reused.observe(page, reused.score_page(page))  # observe reuses score_page's counts
        fresh.observe(page, 0.0)
    assert reused.dfs.df == fresh.dfs.df and reused.dfs.n_docs == fresh.dfs.n_docs


def test_a_dead_retraining_worker_is_counted_and_the_crawl_keeps_its_model():
    import os
    import signal

    raw = web(30, seed=9)
    start = train([], keywords=["bird feather nest"])
    wrapper = RetrainingModel(start, ["bird"], every=10**9, confident=0.2, min_positives=5)
    pages = [partition(h, u) for ps in raw.values() for u, h in ps]
    random.Random(3).shuffle(pages)
    for page in pages[:80]:
        wrapper.observe(page, wrapper.score_page(page))
    assert wrapper.start_retrain() and wrapper.retraining
    os.kill(wrapper.worker_pid, signal.SIGKILL)  # the fit cannot have finished: it needs seconds
    wrapper.wait()
    assert not wrapper.retraining
    assert wrapper.worker_deaths == 1 and wrapper.failures == 1 and wrapper.retrains == 0
    assert wrapper.model is start and wrapper.worker_pid is None
    bird = pages[0]
    assert wrapper.score_page(bird) == start.score_page(bird)  # the crawl goes on
    for page in pages[80:]:  # a new worker, whose window fills again
        wrapper.observe(page, wrapper.score_page(page))
    assert wrapper.start_retrain()
    wrapper.wait()
    wrapper.close()
    assert wrapper.retrains == 1 and wrapper.model is not start


def test_retraining_stops_after_repeated_worker_deaths():
    import os
    import signal

    from focuscrawl.relevance.online import MAX_WORKER_DEATHS

    raw = web(5, seed=4)
    pages = [partition(h, u) for ps in raw.values() for u, h in ps]
    start = train([], keywords=["bird"])
    wrapper = RetrainingModel(start, ["bird"], every=10**9, confident=0.2)
    for page in pages[:MAX_WORKER_DEATHS]:
        wrapper.observe(page, 0.5)  # (re)starts the worker
        os.kill(wrapper.worker_pid, signal.SIGKILL)
        wrapper._proc.join()
        assert not wrapper.start_retrain()  # finds it dead
    assert wrapper.worker_deaths == MAX_WORKER_DEATHS and wrapper.gave_up
    wrapper.observe(pages[-1], 0.5)
    assert wrapper.worker_pid is None  # no new worker: the crawl keeps its model
    assert wrapper.model is start and wrapper.score_page(pages[-1]) == start.score_page(pages[-1])


def test_the_confidence_gate_follows_the_calibrated_threshold():
    pages = _pages()["birds"]
    model = AdaptiveCosineModel(
        ["bird feather wing nest egg"], min_relevance=0.0, min_ratio=2.0, update_every=1
    )
    model.threshold = 0.1  # the crawl calibrates the threshold to the topic's page cosines
    for page in pages[:5]:
        model.observe(page, 0.15)  # relevant, but under 2 × the threshold
    assert model.confident_pages == 0
    for page in pages[5:10]:
        model.observe(page, 0.25)
    assert model.confident_pages == 5


@pytest.mark.parametrize("boost", [False, True])
def test_boosting_lets_a_frequent_original_term_gain_within_the_cap(boost):
    pages = _pages()["birds"]
    # "owl" is in the original profile only through one weak seed text
    model = AdaptiveCosineModel(
        ["bird"],
        min_relevance=0.0,
        min_pages=2,
        update_every=5,
        new_scale=100.0,
        max_new_terms=200,
        boost_original=boost,
    )
    model.add_text("owl " + " ".join(["bird"] * 50))
    start = dict(model.original)
    for page in pages:
        model.observe(page, 1.0)
    model.refresh()
    assert model.new_share() <= 0.3 + 1e-9
    for term, weight in start.items():
        assert model.profile[term] >= weight  # originals never lose weight
    owl_pages = sum("owl" in model.main_terms(p) for p in pages)
    assert owl_pages >= 2
    if boost:
        assert model.profile["owl"] > start["owl"]
    else:
        assert model.profile["owl"] == start["owl"] and "owl" not in model.added


def test_with_adapt_judge_off_pages_are_judged_by_the_original_profile_only():
    from focuscrawl.relevance.cosine import CosineModel

    pages = _pages()
    kwargs = dict(min_relevance=0.0, min_pages=2, update_every=5, new_scale=100.0)
    split = AdaptiveCosineModel(["bird feather"], adapt_judge=False, **kwargs)
    plain = CosineModel(["bird feather"])
    for page in pages["birds"]:
        assert split.score_page(page) == pytest.approx(plain.score_page(page))
        split.observe(page, 1.0)
        plain.observe(page, 1.0)
    assert split.added  # adapted: anchors and contexts see the new terms …
    term = max(split.added, key=split.added.get)
    assert split.score_text(term) > plain.score_text(term)
    for page in pages["birds"] + pages["football"]:  # … the judge does not
        assert split.score_page(page) == pytest.approx(plain.score_page(page))


def test_vectorised_ranking_equals_the_plain_sort_of_the_candidates():
    pages = _pages()
    model = AdaptiveCosineModel(
        ["bird feather"], min_relevance=0.0, min_ratio=0.0, min_pages=2, max_new_terms=15
    )
    expected: Counter[str] = Counter()  # counted here independently of the model's store
    for page in pages["birds"] + pages["football"][:5]:
        before = model.confident_pages
        model.observe(page, 1.0)
        n = model.confident_pages
        if n > before:
            terms = set(model.main_terms(page))
            expected.update(terms if model.boost_original else terms - model.original.keys())
        assert model.candidate_pages == dict(expected)
        plain = sorted(
            (
                (c / n * model.dfs.idf(t), t)
                for t, c in model.candidate_pages.items()
                if c >= model.min_pages
            ),
            reverse=True,
        )[: model.max_new_terms]
        assert model._ranked() == plain
    assert len(plain) == 15
