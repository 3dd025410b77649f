"""``train()``: a :class:`RelevanceModel` from example pages, scikit-learn style (no Scrapy).

* positives and negatives → an SVM (a scikit-learn ``Pipeline``: field TF-IDF → ``LinearSVC``);
* positives and unlabelled pages only → PU learning: 1-DNF reliable negatives, iterative SVM
  rounds, rounds combined with PSO weights (``kind="pu-ensemble"``);
* too little to learn from (no or one example, no unlabelled pages) → TF-IDF cosine to the
  topic profile, with a logged warning.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from focuscrawl.blocks.partition import partition
from focuscrawl.relevance import rules
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.ensemble import Ensemble, fit_ensemble, prior_matched, rate_threshold
from focuscrawl.relevance.features import FieldTfidfVectorizer, TermCounts, page_terms
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.pu import (
    LinearRound,
    held_recall,
    iterative_svm,
    positive_features,
    reliable_negatives,
    rounds_to_keep,
    self_train,
)
from focuscrawl.text import fast_tokens

log = logging.getLogger(__name__)

MIN_UNLABELED = 10  # fewer unlabelled pages than this: PU learning has nothing to learn from
CALIBRATED_POSITIVE = 0.9  # the median training positive scores this after calibration


@dataclass
class TrainReport:
    """What training did: kept on the model as ``model.report_`` (not saved)."""

    kind: str
    skipped: int = 0
    rounds: list[LinearRound] = field(default_factory=list)  # kept rounds, on every positive
    trial_rounds: list[LinearRound] = field(default_factory=list)  # held-back run, every round
    n_keep: int = 0  # rounds the Roc-SVM rule keeps
    unlabeled: sp.spmatrix | None = None  # the unlabelled pages' matrix
    ensemble: Ensemble | None = None
    n_reliable_negatives: int = 0
    n_positive_features: int = 0
    vectorizer: FieldTfidfVectorizer | None = None
    validation: tuple | None = None  # (held-back positives, others): what PSO fitted on
    before_self_training: tuple[np.ndarray, float] | None = None  # the ensemble's (coef, b)


def keyword_terms(keywords: Iterable[str]) -> TermCounts:
    doc: TermCounts = {}
    for kw in keywords:
        for term in fast_tokens(kw):
            doc[term] = rules.KEYWORD_WEIGHT
    return doc


def pages_to_terms(pages: Iterable[tuple[str, str | bytes]], what: str) -> tuple[list, list, int]:
    """(url, html) pairs → (Pages, term counts); empty or unparsable pages are skipped, counted."""
    out_pages, out_terms, skipped = [], [], 0
    for url, html in pages:
        page = partition(html, url)
        terms = page_terms(page) if not page.error else {}
        if not terms:
            log.warning("skipping %s page %s: %s", what, url, page.error or "no words")
            skipped += 1
            continue
        out_pages.append(page)
        out_terms.append(terms)
    return out_pages, out_terms, skipped


def _calibration_scale(decisions: np.ndarray) -> float:
    med = float(np.median(decisions)) if len(decisions) else 0.0
    return math.log(CALIBRATED_POSITIVE / (1 - CALIBRATED_POSITIVE)) / med if med > 0 else 1.0


def _linear_model(
    kind: str,
    vec: FieldTfidfVectorizer,
    coef: np.ndarray,
    intercept: float,
    positives: Sequence[TermCounts],
    keywords: Sequence[str],
    info: dict,
) -> RelevanceModel:
    model = RelevanceModel(
        kind,
        vocabulary=vec.vocabulary_,
        idf=vec.idf_,
        coef=coef,
        intercept=intercept,
        keywords=keywords,
        info=info,
    )
    model.scale = _calibration_scale(np.array([model.decision_terms(t) for t in positives]))
    return model


def train_supervised(
    positives: Sequence[TermCounts],
    negatives: Sequence[TermCounts],
    keywords: Sequence[str] = (),
    c: float = rules.SVM_C,
) -> RelevanceModel:
    kw = keyword_terms(keywords)
    pos = list(positives) + ([kw] if kw else [])
    pipe = Pipeline(
        [
            ("tfidf", FieldTfidfVectorizer()),
            ("svm", LinearSVC(C=c, class_weight="balanced", max_iter=5000)),
        ]
    )
    pipe.fit(pos + list(negatives), np.r_[np.ones(len(pos)), -np.ones(len(negatives))])
    svm = pipe.named_steps["svm"]
    info = {"positives": len(positives), "negatives": len(negatives)}
    model = _linear_model(
        "svm",
        pipe.named_steps["tfidf"],
        svm.coef_.ravel(),
        float(svm.intercept_[0]),
        pos,
        keywords,
        info,
    )
    model.report_ = TrainReport("svm", vectorizer=pipe.named_steps["tfidf"])  # type: ignore[attr-defined]
    return model


def train_pu(
    positives: Sequence[TermCounts],
    unlabeled: Sequence[TermCounts],
    keywords: Sequence[str] = (),
    *,
    criterion: str = rules.ENSEMBLE_CRITERION,
    variant: str = "standard",
    ensemble: bool = True,
    seed: int = 0,
    self_training: int = rules.SELF_TRAIN_ROUNDS,
) -> RelevanceModel:
    """PU learning; ``ensemble=False`` keeps only the last round (``kind="pu-svm"``).

    With at least 6 positives, ``HOLDOUT_SHARE`` of them are held back for a trial run of the
    rounds: the Roc-SVM rule (:func:`pu.rounds_to_keep`) decides how many rounds to keep and PSO
    fits their weights on the held-back positives; then the kept rounds are retrained on every
    positive (so the final classifiers lose no training example) and combined with those weights.
    """
    kw = keyword_terms(keywords)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(positives))
    n_hold = max(3, round(rules.HOLDOUT_SHARE * len(positives))) if len(positives) >= 6 else 0
    held = [positives[i] for i in order[:n_hold]]
    fit_pos = [positives[i] for i in order[n_hold:]] + ([kw] if kw else [])
    all_pos = list(positives) + ([kw] if kw else [])
    vec = FieldTfidfVectorizer().fit(all_pos + list(unlabeled))
    U = vec.transform(unlabeled)
    forced = [vec.vocabulary_[t] for t in kw if t in vec.vocabulary_]
    P_all = vec.transform(all_pos)
    pf = positive_features(P_all, U, forced)
    rn = reliable_negatives(U, pf)
    trial: list[LinearRound] = []
    H = None
    n_keep = rules.MAX_ROUNDS
    if held:
        H = vec.transform(held)
        trial = iterative_svm(vec.transform(fit_pos), U, rn)
        n_keep = max(1, rounds_to_keep(trial, H))
    # the same rounds on every positive (as many as the trial run had)
    rounds = iterative_svm(P_all, U, rn, max_rounds=len(trial) or rules.MAX_ROUNDS)
    if not rounds:
        raise ValueError("PU learning found no reliable negatives among the unlabelled pages")
    k = min(len(rounds), len(trial)) if trial else len(rounds)
    rounds = rounds[:k]
    n_keep = min(n_keep, k)
    report = TrainReport(
        "pu-ensemble" if ensemble else "pu-svm",
        rounds=rounds,
        trial_rounds=trial,
        n_keep=n_keep,
        n_reliable_negatives=len(rn),
        n_positive_features=len(pf),
        vectorizer=vec,
        unlabeled=U,
    )
    info = {
        "positives": len(positives),
        "unlabeled": len(unlabeled),
        "rounds": len(rounds),
        "roc_svm_rounds": n_keep,
        "held_back_recall": [round(held_recall(r, H), 3) for r in trial] if H is not None else [],
        "reliable_negatives": len(rn),
        "positive_features": len(pf),
    }
    if ensemble and criterion == "auc":
        # weights fitted on the trial rounds (the held-back positives are unseen by them) and
        # applied to the same rounds trained on every positive; threshold matched to the share
        # of unlabelled pages the first round calls positive
        if H is not None and k > 1:
            report.validation = (H, U)
            ens = fit_ensemble(trial[:k], H, U, criterion="auc", variant=variant, seed=seed)
            weights = ens.weights
            report.ensemble = ens
        else:  # no held-back positives: equal weights
            weights = np.full(k, 1.0 / k)
        coef, intercept, rate = prior_matched(rounds, weights, U)
        info.update(
            ensemble_weights=np.round(weights, 4).tolist(),
            positive_rate=round(rate, 4),
            pso=variant,
            criterion=criterion,
            fitness=report.ensemble.fitness if report.ensemble else None,
        )
    elif ensemble:
        fit_rounds = trial[:k] if H is not None else rounds
        val_pos = H if H is not None else P_all
        if criterion == "pu-all":  # recall over every positive, held back or trained on
            val_pos = P_all
        others = U if criterion.startswith("pu") else U[rn]
        report.validation = (val_pos, others)
        ens = fit_ensemble(
            fit_rounds, val_pos, others, criterion=criterion, variant=variant, seed=seed
        )
        coef, intercept = ens.collapse(rounds)
        report.ensemble = ens
        info.update(
            ensemble_weights=ens.weights.round(4).tolist(),
            threshold=ens.threshold,
            pso=variant,
            criterion=criterion,
            fitness=None if math.isnan(ens.fitness) else ens.fitness,
        )
    else:  # PU-SVM: the last round the Roc-SVM rule keeps
        coef, intercept = rounds[n_keep - 1].coef, rounds[n_keep - 1].intercept
    if ensemble:
        info["self_training"] = 0
        n_first = int(np.sum(rounds[0].decision(U) >= 0))  # the topic's estimated size in U
        st = self_train(
            P_all, U, np.asarray(U @ coef).ravel() + intercept, n_first / U.shape[0],
            rounds=self_training,
        )  # fmt: skip
        if st is not None:
            report.before_self_training = (coef, intercept)
            coef = st.coef
            intercept = st.intercept - rate_threshold(st.decision(U), n_first)
            info.update(
                self_training=self_training,
                self_training_negatives=st.n_negatives,
                self_training_positives=st.n_train - st.n_negatives - P_all.shape[0],
            )
    model = _linear_model(report.kind, vec, coef, intercept, all_pos, keywords, info)
    model.report_ = report  # type: ignore[attr-defined]
    return model


def train_cosine(positive_pages: Sequence, keywords: Sequence[str]) -> RelevanceModel:
    texts = [p.main_text or p.text for p in positive_pages]
    cos = CosineModel(keywords=keywords, texts=texts)
    model = RelevanceModel(
        "cosine",
        cosine=cos,
        threshold=cos.threshold,
        keywords=keywords,
        info={"positives": len(texts)},
    )
    model.report_ = TrainReport("cosine")  # type: ignore[attr-defined]
    return model


def train(
    positives: Iterable[tuple[str, str | bytes]],
    unlabeled: Iterable[tuple[str, str | bytes]] = (),
    negatives: Iterable[tuple[str, str | bytes]] = (),
    keywords: Iterable[str] = (),
    *,
    seed: int = 0,
    self_training: int = rules.SELF_TRAIN_ROUNDS,
) -> RelevanceModel:
    """Train a relevance model from ``(url, html)`` pages.

    With negatives: an SVM. Without: PU learning (needs at least 2 positives and
    ``MIN_UNLABELED`` unlabelled pages; ``self_training`` rounds refine the PU ensemble, 0 =
    off). Otherwise the cosine fallback. Raises ``ValueError``
    when there are neither keywords nor usable positive pages.
    """
    keywords = [k for k in keywords if k.strip()]
    pos_pages, pos, skipped = pages_to_terms(positives, "positive")
    _, neg, s2 = pages_to_terms(negatives, "negative")
    _, unl, s3 = pages_to_terms(unlabeled, "unlabelled")
    skipped += s2 + s3
    if not pos and not keywords:
        raise ValueError("nothing to learn from: no keywords and no usable positive page")
    if pos and neg:
        model = train_supervised(pos, neg, keywords)
    elif len(pos) >= 2 and len(unl) >= MIN_UNLABELED:
        model = train_pu(pos, unl, keywords, seed=seed, self_training=self_training)
    else:
        log.warning(
            "too little to learn from (%d positive, %d unlabelled, %d negative pages): "
            "falling back to TF-IDF cosine to the topic",
            len(pos),
            len(unl),
            len(neg),
        )
        model = train_cosine(pos_pages, keywords)
    model.report_.skipped = skipped  # type: ignore[attr-defined]
    model.info["skipped_pages"] = skipped
    return model
