from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from focuscrawl.blocks.partition import partition
from focuscrawl.relevance import pso, rules
from focuscrawl.relevance.ensemble import auc, fit_ensemble, prior_matched
from focuscrawl.relevance.features import FieldTfidfVectorizer, LinearTermScorer, page_terms
from focuscrawl.relevance.pu import (
    LinearRound,
    held_recall,
    iterative_svm,
    positive_features,
    reliable_negatives,
    rounds_to_keep,
    self_train,
)
from focuscrawl.relevance.rules import FIELD_WEIGHTS
from focuscrawl.relevance.train import pages_to_terms, train_pu
from tests.relevance_pages import web


@pytest.fixture(scope="module")
def matrices():
    pages = web(n_per_topic=25, seed=7)
    _, pos, _ = pages_to_terms(pages["birds"][:10], "positive")
    unl_pages = pages["birds"][10:] + [p for t, ps in pages.items() if t != "birds" for p in ps]
    _, unl, _ = pages_to_terms(unl_pages, "unlabelled")
    truth = np.array([1] * 15 + [0] * (len(unl) - 15), dtype=bool)
    vec = FieldTfidfVectorizer().fit(pos + unl)
    return vec, vec.transform(pos), vec.transform(unl), truth, unl


def test_page_terms_weight_terms_by_where_they_occur():
    html = (
        "<html><head><title>Heron</title></head><body><h2>Nest</h2>"
        "<p>egg heron nest</p></body></html>"
    )
    terms = page_terms(partition(html, "http://x.test/"))
    assert terms["heron"] == pytest.approx(FIELD_WEIGHTS["title"] + FIELD_WEIGHTS["text"])
    assert terms["egg"] < terms["heron"]


def test_one_term_scorer_matches_the_training_matrix(matrices):
    vec, P, U, _, unl = matrices
    rng = np.random.default_rng(0)
    coef = rng.normal(size=len(vec.vocabulary_))
    scorer = LinearTermScorer(vec.vocabulary_, vec.idf_, coef, 0.3)
    batch = np.asarray(U @ coef).ravel() + 0.3
    single = np.array([scorer.decision(t) for t in unl])
    np.testing.assert_allclose(single, batch, atol=1e-9)


def test_one_dnf_finds_topic_features_and_negatives_without_them(matrices):
    vec, P, U, truth, _ = matrices
    pf = positive_features(P, U)
    terms = {t for t, j in vec.vocabulary_.items() if j in set(pf)}
    assert {"bird", "nest", "plumage"} & terms
    assert not terms & {"loan", "goal", "recipe", "planet"}
    rn = reliable_negatives(U, pf)
    assert len(rn) > 0
    assert truth[rn].mean() < 0.1  # reliable negatives are (almost) all true negatives


def test_iterative_svm_keeps_every_round_and_the_negative_set_only_grows(matrices):
    vec, P, U, truth, _ = matrices
    rn = reliable_negatives(U, positive_features(P, U))
    rounds = iterative_svm(P, U, rn)
    assert len(rounds) >= 1
    counts = [r.n_negatives for r in rounds]
    assert counts == sorted(counts)
    pred = rounds[-1].decision(U) > 0
    assert (pred == truth).mean() >= 0.9


@pytest.mark.parametrize("variant", ["standard", "bwpso"])
def test_pso_finds_the_maximum_of_a_smooth_function(variant):
    target = np.array([0.2, 0.7, 0.5])
    res = pso.maximise(
        lambda x: -float(np.sum((x - target) ** 2)), 3, iterations=80, variant=variant, seed=1
    )
    np.testing.assert_allclose(res.best, target, atol=0.05)
    assert res.history == sorted(res.history)  # the swarm best never gets worse
    assert res.iterations_to(res.fitness) <= len(res.history)


def test_pso_rejects_an_unknown_variant():
    with pytest.raises(ValueError, match="unknown PSO variant"):
        pso.maximise(lambda x: 0.0, 2, variant="magic")


def test_ensemble_weights_sum_to_one_and_collapse_to_the_weighted_decision(matrices):
    vec, P, U, _, _ = matrices
    rounds = iterative_svm(P, U, reliable_negatives(U, positive_features(P, U)))
    ens = fit_ensemble(rounds, P, U, iterations=10, particles=8)
    assert ens.weights.sum() == pytest.approx(1.0) and (ens.weights >= 0).all()
    coef, intercept = ens.collapse(rounds)
    expected = (
        sum(w * r.decision(U) for w, r in zip(ens.weights, rounds, strict=True)) - ens.threshold
    )
    np.testing.assert_allclose(np.asarray(U @ coef).ravel() + intercept, expected, atol=1e-9)


def _round(coef: list[float], intercept: float) -> LinearRound:
    return LinearRound(np.array(coef), intercept, 0, 0)


