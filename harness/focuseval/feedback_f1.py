"""Page F1 of a simulated user's labels (issue 32), on the rendered Wikispeedia pages (no Scrapy).

Per topic (a Wikispeedia category, its keywords by :func:`focuseval.topics.category_keywords`):
``n_positives`` member pages are the example pages; the other pages are split at random into
the *pool* (the pages a crawl has fetched: unlabelled, and the only pages the user labels) and
the *test* pages (never trained on). Page F1 on the test pages of

* ``pu``: the PU model from the examples and the pool (what the crawl has without labels);
* ``labels@k``: the model retrained from ``k`` labels (:func:`focuscrawl.relevance.feedback.
  refit_from_labels` on the ``pu`` model): a simulated user labels, ``batch`` at a time, the
  pool pages the current model is least sure about (decision nearest its threshold) with the
  truth, then it retrains;
* ``old@k``: the same with the first threshold rule (``threshold_rule="label-share"``: the
  labels' fit weighed as they came, P = 0.4), its own labels chosen by its own model;
* ``svm-all``: a supervised SVM trained on the true label of every pool page and the examples
  (the reference of the target: "within 0.02 after 50 labels");
* ``svm-same@k``: a supervised SVM trained on the examples and the same ``k`` labels only;
* ``pu best-t``, ``labels@k best-t``: the model at its best threshold on the test pages (what its
  ranking allows: a ceiling of any threshold rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from focuscrawl.relevance.features import TermCounts
from focuscrawl.relevance.feedback import refit_from_labels
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.train import train_pu, train_supervised
from focuseval.classifiers import Corpus, best_threshold_prf, has_category, prf
from focuseval.topics import category_keywords


@dataclass
class TopicResult:
    name: str
    members: int
    f1: dict[str, float] = field(default_factory=dict)
    given: dict[int, tuple[int, int]] = field(default_factory=dict)  # k → (on, off) labels


def _decisions(model: RelevanceModel, terms: Sequence[TermCounts]) -> np.ndarray:
    return np.array([model.decision_terms(t) if t else -1e9 for t in terms])


def _f1(model: RelevanceModel, terms: Sequence[TermCounts], truth: np.ndarray) -> float:
    pred = np.array([model.score_terms(t) >= model.threshold for t in terms])
    return prf(truth, pred)[2]


def _uncertainty(model: RelevanceModel, terms: Sequence[TermCounts]) -> np.ndarray:
    """Distance to the model's threshold in decision units (threshold = decision at which the
    calibrated score equals ``model.threshold``)."""
    t = float(np.log(model.threshold / (1 - model.threshold)) / model.scale)
    return np.abs(_decisions(model, terms) - t)


def evaluate_topic(
    corpus: Corpus,
    name: str,
    category: str,
    *,
    n_positives: int = 20,
    checkpoints: Sequence[int] = (20, 50),
    batch: int = 10,
    seed: int = 0,
    pool_share: float = 0.5,
) -> TopicResult:
    keywords = category_keywords(category)
    truth_all = np.array([has_category(c, category) for c in corpus.categories])
    rng = np.random.default_rng(seed)
    pos = rng.choice(np.flatnonzero(truth_all), n_positives, replace=False)
    rest = rng.permutation(np.setdiff1d(np.arange(len(truth_all)), pos))
    n_pool = int(round(pool_share * len(rest)))
    pool, test = rest[:n_pool], rest[n_pool:]
    T = corpus.terms
    P = [T[i] for i in pos]
    test_terms, test_truth = [T[i] for i in test], truth_all[test]
    res = TopicResult(name, int(truth_all.sum()))

    base = model = train_pu(P, [T[i] for i in pool], keywords, seed=seed)
    report = base.report_  # type: ignore[attr-defined]
    n_est = float(np.sum(report.rounds[0].decision(report.unlabeled) >= 0))
    res.f1["pu"] = _f1(model, test_terms, test_truth)
    scores = np.array([model.score_terms(t) for t in test_terms])
    res.f1["pu best-t"] = best_threshold_prf(test_truth, scores)[2]
    svm = train_supervised(
        P + [T[i] for i in pool if truth_all[i]], [T[i] for i in pool if not truth_all[i]], keywords
    )
    res.f1["svm-all"] = _f1(svm, test_terms, test_truth)

    for rule, prefix in (("balanced", "labels"), ("label-share", "old")):
        _label_loop(res, rule, prefix, base, n_est, P, T, pool, truth_all, keywords, batch,
                    checkpoints, test_terms, test_truth)  # fmt: skip
    return res


def _label_loop(
    res: TopicResult,
    rule: str,
    prefix: str,
    base: RelevanceModel,
    n_est: float,
    P: list[TermCounts],
    T: Sequence[TermCounts],
    pool: np.ndarray,
    truth_all: np.ndarray,
    keywords: Sequence[str],
    batch: int,
    checkpoints: Sequence[int],
    test_terms: list[TermCounts],
    test_truth: np.ndarray,
) -> None:
    """The simulated user with threshold rule ``rule``: F1 at each checkpoint as
    ``{prefix}@k`` (and, for ``labels``, its best threshold and the SVM of the same labels)."""
    model = base
    labelled: list[int] = []
    unl = list(pool)
    for k in range(batch, max(checkpoints) + 1, batch):
        order = np.argsort(_uncertainty(model, [T[i] for i in unl]), kind="stable")
        chosen = [unl[j] for j in order[:batch]]
        labelled += chosen
        taken = set(chosen)
        unl = [i for i in unl if i not in taken]
        on = [T[i] for i in labelled if truth_all[i]]
        off = [T[i] for i in labelled if not truth_all[i]]
        # the PU model is not trained again: its ranking and its estimate of the topic's size
        # are refitted with the labels (what train_from_labels does after its PU step)
        model = refit_from_labels(
            base, P, [T[i] for i in unl], on, off, keywords, n_est=n_est, threshold_rule=rule
        )
        if k not in checkpoints:
            continue
        res.f1[f"{prefix}@{k}"] = _f1(model, test_terms, test_truth)
        if prefix != "labels":
            continue
        scores = np.array([model.score_terms(t) for t in test_terms])
        res.f1[f"labels@{k} best-t"] = best_threshold_prf(test_truth, scores)[2]
        same = train_supervised(P + on, off, keywords) if off else None
        res.f1[f"svm-same@{k}"] = _f1(same, test_terms, test_truth) if same else 0.0
        res.given[k] = (len(on), len(off))
