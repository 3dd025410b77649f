"""The classifier table: cosine vs SVM (true negatives) vs PU-SVM vs PU ensemble (no Scrapy).

For each category: the topic keywords plus ``n_positives`` positive articles, every other article
unlabelled; the SVM reference also gets ``n_negatives`` true negatives. All methods are tested on
the same pages: every article that is neither a training positive nor a sampled negative.
Cosine gets its best threshold on the test pages (an optimistic baseline); the learned models
use their own decision threshold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from focuscrawl.blocks.model import Page
from focuscrawl.blocks.partition import partition
from focuscrawl.evaluation.wikispeedia import WikispeediaCorpus
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.features import TermCounts, page_terms
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.train import train_pu, train_supervised

log = logging.getLogger(__name__)

#: category → topic keywords (the words of its name)
CATEGORIES: dict[str, list[str]] = {
    "subject.Science.Biology.Birds": ["birds"],
    "subject.Science.Physics.Space_Astronomy": ["space", "astronomy"],
    "subject.Science.Biology.Health_and_medicine": ["health", "medicine"],
    "subject.Science.Chemistry": ["chemistry"],
    "subject.History.British_History": ["british", "history"],
    "subject.Geography.African_Geography": ["african", "geography"],
}
METHODS = ("cosine", "svm-true-neg", "pu-svm", "pu-ensemble")


@dataclass(slots=True)
class Corpus:
    names: list[str]
    categories: list[set[str]]
    pages: list[Page]
    terms: list[TermCounts]
    source: str  # what the pages were rendered by


@dataclass(slots=True)
class Row:
    category: str
    size: int
    method: str
    precision: float
    recall: float
    f1: float


def load_corpus(root: Path, limit: int = 0, stride: int = 1) -> Corpus:
    """Every article rendered by the test web (:class:`WikispeediaCorpus`), partitioned.

    ``limit`` keeps the first articles and ``stride`` every n-th (for fast test slices)."""
    wiki = WikispeediaCorpus.open(root)
    names = wiki.titles[::stride]
    if limit:
        names = names[:limit]
    pages = [partition(wiki.render(n), f"http://wiki.test/wiki/{n}") for n in names]
    terms = [page_terms(p) for p in pages]
    cats = [wiki.categories(n) for n in names]
    return Corpus(names, cats, pages, terms, "focuscrawl.evaluation.wikispeedia.render")


def has_category(categories: set[str], category: str) -> bool:
    return any(c == category or c.startswith(category + ".") for c in categories)


def prf(truth: np.ndarray, pred: np.ndarray) -> tuple[float, float, float]:
    tp = float(np.sum(truth & pred))
    p = tp / pred.sum() if pred.sum() else 0.0
    r = tp / truth.sum() if truth.sum() else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def best_threshold_prf(truth: np.ndarray, scores: np.ndarray) -> tuple[float, float, float]:
    best = (0.0, 0.0, 0.0)
    for t in np.unique(scores):
        res = prf(truth, scores >= t)
        if res[2] > best[2]:
            best = res
    return best


def split(labels: np.ndarray, n_positives: int, n_negatives: int, seed: int):  # noqa: ANN201
    rng = np.random.default_rng(seed)
    pos = rng.choice(np.flatnonzero(labels), n_positives, replace=False)
    neg = rng.choice(np.flatnonzero(~labels), n_negatives, replace=False)
    rest = np.setdiff1d(np.arange(len(labels)), np.concatenate([pos, neg]))
    unlabeled = np.setdiff1d(np.arange(len(labels)), pos)
    return pos, neg, unlabeled, rest


def _model_pred(model: RelevanceModel, terms: Sequence[TermCounts]) -> np.ndarray:
    return np.array([model.score_terms(t) >= model.threshold for t in terms])


def evaluate_category(
    corpus: Corpus,
    category: str,
    keywords: Sequence[str],
    *,
    n_positives: int = 20,
    n_negatives: int = 500,
    seed: int = 0,
    variant: str = "bwpso",
) -> list[Row]:
    labels = np.array([has_category(c, category) for c in corpus.categories])
    pos, neg, unl, rest = split(labels, n_positives, n_negatives, seed)
    T = corpus.terms
    truth = labels[rest]
    test_terms = [T[i] for i in rest]
    size = int(labels.sum())
    rows = []

    cos = CosineModel(keywords=keywords, texts=[corpus.pages[i].main_text for i in pos])
    for page in corpus.pages:
        cos.observe(page, 0.0)  # IDF from the whole web, as a long crawl learns it
    scores = np.array([cos.score_page(corpus.pages[i]) for i in rest])
    rows.append(Row(category, size, "cosine", *best_threshold_prf(truth, scores)))

    svm = train_supervised([T[i] for i in pos], [T[i] for i in neg], keywords)
    rows.append(Row(category, size, "svm-true-neg", *prf(truth, _model_pred(svm, test_terms))))

    pos_t, unl_t = [T[i] for i in pos], [T[i] for i in unl]
    pu = train_pu(pos_t, unl_t, keywords, ensemble=False, seed=seed)
    rows.append(Row(category, size, "pu-svm", *prf(truth, _model_pred(pu, test_terms))))
    ens = train_pu(pos_t, unl_t, keywords, ensemble=True, variant=variant, seed=seed)
    rows.append(Row(category, size, "pu-ensemble", *prf(truth, _model_pred(ens, test_terms))))
    log.info("%s: %s", category, ens.info)
    return rows


def format_table(rows: Sequence[Row]) -> str:
    lines = [
        "| category | topic pages | method | precision | recall | F1 |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.category.removeprefix('subject.')} | {r.size} | {r.method} | "
            f"{r.precision:.3f} | {r.recall:.3f} | {r.f1:.3f} |"
        )
    means = {
        m: float(np.mean([r.f1 for r in rows if r.method == m]))
        for m in METHODS
        if any(r.method == m for r in rows)
    }
    lines.append("")
    lines.append("mean F1: " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()))
    if {"cosine", "svm-true-neg", "pu-ensemble"} <= means.keys():
        lines.append(
            f"targets: pu-ensemble − cosine = {means['pu-ensemble'] - means['cosine']:+.3f} "
            f"(want ≥ +0.15); svm-true-neg − pu-ensemble = "
            f"{means['svm-true-neg'] - means['pu-ensemble']:+.3f} (want ≤ 0.05)"
        )
    return "\n".join(lines)


def classifier_table(
    root: Path,
    categories: dict[str, list[str]] | None = None,
    seed: int = 0,
    variant: str = "bwpso",
) -> tuple[list[Row], Corpus]:
    t0 = time.perf_counter()
    corpus = load_corpus(root)
    log.info(
        "rendered and partitioned %d articles in %.1fs", len(corpus.pages), time.perf_counter() - t0
    )
    rows: list[Row] = []
    for category, keywords in (categories or CATEGORIES).items():
        rows.extend(evaluate_category(corpus, category, keywords, seed=seed, variant=variant))
    return rows, corpus
