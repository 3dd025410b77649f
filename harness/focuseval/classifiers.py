"""The classifier table: cosine vs SVM (true negatives) vs PU-SVM vs PU ensemble (no Scrapy).

For each category: the topic keywords plus ``n_positives`` positive articles, every other article
unlabelled; the SVM reference also gets ``n_negatives`` true negatives. All methods are tested on
the same pages: every article that is neither a training positive nor a sampled negative.
Cosine gets its best threshold on the test pages (an optimistic baseline); the learned models
use their own decision threshold.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from focuscrawl.blocks.model import Block, Page
from focuscrawl.blocks.partition import partition
from focuscrawl.relevance.cosine import CosineModel, DocumentFrequencies
from focuscrawl.relevance.ensemble import prior_matched
from focuscrawl.relevance.features import TermCounts, page_terms
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.train import train_pu, train_supervised
from focuseval.corpora import default_cache_dir  # noqa: F401 - where callers look it up
from focuseval.wikispeedia import WikispeediaCorpus

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
METHODS = (
    "cosine",
    "cosine@default",
    "svm-true-neg",
    "pu-last-round",
    "pu-svm",
    "pu-round-1",
    "pu-mean",
    "pu-ensemble-no-st",
    "pu-ensemble",
)


@dataclass(slots=True)
class Corpus:
    names: list[str]
    categories: list[set[str]]
    pages: list[Page]  # title + one text block of the partition's main text
    terms: list[TermCounts]
    links: list[list[int]]  # out-links as indices into ``names``
    source: str  # what the pages were rendered by
    dfs: DocumentFrequencies | None = None  # the cosine model's IDF over every page, built once
    cosine_counts: list[Counter[str]] | None = None  # the cosine model's page vectors, once

    def cosine_dfs(self) -> DocumentFrequencies:
        if self.dfs is None:
            probe = CosineModel()
            self.cosine_counts = [probe.page_counts(p) for p in self.pages]
            for page in self.pages:
                probe.observe(page, 0.0)  # IDF from the whole web, as a long crawl learns it
            self.dfs = probe.dfs
        return self.dfs


@dataclass(slots=True)
class Row:
    category: str
    size: int
    method: str
    precision: float
    recall: float
    f1: float


def _cache_key(root: Path) -> str:
    """Changes when the corpus, the rendering, the partition or the features change."""
    import focuscrawl.blocks
    import focuseval.wikispeedia as wiki_mod
    from focuscrawl.relevance import features, rules

    h = hashlib.sha256()
    for src in sorted(Path(focuscrawl.blocks.__file__).parent.glob("*.py")):
        h.update(src.read_bytes())
    for mod in (wiki_mod, features):
        h.update(Path(mod.__file__).read_bytes())
    h.update(json.dumps(rules.FIELD_WEIGHTS, sort_keys=True).encode())
    tar = root / "plaintext_articles.tar.gz"
    if tar.exists():
        h.update(f"{tar.stat().st_size}:{tar.stat().st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _page(name: str, title: str, text: str) -> Page:
    return Page(
        url=f"http://wiki.test/wiki/{name}",
        title=title,
        blocks=[Block(0, "text", text, 1.0)] if text else [],
    )


def load_corpus(
    root: Path,
    cache_dir: Path | None = None,
    subset: Callable[[WikispeediaCorpus], list[str]] | None = None,
) -> Corpus:
    """Every article rendered by the test web (:class:`WikispeediaCorpus`) and partitioned.

    Rendering and partitioning 4,600 pages takes minutes: the result (titles, main texts, term
    counts) is cached in ``cache_dir`` under a key of the corpus, renderer and partition code."""
    wiki = WikispeediaCorpus.open(root)
    cache = None
    if subset is not None:
        cache_dir = None  # a slice (tests) is small: not cached
    if cache_dir is not None:
        cache = cache_dir / f"wikispeedia-pages-{_cache_key(wiki.path)}.json.gz"
        if cache.exists():
            data = json.loads(gzip.decompress(cache.read_bytes()))
            return _from_cached(wiki, data)
    names = wiki.titles if subset is None else subset(wiki)
    data = {"names": names, "titles": [], "texts": [], "terms": []}
    for n in names:
        page = partition(wiki.render(n), f"http://wiki.test/wiki/{n}")
        data["titles"].append(page.title)
        data["texts"].append(page.main_text)
        data["terms"].append(page_terms(page))
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(gzip.compress(json.dumps(data).encode(), 3))
    return _from_cached(wiki, data)


def _from_cached(wiki: WikispeediaCorpus, data: dict) -> Corpus:
    names = data["names"]
    index = {n: i for i, n in enumerate(names)}
    pages = [_page(n, t, x) for n, t, x in zip(names, data["titles"], data["texts"], strict=True)]
    links = [[index[d] for d in wiki.links.get(n, ()) if d in index] for n in names]
    return Corpus(
        names,
        [wiki.categories(n) for n in names],
        pages,
        data["terms"],
        links,
        "focuseval.wikispeedia.WikispeediaCorpus.render",
    )


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
    others = np.flatnonzero(~labels)
    neg = rng.choice(others, min(n_negatives, len(others) // 2), replace=False)
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
    variant: str = "standard",
) -> list[Row]:
    labels = np.array([has_category(c, category) for c in corpus.categories])
    pos, neg, unl, rest = split(labels, n_positives, n_negatives, seed)
    T = corpus.terms
    truth = labels[rest]
    test_terms = [T[i] for i in rest]
    size = int(labels.sum())
    rows = []

    cos = CosineModel(keywords=keywords, texts=[corpus.pages[i].main_text for i in pos])
    cos.dfs = corpus.cosine_dfs()
    counts = corpus.cosine_counts
    assert counts is not None
    scores = np.array([cos.score_counts(counts[i]) for i in rest])
    rows.append(Row(category, size, "cosine", *best_threshold_prf(truth, scores)))
    rows.append(Row(category, size, "cosine@default", *prf(truth, scores >= cos.threshold)))

    svm = train_supervised([T[i] for i in pos], [T[i] for i in neg], keywords)
    rows.append(Row(category, size, "svm-true-neg", *prf(truth, _model_pred(svm, test_terms))))

    pos_t, unl_t = [T[i] for i in pos], [T[i] for i in unl]
    ens = train_pu(pos_t, unl_t, keywords, ensemble=True, variant=variant, seed=seed)
    report = ens.report_  # type: ignore[attr-defined]
    X_test = report.vectorizer.transform(test_terms)
    # the iteration run to its end, no Roc-SVM rule (trial run: the positives minus those held back)
    if report.trial_rounds:
        last = report.trial_rounds[-1]
        rows.append(Row(category, size, "pu-last-round", *prf(truth, last.decision(X_test) >= 0)))
    # PU-SVM: the last round the Roc-SVM rule keeps, alone (what the ensemble improves on)
    pred_last = report.rounds[report.n_keep - 1].decision(X_test) >= 0
    rows.append(Row(category, size, "pu-svm", *prf(truth, pred_last)))
    first = report.rounds[0]
    rows.append(Row(category, size, "pu-round-1", *prf(truth, first.decision(X_test) >= 0)))
    # every round with equal weights, the same prior-matched threshold (what PSO competes with)
    k = len(report.rounds)
    coef, intercept, _ = prior_matched(report.rounds, np.full(k, 1.0 / k), report.unlabeled)
    pred_mean = np.asarray(X_test @ coef).ravel() + intercept >= 0
    rows.append(Row(category, size, "pu-mean", *prf(truth, pred_mean)))
    if report.before_self_training is not None:  # the ensemble before self-training
        coef, intercept = report.before_self_training
        pred = np.asarray(X_test @ coef).ravel() + intercept >= 0
        rows.append(Row(category, size, "pu-ensemble-no-st", *prf(truth, pred)))
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
    corpus: Corpus,
    categories: dict[str, list[str]] | None = None,
    seed: int = 0,
    variant: str = "standard",
) -> list[Row]:
    rows: list[Row] = []
    for category, keywords in (categories or CATEGORIES).items():
        t0 = time.perf_counter()
        rows.extend(evaluate_category(corpus, category, keywords, seed=seed, variant=variant))
        log.info("%s evaluated in %.1fs", category, time.perf_counter() - t0)
    return rows
