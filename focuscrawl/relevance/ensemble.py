"""Combine the PU rounds' classifiers with weights found by PSO (no Scrapy).

The ensemble's decision is the weighted mean of the rounds' decision values minus a threshold,
so it is itself one linear function and scores a page as fast as a single SVM.

Fitness (maximised by PSO), from the held-back positives and the reliable negatives or the
unlabelled pages:

* ``"pu"`` — Lee & Liu's PU criterion ``recall² / P(f(x) = 1)``: recall on the held-back
  positives, the predicted-positive rate on the unlabelled pages. It is proportional to
  ``precision · recall / P(y = 1)``, so it ranks classifiers like F1 does, without negatives.
* ``"f1"`` — F1 of held-back positives against the reliable negatives. With a handful of
  held-back positives that every round separates from the reliable negatives, F1 is 1.0 on a
  wide band of weights and thresholds: the fitness is flat and PSO lands anywhere in the band
  (Wikispeedia, 6 categories: mean F1 0.478).
* ``"auc"`` (the default, ``rules.ENSEMBLE_CRITERION``) — the ROC AUC of the held-back positives
  against the unlabelled pages (a ranking measure: the unlabelled pages are mostly negatives),
  plus ``rules.ENSEMBLE_UNIFORM_PULL`` × the normalised entropy of the weights, which pulls
  towards equal weights when the few held-back positives cannot tell rounds apart. Each round's
  decision is standardised (divided by its standard deviation on the unlabelled pages) first.
  The threshold is not searched: :func:`prior_matched` sets it afterwards.
* ``"hinge"`` — minus the class-balanced mean hinge
  loss of the held-back positives (+1) and the reliable negatives (−1). It is continuous in the
  weights, so it has no plateau; the threshold stays at the SVMs' own 0 (PSO searches the
  weights only), which the measurements show is where the kept rounds are well placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata

from focuscrawl.relevance import pso, rules
from focuscrawl.relevance.pu import LinearRound

THRESHOLD_RANGE = 1.0  # PSO searches the threshold in [-1, 1] (SVM decision units)


@dataclass(slots=True)
class Ensemble:
    weights: np.ndarray  # one per round, sums to 1
    threshold: float
    fitness: float
    history: list[float]

    def collapse(self, rounds: Sequence[LinearRound]) -> tuple[np.ndarray, float]:
        """The ensemble as one linear function: ``(coef, intercept)``."""
        coef = sum(w * r.coef for w, r in zip(self.weights, rounds, strict=True))
        intercept = sum(w * r.intercept for w, r in zip(self.weights, rounds, strict=True))
        return np.asarray(coef), float(intercept) - self.threshold


def _combine(position: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    w = position[:-1]
    total = w.sum()
    w = w / total if total > 0 else np.full(len(w), 1.0 / len(w))
    return w @ decisions - position[-1]


def pu_fitness(pos_dec: np.ndarray, unl_dec: np.ndarray):  # noqa: ANN201
    def fitness(position: np.ndarray) -> float:
        recall = float(np.mean(_combine(position, pos_dec) > 0))
        rate = float(np.mean(_combine(position, unl_dec) > 0))
        return recall * recall / rate if rate > 0 else 0.0

    return fitness


def f1_fitness(pos_dec: np.ndarray, neg_dec: np.ndarray):  # noqa: ANN201
    def fitness(position: np.ndarray) -> float:
        tp = float(np.sum(_combine(position, pos_dec) > 0))
        fp = float(np.sum(_combine(position, neg_dec) > 0))
        fn = pos_dec.shape[1] - tp
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    return fitness


def hinge_fitness(pos_dec: np.ndarray, neg_dec: np.ndarray):  # noqa: ANN201
    def fitness(weights: np.ndarray) -> float:
        position = np.append(weights, 0.0)  # threshold fixed at 0
        loss_p = np.maximum(0.0, 1.0 - _combine(position, pos_dec)).mean()
        loss_n = np.maximum(0.0, 1.0 + _combine(position, neg_dec)).mean()
        return -float(loss_p + loss_n) / 2

    return fitness


def auc(pos: np.ndarray, others: np.ndarray) -> float:
    """ROC AUC of ``pos`` against ``others`` (ties count half)."""
    ranks = rankdata(np.concatenate([pos, others]))
    n = len(pos)
    return float((ranks[:n].sum() - n * (n + 1) / 2) / (n * len(others)))


def auc_fitness(pos_dec: np.ndarray, unl_dec: np.ndarray, pull: float):  # noqa: ANN201
    k = pos_dec.shape[0]

    def fitness(weights: np.ndarray) -> float:
        total = weights.sum()
        w = weights / total if total > 0 else np.full(k, 1.0 / k)
        nz = w[w > 0]
        entropy = float(-(nz * np.log(nz)).sum() / np.log(k))
        return auc(w @ pos_dec, w @ unl_dec) + pull * entropy

    return fitness


def standardised(rounds: Sequence[LinearRound], unlabeled: sp.spmatrix) -> np.ndarray:
    """Each round's scale: the standard deviation of its decision on the unlabelled pages."""
    sd = np.array([r.decision(unlabeled).std() for r in rounds])
    return np.where(sd > 0, sd, 1.0)


