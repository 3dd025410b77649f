"""A page model retrained from the user's labels (no Scrapy).

The crawl's model without labels is PU learning (:func:`focuscrawl.relevance.train.train_pu`):
example pages and confident pages as positives, every other page unlabelled. With labels,
:func:`train_from_labels`

1. trains the PU model on the positives plus the pages labelled on topic, the pages labelled
   off topic left out of the unlabelled pages (its ranking of the unlabelled pages and its
   estimate of the topic's share among them);
2. refits it by self-training with the labels clamped (:func:`clamped_self_train`): each round
   an SVM on the positives, the on-topic labels and the top-ranked unlabelled pages against the
   off-topic labels (weighted ``LABEL_WEIGHT`` each: a label is a certainty, a pseudo-label a
   guess) and the unlabelled pages ranked far below; then re-ranks;
3. puts the threshold where a logistic fit of the labels on the refitted model's decision says
   P(on topic) = 0.4 (:func:`label_threshold`, Platt scaling): the labelled pages are the pages
   the model was least sure about, near its threshold, so they say where it should be. (PU
   learning's own threshold comes from its estimate of the topic's share, 2-3 times the true
   share on the DEV topics: its F1 suffers from it, its ranking does not.)

Its parameters were chosen on the DEV and TUNED topics (``bench/bench_feedback_f1.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from focuscrawl.relevance import rules
from focuscrawl.relevance.ensemble import rate_threshold
from focuscrawl.relevance.features import TermCounts
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.train import _linear_model, keyword_terms, train_pu

#: How much one label weighs against one pseudo-labelled page in the clamped refit.
LABEL_WEIGHT = 5.0
#: Clamped self-training rounds.
CLAMPED_ROUNDS = 3
#: The threshold fit (:func:`label_threshold`): each training positive's weight beside a label's,
#: and the probability of "on topic" the threshold is put at: the F1-optimal threshold of a
#: calibrated classifier is half the F1 it reaches (Lipton et al. 2014, "Thresholding classifiers
#: to maximize F1 score"), about 0.8 / 2 here. (DEV+TUNED mean F1 at 20 / 50 labels: 0.745 / 0.765 at 0.5, 0.754 / 0.773 at
#: 0.4, 0.727 / 0.787 at 0.3; positive weight 0.05 / 0.5: 0.717 / 0.751, 0.748 / 0.765.)
POSITIVE_WEIGHT = 0.2
THRESHOLD_PROBABILITY = 0.4


def clamped_self_train(
    P: sp.csr_matrix,
    U: sp.csr_matrix,
    L: sp.csr_matrix,
    y_labels: np.ndarray,
    decision: np.ndarray,
    n_est: float,
    *,
    rounds: int = CLAMPED_ROUNDS,
    label_weight: float = LABEL_WEIGHT,
    positive_share: float = rules.SELF_TRAIN_POSITIVE_SHARE,
    negative_from: float = rules.SELF_TRAIN_NEGATIVE_FROM,
    c: float = rules.SVM_C,
) -> tuple[np.ndarray, float]:
    """Self-training (as :func:`focuscrawl.relevance.pu.self_train`) with labelled pages ``L``
    (``y_labels`` ±1) in every round at ``label_weight``; ``n_est`` is the estimated number of
    topic pages among ``U``. Returns the last round's ``(coef, intercept)``."""
    n_u = U.shape[0]
    n_pos = int(round(positive_share * n_est))
    n_neg_from = min(n_u, int(round(negative_from * n_est)))
    dec = np.asarray(decision, dtype=float)
    coef, intercept = np.zeros(P.shape[1]), 0.0
    for _ in range(max(1, rounds)):
        order = np.argsort(-dec, kind="stable")
        X = sp.vstack([P, U[order[:n_pos]], U[order[n_neg_from:]], L]).tocsr()
        y = np.r_[np.ones(P.shape[0] + n_pos), -np.ones(n_u - n_neg_from), y_labels]
        w = np.r_[
            np.ones(P.shape[0] + n_pos + n_u - n_neg_from), np.full(len(y_labels), label_weight)
        ]
        clf = LinearSVC(C=c, class_weight="balanced", max_iter=5000).fit(X, y, sample_weight=w)
        coef, intercept = clf.coef_.ravel().copy(), float(clf.intercept_[0])
        dec = np.asarray(U @ coef).ravel() + intercept
    return coef, intercept