def test_roc_svm_rule_drops_rounds_that_lose_held_back_positives():
    held = sp.csr_matrix(np.array([[1.0, 0.0], [0.8, 0.2], [0.6, 0.1], [0.9, 0.0]]))
    first = _round([1.0, 0.0], -0.1)  # all 4 positive
    same = _round([1.0, 0.0], -0.5)  # still all 4
    eroded = _round([1.0, 0.0], -0.7)  # loses 0.6: recall 0.75
    back = _round([1.0, 0.0], 0.0)  # recovers, but comes after an eroded round
    assert held_recall(eroded, held) == pytest.approx(0.75)
    assert rounds_to_keep([first, same, eroded, back], held) == 2
    assert rounds_to_keep([first, eroded], held, max_lost=0.3) == 2
    assert rounds_to_keep([first], held) == 1


def test_hinge_ensemble_prefers_the_round_that_separates_with_a_margin(matrices):
    _, P, U, truth, _ = matrices
    good = iterative_svm(P, U, reliable_negatives(U, positive_features(P, U)))[0]
    bad = LinearRound(-good.coef, -good.intercept, 0, 0)  # the same classifier, reversed
    neg = U[np.flatnonzero(~truth)]
    ens = fit_ensemble([bad, good], P, neg, criterion="hinge", iterations=30, particles=10)
    assert ens.threshold == 0.0
    assert ens.weights[1] > 0.9
    assert ens.history == sorted(ens.history)
    single = fit_ensemble([good], P, neg, criterion="hinge")
    assert single.weights.tolist() == [1.0] and single.threshold == 0.0


def test_prior_matched_threshold_keeps_the_first_rounds_positive_rate(matrices):
    _, P, U, truth, _ = matrices
    rounds = iterative_svm(P, U, reliable_negatives(U, positive_features(P, U)))
    later = LinearRound(rounds[0].coef, rounds[0].intercept - 5.0, 0, 0)  # threshold drifted
    coef, intercept, rate = prior_matched([rounds[0], later], np.array([0.5, 0.5]), U)
    assert rate == pytest.approx(np.mean(rounds[0].decision(U) >= 0))
    pred = np.asarray(U @ coef).ravel() + intercept >= 0
    assert pred.mean() == pytest.approx(rate, abs=1.5 / U.shape[0])
    assert later.decision(U).max() < 0  # alone, the drifted round calls nothing positive
    assert (pred == truth).mean() >= 0.9


@pytest.fixture(scope="module")
def birds_pu():
    """10 bird pages as positives, the other 15 bird pages and every other topic unlabelled,
    and the PU model trained from them with the defaults."""
    pages = web(n_per_topic=25, seed=7)
    _, pos, _ = pages_to_terms(pages["birds"][:10], "positive")
    unl_pages = pages["birds"][10:] + [p for t, ps in pages.items() if t != "birds" for p in ps]
    _, unl, _ = pages_to_terms(unl_pages, "unlabelled")
    return pos, unl, train_pu(pos, unl, ["birds"])


def test_pu_training_keeps_every_round_and_roc_svm_choice(birds_pu):
    _, unl, model = birds_pu
    report = model.report_
    assert report.trial_rounds and 1 <= report.n_keep <= len(report.rounds)
    assert len(model.info["held_back_recall"]) == len(report.trial_rounds)
    assert model.info["criterion"] == "auc"
    scores = np.array([model.score_terms(t) for t in unl])
    truth = np.array([1] * 15 + [0] * (len(unl) - 15), dtype=bool)
    assert ((scores >= model.threshold) == truth).mean() >= 0.9


def test_self_training_learns_the_topic_from_a_noisy_ranking_of_the_unlabelled_pages(matrices):
    _, P, U, truth, _ = matrices
    rng = np.random.default_rng(0)
    start = truth + rng.normal(0, 0.8, len(truth))  # a poor ranking (AUC ~0.72)
    few = P[:2]  # two positives: the ranking of the unlabelled pages has to do the work
    st = self_train(few, U, start, truth.mean())
    assert auc(start[truth], start[~truth]) < 0.8
    dec = st.decision(U)
    assert auc(dec[truth], dec[~truth]) >= 0.98
    # the pseudo-labels come from the ranking: the reversed ranking teaches a worse classifier
    rev = self_train(few, U, -start, truth.mean()).decision(U)
    assert auc(rev[truth], rev[~truth]) < 0.9
    n = truth.mean() * U.shape[0]  # top half of the estimate positive, band left out
    assert st.n_train == 2 + round(0.5 * n) + st.n_negatives
    assert st.n_negatives == U.shape[0] - round(1.5 * n)
    assert self_train(few, U, start, 0.0) is None  # no estimated topic page
    assert self_train(few, U, start, truth.mean(), rounds=0) is None


def test_pu_ensemble_self_trains_by_default_and_keeps_the_first_rounds_positive_rate(birds_pu):
    pos, unl, model = birds_pu
    report = model.report_
    assert model.info["self_training"] == rules.SELF_TRAIN_ROUNDS > 0
    assert report.before_self_training is not None
    U = report.unlabeled
    n_first = int(np.sum(report.rounds[0].decision(U) >= 0))
    scores = np.array([model.score_terms(t) for t in unl])
    assert int(np.sum(scores >= model.threshold)) == n_first
    off = train_pu(pos, unl, ["birds"], self_training=0)
    assert off.info["self_training"] == 0 and off.report_.before_self_training is None
    np.testing.assert_allclose(off.coef, report.before_self_training[0])
