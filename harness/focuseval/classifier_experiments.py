"""Measurements beside the classifier table: PSO vs BWPSO, topic drift, per-page speed.

Each returns plain rows (dicts) for ``bench/bench_classifiers.py`` and
``focuscrawl eval-classifiers`` to print. No Scrapy.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from focuscrawl.relevance import pso
from focuscrawl.relevance.adaptive import AdaptiveCosineModel, profile_similarity
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.ensemble import fit_ensemble
from focuscrawl.relevance.train import train_pu
from focuseval.classifiers import Corpus, best_threshold_prf, has_category, split


def _iterations(a: pso.PSOResult, b: pso.PSOResult) -> tuple[int, int, float]:
    """Iterations each run needs to reach the fitness both reach (the lower final best)."""
    target = min(a.fitness, b.fitness)
    return (
        a.iterations_to(target) or len(a.history),
        b.iterations_to(target) or len(b.history),
        target,
    )


def pso_on_ensembles(
    corpus: Corpus, categories: dict[str, list[str]], seeds: int = 10, iterations: int = 60
) -> list[dict]:
    """Standard PSO vs BWPSO on the real problem: the ensemble weights of each category."""
    rows = []
    for category, keywords in categories.items():
        labels = np.array([has_category(c, category) for c in corpus.categories])
        pos, _, unl, _ = split(labels, 20, 500, 0)
        model = train_pu([corpus.terms[i] for i in pos], [corpus.terms[i] for i in unl], keywords)
        report = model.report_  # type: ignore[attr-defined]
        val_pos, others = report.validation
        its = {"standard": [], "bwpso": []}
        final = {"standard": [], "bwpso": []}
        for seed in range(seeds):
            res = {
                v: fit_ensemble(
                    report.trial_rounds or report.rounds,
                    val_pos,
                    others,
                    variant=v,
                    seed=seed,
                    iterations=iterations,
                )
                for v in ("standard", "bwpso")
            }
            a = pso.PSOResult(np.zeros(1), res["standard"].fitness, res["standard"].history)
            b = pso.PSOResult(np.zeros(1), res["bwpso"].fitness, res["bwpso"].history)
            ia, ib, _ = _iterations(a, b)
            its["standard"].append(ia)
            its["bwpso"].append(ib)
            final["standard"].append(a.fitness)
            final["bwpso"].append(b.fitness)
        rows.append(
            {
                "problem": category.removeprefix("subject."),
                "rounds": len(report.trial_rounds or report.rounds),
                **{f"{v} iterations": float(np.mean(its[v])) for v in its},
                **{f"{v} fitness": float(np.mean(final[v])) for v in final},
            }
        )
    return rows


def rastrigin(x: np.ndarray) -> float:
    z = 10.24 * x - 5.12  # the unit box onto Rastrigin's [-5.12, 5.12]
    return -float(10 * len(z) + np.sum(z * z - 10 * np.cos(2 * np.pi * z)))


def sphere(x: np.ndarray) -> float:
    return -float(np.sum((x - 0.3) ** 2))


def pso_on_benchmarks(seeds: int = 20, dim: int = 10, iterations: int = 200) -> list[dict]:
    rows = []
    for name, f in (("sphere-10d", sphere), ("rastrigin-10d", rastrigin)):
        its = {"standard": [], "bwpso": []}
        final = {"standard": [], "bwpso": []}
        for seed in range(seeds):
            a = pso.maximise(f, dim, iterations=iterations, variant="standard", seed=seed)
            b = pso.maximise(f, dim, iterations=iterations, variant="bwpso", seed=seed)
            ia, ib, _ = _iterations(a, b)
            its["standard"].append(ia)
            its["bwpso"].append(ib)
            final["standard"].append(a.fitness)
            final["bwpso"].append(b.fitness)
        rows.append(
            {
                "problem": name,
                "rounds": 0,
                **{f"{v} iterations": float(np.mean(its[v])) for v in its},
                **{f"{v} fitness": float(np.mean(final[v])) for v in final},
            }
        )
    return rows


def crawl_order(corpus: Corpus, start: Sequence[int], limit: int) -> list[int]:
    """Breadth-first order over the article links from ``start`` (what a crawl would fetch)."""
    seen = set(start)
    queue = deque(start)
    order = []
    while queue and len(order) < limit:
        i = queue.popleft()
        order.append(i)
        for j in corpus.links[i]:
            if j not in seen:
                seen.add(j)
                queue.append(j)
    return order


def drift(
    corpus: Corpus, category: str, keywords: Sequence[str], pages: int = 2000, seed: int = 0
) -> list[dict]:
    """Adapt the profile along a crawl from the 20 positives; compare no adaptation, guarded
    and unguarded adaptation: similarity to the original profile and to the true topic (the
    profile of every article of the category), and best-threshold F1 on the other pages."""
    labels = np.array([has_category(c, category) for c in corpus.categories])
    pos, neg, _, rest = split(labels, 20, 500, seed)
    rest = np.concatenate([rest, neg])
    texts = [corpus.pages[i].main_text for i in pos]
    dfs = corpus.cosine_dfs()
    truth_model = CosineModel(texts=[corpus.pages[i].main_text for i in np.flatnonzero(labels)])
    base = CosineModel(keywords, texts)
    base.dfs, base.learn_idf = dfs, False
    confident = float(np.quantile([base.score_page(corpus.pages[i]) for i in rest], 0.97))
    order = crawl_order(corpus, list(pos), pages)
    rows = []
    for name, guard in (("static", None), ("guarded", True), ("unguarded", False)):
        if guard is None:
            model: CosineModel = base
        else:
            model = AdaptiveCosineModel(
                keywords, texts, min_relevance=confident, min_ratio=0.0, guard=guard
            )
            model.dfs, model.learn_idf = dfs, False
            for i in order:
                page = corpus.pages[i]
                model.observe(page, model.score_page(page))
            model.refresh()
        scores = np.array([model.score_page(corpus.pages[i]) for i in rest])
        _, _, f1 = best_threshold_prf(labels[rest], scores)
        added = getattr(model, "added", {})
        rows.append(
            {
                "category": category.removeprefix("subject."),
                "profile": name,
                "new terms": len(added),
                "new share": round(model.new_share(), 3) if guard is not None else 0.0,  # type: ignore[attr-defined]
                "sim to original": profile_similarity(model.profile, base.profile, base),
                "sim to true topic": profile_similarity(model.profile, truth_model.profile, base),
                "best F1": f1,
                "top new terms": " ".join(sorted(added, key=added.get, reverse=True)[:8]),
            }
        )
    return rows


def speed(corpus_html: Sequence[tuple[str, bytes]], models: dict[str, object]) -> list[dict]:
    """Mean CPU milliseconds per page (``time.process_time``, so other processes on the
    machine do not count), one page at a time: lxml parse, partition, each model's
    ``score_page``, and for :class:`RelevanceModel` also the term-count path it replaced."""
    import lxml.html

    from focuscrawl.blocks.model import Page
    from focuscrawl.blocks.partition import partition
    from focuscrawl.relevance.model import RelevanceModel

    def per_page(fn: Callable[[], object], n: int) -> float:
        t0 = time.process_time()
        fn()
        return (time.process_time() - t0) * 1000 / n

    def lxml_all() -> None:
        for _, html in corpus_html:
            lxml.html.document_fromstring(html)

    n = len(corpus_html)
    lxml_ms = min(per_page(lxml_all, n) for _ in range(3))
    rows = [{"step": "lxml parse (reference)", "CPU ms/page": lxml_ms, "× lxml": 1.0}]
    t0 = time.process_time()
    pages = [partition(html, url) for url, html in corpus_html]
    ms = (time.process_time() - t0) * 1000 / n
    rows.append({"step": "partition (blocks)", "CPU ms/page": ms, "× lxml": ms / lxml_ms})
    for name, model in models.items():
        steps = [(f"classify: {name}", model.score_page)]  # type: ignore[attr-defined]
        if isinstance(model, RelevanceModel) and model.cosine is None:
            steps.append((f"classify: {name}, term-count path (before)", model.score_page_terms))
        if isinstance(model, CosineModel):
            # what the crawl does per page: score, then observe (IDF learning, adaptation);
            # on copies, so that the shared document frequencies stay as they were
            for label, fast in ((name, True), (f"{name}, pure path (before)", False)):
                live = copy.deepcopy(model)
                live.fast = fast
                if not fast:
                    steps.append((f"classify: {label}", live.score_page))
                    live = copy.deepcopy(live)

                def crawl_step(page: Page, m: CosineModel = live) -> None:
                    m.observe(page, m.score_page(page))

                steps.append((f"classify + observe: {label}", crawl_step))
        for label, score in steps:
            for page in pages[:20]:  # warm-up: the fast path builds its hash table once
                score(page)
            ms = min(per_page(lambda s=score: [s(p) for p in pages], n) for _ in range(3))
            rows.append({"step": label, "CPU ms/page": ms, "× lxml": ms / lxml_ms})
    return rows


def retrain_stall(pages: Sequence, keywords: Sequence[str], every: int = 1000) -> list[dict]:
    """How long the crawling thread stalls per page while a retrain runs in the worker process.

    The crawl is simulated by scoring and observing ``pages`` one at a time (what the spider
    does per response); each iteration's wall time is recorded, first with no retraining, then
    from the moment a retrain starts until its model is swapped in."""
    from focuscrawl.relevance.online import RetrainingModel
    from focuscrawl.relevance.train import train

    def loop(model: RetrainingModel, until_swapped: bool) -> list[float]:
        times = []
        i = 0
        start_retrains = model.retrains
        while True:
            page = pages[i % len(pages)]
            t0 = time.perf_counter()
            model.observe(page, model.score_page(page))
            times.append((time.perf_counter() - t0) * 1000)
            i += 1
            if until_swapped and model.retrains > start_retrains:
                return times
            if not until_swapped and i >= len(pages):
                return times

    base = train([], keywords=list(keywords))
    quiet = RetrainingModel(base, keywords, every=10**9, confident=0.05)
    baseline = loop(quiet, until_swapped=False)
    busy = RetrainingModel(base, keywords, every=every, confident=0.05)
    for page in pages[: every - 1]:
        busy.observe(page, busy.score_page(page))
    during = loop(busy, until_swapped=True)
    busy.close()
    rows = []
    for name, t, fit in (
        ("no retraining", baseline, 0.0),
        ("retraining in worker process", during, busy.last_fit_seconds),
    ):
        arr = np.array(t)
        rows.append(
            {
                "crawl thread": name,
                "pages": len(arr),
                "mean ms": float(arr.mean()),
                "p99 ms": float(np.quantile(arr, 0.99)),
                "max ms": float(arr.max()),
                "fit s": fit,
            }
        )
    return rows


def ceiling(
    corpus: Corpus,
    categories: dict[str, list[str]],
    folds: int = 5,
    cs: Sequence[float] = (0.1, 1.0, 10.0),
    seed: int = 0,
) -> list[dict]:
    """How far *any* linear classifier gets on these features with plentiful labels.

    Per category: ``folds``-fold stratified cross-validation over every article with its true
    label (so each model trains on ~80% of the corpus, ~100–600 positives), the field TF-IDF
    of the learned models (fitted on all pages, as the PU models see every page unlabelled),
    a ``LinearSVC(class_weight="balanced")`` and a ``LogisticRegression`` for each ``C``;
    F1 of the out-of-fold decisions at the best threshold on all of them (an oracle, as the
    cosine baseline gets) and at the model's own threshold 0. The best over ``C`` is reported,
    so the ceiling is, if anything, optimistic."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    from focuscrawl.relevance.features import FieldTfidfVectorizer
    from focuseval.classifiers import prf

    X = FieldTfidfVectorizer().fit_transform(corpus.terms)
    rows = []
    for category in categories:
        labels = np.array([has_category(c, category) for c in corpus.categories])
        cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
        row: dict = {
            "category": category.removeprefix("subject."),
            "topic pages": int(labels.sum()),
        }
        for name, make in (
            ("svm", lambda c: LinearSVC(C=c, class_weight="balanced", max_iter=10000)),
            (
                "logreg",
                lambda c: LogisticRegression(C=c * 10, class_weight="balanced", max_iter=2000),
            ),
        ):
            best_oracle, best_own = 0.0, 0.0
            for c in cs:
                dec = np.zeros(len(labels))
                for tr, te in cv.split(X, labels):
                    dec[te] = make(c).fit(X[tr], labels[tr]).decision_function(X[te])
                best_oracle = max(best_oracle, best_threshold_prf(labels, dec)[2])
                best_own = max(best_own, prf(labels, dec >= 0)[2])
            row[f"{name} F1 best threshold"] = best_oracle
            row[f"{name} F1 own threshold"] = best_own
        rows.append(row)
    mean = {"category": "mean", "topic pages": int(np.mean([r["topic pages"] for r in rows]))}
    for k in rows[0]:
        if k not in mean:
            mean[k] = float(np.mean([r[k] for r in rows]))
    return rows + [mean]


def training_time(corpus: Corpus, categories: dict[str, list[str]], seed: int = 0) -> list[dict]:
    """CPU seconds (``time.process_time``) of ``train_pu`` from 20 positives and the other
    ~4,580 pages unlabelled, without and with self-training (what a crawl's retraining costs)."""
    from focuscrawl.relevance import rules

    rows = []
    for category, keywords in categories.items():
        labels = np.array([has_category(c, category) for c in corpus.categories])
        pos, _, unl, _ = split(labels, 20, 500, seed)
        p, u = [corpus.terms[i] for i in pos], [corpus.terms[i] for i in unl]
        row: dict = {"category": category.removeprefix("subject.")}
        for rounds in (0, rules.SELF_TRAIN_ROUNDS):
            t0 = time.process_time()
            train_pu(p, u, keywords, seed=seed, self_training=rounds)
            row[f"CPU s, self-training {rounds}"] = time.process_time() - t0
        rows.append(row)
    mean = {"category": "mean"}
    for k in rows[0]:
        if k != "category":
            mean[k] = float(np.mean([r[k] for r in rows]))
    return rows + [mean]