def label_threshold(
    labelled: np.ndarray,
    y_labels: np.ndarray,
    positives: np.ndarray,
    default: float,
    *,
    positive_weight: float = POSITIVE_WEIGHT,
    at: float = THRESHOLD_PROBABILITY,
) -> float:
    """The decision value at which P(on topic) = ``at`` by a logistic fit (Platt scaling) of
    the labels on the model's decision. The training positives join the fit at
    ``positive_weight`` each (without them a few labels, all off topic as the least certain
    pages mostly are, have no upper side), and one off-topic point sits at ``default`` (the
    threshold the topic's estimated share gives) so that the fit exists with one side only.
    ``default`` when the fit does not rise with the decision."""
    x = np.r_[labelled, positives, default]
    y = np.r_[(y_labels > 0).astype(int), np.ones(len(positives), int), 0]
    w = np.r_[np.ones(len(labelled)), np.full(len(positives), positive_weight), 1.0]
    if len(np.unique(y)) < 2:
        return default
    fit = LogisticRegression(C=1.0).fit(x[:, None], y, sample_weight=w)
    slope = float(fit.coef_[0, 0])
    if slope <= 0:
        return default
    return float((np.log(at / (1 - at)) - fit.intercept_[0]) / slope)


def refit_from_labels(
    base: RelevanceModel,
    positives: Sequence[TermCounts],
    unlabeled: Sequence[TermCounts],
    on_topic: Sequence[TermCounts],
    off_topic: Sequence[TermCounts],
    keywords: Sequence[str] = (),
    *,
    n_est: float | None = None,
) -> RelevanceModel:
    """Steps 2 and 3 of the module docstring on a trained PU model ``base`` (its vectorizer
    and ranking): ``unlabeled`` are the pages not labelled, ``n_est`` the estimated number of
    topic pages among them (default: as many as ``base`` calls on topic)."""
    vec = base.report_.vectorizer  # type: ignore[attr-defined]
    kw = keyword_terms(keywords)
    pos_terms = list(positives) + ([kw] if kw else [])
    P = vec.transform(pos_terms)
    U = vec.transform(list(unlabeled))
    L = vec.transform(list(on_topic) + list(off_topic))
    y_l = np.r_[np.ones(len(on_topic)), -np.ones(len(off_topic))]
    dec_u = np.asarray(U @ base.coef).ravel() + base.intercept
    if n_est is None:
        n_est = float(np.sum(dec_u >= 0))
    n_est = max(n_est, float(len(on_topic)), 1.0)
    coef, intercept = clamped_self_train(P, U, L, y_l, dec_u, n_est)
    t_rate = rate_threshold(np.asarray(U @ coef).ravel() + intercept, int(n_est))
    t = label_threshold(
        np.asarray(L @ coef).ravel() + intercept,
        y_l,
        np.asarray(P @ coef).ravel() + intercept,
        t_rate,
    )
    info = dict(base.info)
    info.update(
        labels_on_topic=len(on_topic),
        labels_off_topic=len(off_topic),
        label_weight=LABEL_WEIGHT,
        threshold_moved=round(float(t - t_rate), 4),
    )
    model = _linear_model(
        "pu-ensemble", vec, coef, intercept - t, pos_terms + list(on_topic), keywords, info
    )
    model.report_ = base.report_  # type: ignore[attr-defined]
    return model


def train_from_labels(
    positives: Sequence[TermCounts],
    unlabeled: Sequence[TermCounts],
    on_topic: Sequence[TermCounts] = (),
    off_topic: Sequence[TermCounts] = (),
    keywords: Sequence[str] = (),
    *,
    seed: int = 0,
) -> RelevanceModel:
    """The page model of the positives, the unlabelled pages and the user's labels (module
    docstring): the PU model of the positives and the on-topic pages, refitted with every label
    by :func:`refit_from_labels`; without labels the PU model."""
    base = train_pu(list(positives) + list(on_topic), unlabeled, keywords, seed=seed)
    if not off_topic and not on_topic:
        return base
    report = base.report_  # type: ignore[attr-defined]
    n_est = float(np.sum(report.rounds[0].decision(report.unlabeled) >= 0))
    return refit_from_labels(base, positives, unlabeled, on_topic, off_topic, keywords, n_est=n_est)
