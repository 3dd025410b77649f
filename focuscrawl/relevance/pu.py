"""PU learning: reliable negatives by 1-DNF, then SVMs trained iteratively (no Scrapy).

Positives ``P`` and unlabelled pages ``U`` as rows of a TF-IDF matrix. 1-DNF finds the features
much more frequent among positives than among unlabelled pages; an unlabelled page with none of
them is a reliable negative. Each SVM round then trains on the support vectors, misclassified
and low-margin pages of the round before plus the unlabelled pages newly classified negative,
until no new negative appears. Every round's classifier is kept (the ensemble combines them).

Later rounds erode the positives: each labels more unlabelled pages negative, true positives
among them, and the decision threshold drifts towards the positives (the ranking stays good, the
recall collapses). :func:`rounds_to_keep` applies Li & Liu's Roc-SVM rule to held-back
positives: rounds count only while they keep (almost) the first round's recall.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from focuscrawl.relevance import rules

log = logging.getLogger(__name__)


@dataclass(slots=True)
class LinearRound:
    """One round's linear classifier ``f(x) = coef · x + intercept``."""

    coef: np.ndarray
    intercept: float
    n_train: int
    n_negatives: int  # reliable negatives known after this round

    def decision(self, X: sp.spmatrix) -> np.ndarray:
        return np.asarray(X @ self.coef).ravel() + self.intercept


def positive_features(P: sp.csr_matrix, U: sp.csr_matrix, forced: Sequence[int] = ()) -> np.ndarray:
    """Column indices of 1-DNF positive features (plus ``forced``, e.g. the topic keywords)."""
    share_p = np.asarray((P > 0).mean(axis=0)).ravel()
    share_u = np.asarray((U > 0).mean(axis=0)).ravel()
    mask = (share_p >= rules.DNF_MIN_POSITIVE_SHARE) & (share_p >= rules.DNF_RATIO * share_u)
    mask[list(forced)] = True
    return np.flatnonzero(mask)


def reliable_negatives(U: sp.csr_matrix, features: np.ndarray) -> np.ndarray:
    """Row indices of ``U`` with none of ``features``; the least positive-looking rows instead
    when too few have none (a small or broad topic), so the first SVM has negatives to learn from."""
    if U.shape[0] == 0:
        return np.array([], dtype=np.int64)
    mass = np.asarray(U[:, features].sum(axis=1)).ravel() if len(features) else np.zeros(U.shape[0])
    none = np.flatnonzero(mass == 0)
    want = int(np.ceil(rules.DNF_MIN_NEGATIVE_SHARE * U.shape[0]))
    if len(none) >= want:
        return none
    log.debug(
        "1-DNF: %d of %d unlabelled pages have no positive feature; taking the %d lowest",
        len(none),
        U.shape[0],
        want,
    )
    return np.argsort(mass, kind="stable")[:want]


def held_recall(r: LinearRound, held: sp.spmatrix) -> float:
    """Share of the held-back positives ``held`` that round ``r`` classifies positive."""
    return float(np.mean(r.decision(held) >= 0)) if held.shape[0] else 1.0


def rounds_to_keep(
    rounds: Sequence[LinearRound], held: sp.spmatrix, max_lost: float = rules.ROC_SVM_MAX_LOST
) -> int:
    """How many rounds (at least 1) to keep: Li & Liu's Roc-SVM rule, applied round by round.

    Round ``k`` is kept while its recall on the held-back positives is at least the first
    round's minus ``max_lost`` (and every round before it was kept)."""
    if not rounds:
        return 0
    first = held_recall(rounds[0], held)
    keep = 1
    for r in rounds[1:]:
        if held_recall(r, held) < first - max_lost:
            break
        keep += 1
    return keep


def self_train(
    P: sp.csr_matrix,
    U: sp.csr_matrix,
    decision: np.ndarray,
    rate: float,
    *,
    rounds: int = rules.SELF_TRAIN_ROUNDS,
    positive_share: float = rules.SELF_TRAIN_POSITIVE_SHARE,
    negative_from: float = rules.SELF_TRAIN_NEGATIVE_FROM,
    c: float = rules.SVM_C,
) -> LinearRound | None:
    """Self-training on the unlabelled pages (transductive), from a PU classifier's ranking.

    ``decision`` is the classifier's decision on ``U`` and ``rate`` the estimated share of
    topic pages among them (``n = rate · |U|``). Each round trains an SVM on the positives plus
    the ``positive_share · n`` top-ranked unlabelled pages as positives, and every unlabelled page
    ranked below ``negative_from · n`` as negatives (the uncertain band in between is left out),
    then re-ranks ``U`` with it. Returns the last round's classifier, or ``None`` when there is
    nothing to self-train from (no estimated topic page, or no page below the band)."""
    n_u = U.shape[0]
    n_est = rate * n_u
    n_pos = int(round(positive_share * n_est))
    n_neg_from = int(round(negative_from * n_est))
    if rounds <= 0 or n_est <= 0 or n_neg_from >= n_u:
        return None
    dec = np.asarray(decision, dtype=float)
    result = None
    for _ in range(rounds):
        order = np.argsort(-dec, kind="stable")
        X = sp.vstack([P, U[order[:n_pos]], U[order[n_neg_from:]]]).tocsr()
        y = np.r_[np.ones(P.shape[0] + n_pos), -np.ones(n_u - n_neg_from)]
        clf = _fit(X, y, c)
        result = LinearRound(
            clf.coef_.ravel().copy(), float(clf.intercept_[0]), len(y), n_u - n_neg_from
        )
        dec = result.decision(U)
    return result


def _fit(X: sp.csr_matrix, y: np.ndarray, c: float) -> LinearSVC:
    clf = LinearSVC(C=c, class_weight="balanced", max_iter=5000)
    return clf.fit(X, y)


def iterative_svm(
    P: sp.csr_matrix,
    U: sp.csr_matrix,
    negatives: np.ndarray,
    *,
    c: float = rules.SVM_C,
    max_rounds: int = rules.MAX_ROUNDS,
    low_margin: float = rules.LOW_MARGIN,
) -> list[LinearRound]:
    """Train SVM rounds from positives ``P``, unlabelled ``U`` and the reliable negatives
    (row indices of ``U``). Returns every round's classifier, first to last."""
    X = sp.vstack([P, U]).tocsr()
    n_p = P.shape[0]
    y_all = np.concatenate([np.ones(n_p), -np.ones(U.shape[0])])
    known_neg = np.zeros(U.shape[0], dtype=bool)
    known_neg[negatives] = True
    train = np.concatenate([np.arange(n_p), n_p + np.asarray(negatives, dtype=np.int64)])
    rounds: list[LinearRound] = []
    for _ in range(max_rounds):
        y = y_all[train]
        if len(np.unique(y)) < 2:
            break
        clf = _fit(X[train], y, c)
        r = LinearRound(
            clf.coef_.ravel().copy(), float(clf.intercept_[0]), len(train), int(known_neg.sum())
        )
        rounds.append(r)
        undecided = np.flatnonzero(~known_neg)
        if len(undecided) == 0:
            break
        new_neg = undecided[r.decision(U[undecided]) < 0]
        if len(new_neg) == 0:
            break  # the negative set stopped growing
        known_neg[new_neg] = True
        f = r.decision(X[train])
        margin = y * f
        keep = (margin <= 1.0) | (np.abs(f) < low_margin) | (y > 0)  # SVs, errors, low margin
        train = np.unique(np.concatenate([train[keep], n_p + new_neg]))
    return rounds