def prior_matched(
    rounds: Sequence[LinearRound], weights: np.ndarray, unlabeled: sp.spmatrix
) -> tuple[np.ndarray, float, float]:
    """The standardised weighted rounds as one linear function ``(coef, intercept, rate)``
    whose threshold 0 classifies positive the share ``rate`` of the unlabelled pages that the
    first round classifies positive.

    The first round learns from reliable negatives only, so its own threshold estimates the
    topic's share of the unlabelled pages well (Wikispeedia: 3.3% vs the true 3.1% for Birds);
    later rounds rank better but their threshold drifts towards the positives."""
    w = np.asarray(weights, dtype=float) / standardised(rounds, unlabeled)
    coef = np.asarray(sum(wi * r.coef for wi, r in zip(w, rounds, strict=True)))
    intercept = float(sum(wi * r.intercept for wi, r in zip(w, rounds, strict=True)))
    first = rounds[0].decision(unlabeled) >= 0
    rate = float(np.mean(first))
    if len(rounds) == 1:  # the first round alone: its own threshold
        return coef, intercept, rate
    dec = np.asarray(unlabeled @ coef).ravel() + intercept
    return coef, intercept - rate_threshold(dec, int(first.sum())), rate


def rate_threshold(decision: np.ndarray, n_pos: int) -> float:
    """The threshold that calls exactly the ``n_pos`` highest of ``decision`` positive: the
    middle of the gap between the last page called positive and the next."""
    dec = np.sort(np.asarray(decision, dtype=float))[::-1]
    if n_pos <= 0:
        return float(dec[0]) + 1e-9
    if n_pos >= len(dec):
        return float(dec[-1]) - 1e-9
    return float(dec[n_pos - 1] + dec[n_pos]) / 2


def fit_ensemble(
    rounds: Sequence[LinearRound],
    positives: sp.spmatrix,
    others: sp.spmatrix,
    *,
    criterion: str = rules.ENSEMBLE_CRITERION,
    variant: str = "standard",
    iterations: int = 60,
    particles: int = 20,
    seed: int = 0,
) -> Ensemble:
    """PSO weights for ``rounds`` from held-back ``positives`` and ``others`` (the unlabelled
    pages for ``criterion="pu"`` and ``"auc"``, the reliable negatives for ``"f1"`` and ``"hinge"``).
    A single round needs no search: weight 1, threshold 0."""
    k = len(rounds)
    if k == 1:
        return Ensemble(np.ones(1), 0.0, float("nan"), [])
    pos_dec = np.vstack([r.decision(positives) for r in rounds])
    oth_dec = np.vstack([r.decision(others) for r in rounds])
    if criterion in ("pu", "pu-all"):
        fitness = pu_fitness(pos_dec, oth_dec)
    elif criterion == "f1":
        fitness = f1_fitness(pos_dec, oth_dec)
    elif criterion in ("auc", "hinge"):
        # weights only (the threshold is set apart): rankings for "auc", margins for "hinge"
        if criterion == "auc":
            scale = standardised(rounds, others)
            fitness = auc_fitness(
                pos_dec / scale[:, None], oth_dec / scale[:, None], rules.ENSEMBLE_UNIFORM_PULL
            )
        else:
            fitness = hinge_fitness(pos_dec, oth_dec)
        result = pso.maximise(
            fitness, k, particles=particles, iterations=iterations, variant=variant, seed=seed
        )
        w = result.best / result.best.sum() if result.best.sum() > 0 else np.full(k, 1.0 / k)
        return Ensemble(w, 0.0, result.fitness, result.history)
    else:
        raise ValueError(f"unknown ensemble criterion {criterion!r} (auc, hinge, pu, f1)")
    lower = np.concatenate([np.zeros(k), [-THRESHOLD_RANGE]])
    upper = np.concatenate([np.ones(k), [THRESHOLD_RANGE]])
    result = pso.maximise(
        fitness,
        k + 1,
        lower=lower,
        upper=upper,
        particles=particles,
        iterations=iterations,
        variant=variant,
        seed=seed,
    )
    w = result.best[:-1]
    w = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
    return Ensemble(w, float(result.best[-1]), result.fitness, result.history)
