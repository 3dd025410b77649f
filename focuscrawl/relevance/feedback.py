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
3. puts the threshold where a class-balanced logistic fit of the labels on the refitted
   model's decision says P(on topic) = 0.5 (:func:`label_threshold`, Platt scaling with each
   class weighing the same in all): the labelled pages are the pages the model was least sure
   about, near its threshold, so they say where it should be. The share of on-topic pages among
   them is not the topic's share (uncertainty sampling picks them, and most are off topic), so
   it must not move the threshold: a fit weighed as the labels came (the first rule, kept as
   ``threshold_rule="label-share"``, at P = 0.4) moved the threshold up with every off-topic
   label (the labels and the training positives sit on the SVM's margins, ±1: separable, so
   the fit's crossing point was set by the classes' weights, not by the pages). (PU learning's
   own threshold comes from its estimate of the topic's share, 2-3 times the true share on the
   DEV topics: its F1 suffers from it, its ranking does not.)

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
#: The threshold fit (:func:`label_threshold`): each training positive's weight beside a label's
#: (before the classes are balanced).
POSITIVE_WEIGHT = 0.2
#: The threshold rules: ``balanced`` (the default) puts it where the class-balanced fit says
#: 0.5, the point where the two classes are equally likely whatever their shares among the
#: labels; ``label-share`` (the first rule) where the fit weighed as the labels came says 0.4:
#: the F1-optimal threshold of a calibrated classifier is half the F1 it reaches (Lipton et al.
#: 2014, "Thresholding classifiers to maximize F1 score"), about 0.8 / 2 here, but the fit is
#: not calibrated when uncertainty sampling chose the labels. (DEV+TUNED mean F1 at 20 / 50
#: labels, label-share: 0.745 / 0.765 at 0.5, 0.754 / 0.773 at 0.4, 0.727 / 0.787 at 0.3;
#: positive weight 0.05 / 0.5: 0.717 / 0.751, 0.748 / 0.765. Balanced, screened on the
#: label-share rule's labels: 0.748 / 0.784 at 0.5, 0.727 / 0.772 at 0.4, 0.719 / 0.761 at
#: 0.6; each rule choosing its own labels: balanced 0.748 / 0.785, label-share 0.755 / 0.775.)
THRESHOLD_RULES = ("balanced", "label-share")
THRESHOLD_PROBABILITY = {"balanced": 0.5, "label-share": 0.4}


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
    rule: str = "balanced",
    at: float | None = None,
) -> float:
    """The decision value at which P(on topic) = ``at`` (default by ``rule``, see
    :data:`THRESHOLD_RULES`) by a logistic fit (Platt scaling) of the labels on the model's
    decision. The training positives join the fit at ``positive_weight`` each (without them a
    few labels, all off topic as the least certain pages mostly are, have no upper side), and
    one off-topic point sits at ``default`` (the threshold the topic's estimated share gives)
    so that the fit exists with one side only. With ``rule="balanced"`` each class's weights
    are scaled to the same sum, so the labels' share of on-topic pages (set by how they were
    chosen, not by the topic) does not move the threshold. ``default`` when the fit does not
    rise with the decision."""
    if rule not in THRESHOLD_RULES:
        raise ValueError(f"unknown threshold rule {rule!r}; one of {', '.join(THRESHOLD_RULES)}")
    x = np.r_[labelled, positives, default]
    y = np.r_[(y_labels > 0).astype(int), np.ones(len(positives), int), 0]
    w = np.r_[np.ones(len(labelled)), np.full(len(positives), positive_weight), 1.0]
    if len(np.unique(y)) < 2:
        return default
    if rule == "balanced":
        w = np.where(y == 1, w / w[y == 1].sum(), w / w[y == 0].sum()) * len(w) / 2
    fit = LogisticRegression(C=1.0).fit(x[:, None], y, sample_weight=w)
    slope = float(fit.coef_[0, 0])
    if slope <= 0:
        return default
    p = THRESHOLD_PROBABILITY[rule] if at is None else at
    return float((np.log(p / (1 - p)) - fit.intercept_[0]) / slope)


def refit_from_labels(
    base: RelevanceModel,
    positives: Sequence[TermCounts],
    unlabeled: Sequence[TermCounts],
    on_topic: Sequence[TermCounts],
    off_topic: Sequence[TermCounts],
    keywords: Sequence[str] = (),
    *,
    n_est: float | None = None,
    threshold_rule: str = "balanced",
) -> RelevanceModel:
    """Steps 2 and 3 of the module docstring on a trained PU model ``base`` (its vectorizer
    and ranking): ``unlabeled`` are the pages not labelled, ``n_est`` the estimated number of
    topic pages among them (default: as many as ``base`` calls on topic); ``threshold_rule``
    one of :data:`THRESHOLD_RULES`."""
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
        rule=threshold_rule,
    )
    info = dict(base.info)
    info.update(
        labels_on_topic=len(on_topic),
        labels_off_topic=len(off_topic),
        label_weight=LABEL_WEIGHT,
        threshold_rule=threshold_rule,
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
    threshold_rule: str = "balanced",
) -> RelevanceModel:
    """The page model of the positives, the unlabelled pages and the user's labels (module
    docstring): the PU model of the positives and the on-topic pages, refitted with every label
    by :func:`refit_from_labels`; without labels the PU model."""
    base = train_pu(list(positives) + list(on_topic), unlabeled, keywords, seed=seed)
    if not off_topic and not on_topic:
        return base
    report = base.report_  # type: ignore[attr-defined]
    n_est = float(np.sum(report.rounds[0].decision(report.unlabeled) >= 0))
    return refit_from_labels(
        base,
        positives,
        unlabeled,
        on_topic,
        off_topic,
        keywords,
        n_est=n_est,
        threshold_rule=threshold_rule,
    )
