"""Link-scoring strategies compared on the Wikispeedia test web, by offline simulation.

Every configuration crawls every topic with the crawl's own decisions (:class:`CrawlPolicy`:
the cosine model, the page partition, the best-first frontier) in-process over the rendered
Wikispeedia site (:func:`focuseval.simulate.simulate`), and the table gives the
target recall and harvest rate at 250/500/1000/2000 pages per topic, the means over the
topics, and the ratios of the mean recall at 500 to ``bfs`` and ``bestfirst`` of the same run.
Every table starts with the two pure references of :mod:`focuseval.oracle` (no CrawlPolicy:
``oracle (reference)`` fetches the links to category members first, ``bfs (reference)`` in
discovery order, over the same graph and seeds), and every row has ``×oracle`` columns at
250/500/1000 (its mean recall / the oracle's). ``--topics`` takes short names and the sets
``tuned``, ``dev``, ``heldout`` (:data:`focuseval.topics.TOPIC_SETS`).

A configuration is a strategy with optional overrides of :class:`SharkParams` fields and of
``auto`` (the automatic threshold's fraction of the seed pages' mean relevance):
``sharksearch-blocks:gamma=0.3,beta=0.5``; ``calib=otsu|none`` sets the automatic threshold's
calibration (``FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION``); ``adapt=1|0`` the adaptive topic profile
(``FOCUSCRAWL_ADAPT_TOPIC``, default as in the crawl), ``adapt_ratio``, ``adapt_share``, … its
:class:`AdaptiveCosineModel` arguments (:data:`ADAPT_KEYS`). Two ceilings use the true labels (evaluation only):
``judge=label`` — a perfect judge, a page is relevant iff it is a category member (its
relevance value, which the link scores use, stays the model's); ``order=oracle`` — the
strategy reordered by labels (not a pure oracle): the frontier URL that is a target goes first (ties by discovery order), the others by the
strategy's score; ``order=lookahead`` — as ``oracle``, and among non-targets the one linking to
the most targets goes first (static link counts from the corpus); ``order=linkcv`` — the
*supervised link ceiling*: a logistic regression over the link learner's features (anchor, URL,
context words, host) and the link's block, trained with every label of the category on the links
of all corpus articles, cross-validated by target article (5 folds), orders the frontier
(``cvw=W``: adds ``W`` × its probability to the strategy's score instead; ``order=linkcvp`` also
gives it the linking page's true label); ``seeds=reverse|rotate`` — the same seeds in another
order (a null change: how far one run's figures move when only the crawl's first tie-break
does). Without ``--configs``: the six strategies with the
defaults (the table in docs/strategies.md), HITS included (``hits``; its parameters are the
``hits_*`` fields: ``hits:hits_every=10``, ``hits:hits_weighted=0`` for plain HITS). Rendered and partitioned pages and token lists are
cached per worker process, so a sweep costs mainly scoring.

    FOCUSCRAWL_CORPORA=/work/shared/corpora .venv/bin/python bench/bench_strategies.py \\
        [--topics Birds,Chemistry] [--pages 1000] [--configs 'sharksearch-blocks:gamma=0.3;bfs']
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuseval.metrics import CrawlMetrics
from focuseval.report import plot
from focuseval.topics import WIKISPEEDIA_TOPICS, topic_names

from focuscrawl import defaults
from focuscrawl.strategy.scoring import STRATEGIES, SharkParams

TOPICS = WIKISPEEDIA_TOPICS  # short name → category; the sets: focuseval.topics.TOPIC_SETS
#: the pure references (focuseval.oracle, no CrawlPolicy): table row → reference name
REFERENCE_ROWS = {"oracle (reference)": "oracle", "bfs (reference)": "bfs"}
RATIO_POINTS = (250, 500, 1000)  # the ×oracle columns
CHECKPOINTS = (250, 500, 1000, 2000)

_state: dict[str, Any] = {}

#: ``adapt=1`` crawls with the adaptive topic profile (``FOCUSCRAWL_ADAPT_TOPIC``); the other
#: keys override :class:`AdaptiveCosineModel` arguments (config key → argument, type)
ADAPT_KEYS: dict[str, tuple[str, Any]] = {
    "adapt": ("", lambda v: v.lower() in ("1", "true")),
    "adapt_min": ("min_relevance", float),
    "adapt_ratio": ("min_ratio", float),
    "adapt_share": ("max_new_share", float),
    "adapt_terms": ("max_new_terms", int),
    "adapt_pages": ("min_pages", int),
    "adapt_every": ("update_every", int),
    "adapt_orig": ("min_original_terms", int),
    "adapt_scale": ("new_scale", float),
    "adapt_boost": ("boost_original", lambda v: v.lower() in ("1", "true")),
    "adapt_judge": ("adapt_judge", lambda v: v.lower() in ("1", "true")),
}


def parse_config(spec: str) -> tuple[str, dict[str, Any]]:
    """``strategy[:key=value,...]`` → strategy and overrides (typed like the field)."""
    strategy, _, rest = spec.partition(":")
    if strategy not in STRATEGIES:
        raise SystemExit(f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
    fields = {f.name: f for f in dataclasses.fields(SharkParams)}
    overrides: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key in ADAPT_KEYS:
            overrides[key] = ADAPT_KEYS[key][1](value)
        elif key in ("auto", "cvw"):
            overrides[key] = float(value)
        elif key == "seeds" and value in ("reverse", "rotate"):
            overrides[key] = value
        elif key == "calib" and value in ("otsu", "none"):
            overrides[key] = "" if value == "none" else value
        elif (
            key == "judge"
            and value in ("model", "label")
            or key == "order"
            and value in ("strategy", "oracle", "lookahead", "linkcv", "linkcvp", "linkcvs")
        ):
            overrides[key] = value
        elif key in fields:
            kind = type(getattr(SharkParams(), key))
            overrides[key] = value.lower() in ("1", "true") if kind is bool else kind(value)
        else:
            raise SystemExit(f"unknown parameter {key!r} in {spec!r}")
    return strategy, overrides


def _setup() -> None:
    """Per worker: the corpus, the site, and caches of rendered pages, partitions and tokens."""
    from focuseval import simulate as sim
    from focuseval.site import loopback_hosts
    from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

    from focuscrawl.relevance import cosine

    corpus = WikispeediaCorpus.open()
    if _state.get("web") == "dressed":  # the same articles in real sites' chrome
        from focuseval.dressed import open_dressed
        from focuseval.testweb import DEFAULT_HOSTS

        site = open_dressed(loopback_hosts(DEFAULT_HOSTS["dressed"]), 8000, corpus=corpus)
    else:
        site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    site.get = functools.lru_cache(maxsize=None)(site.get)  # type: ignore[method-assign]
    sim.partition = functools.lru_cache(maxsize=None)(sim.partition)  # type: ignore[assignment]
    raw_tokens = cosine.tokens
    cosine.tokens = functools.lru_cache(maxsize=400_000)(lambda t: tuple(raw_tokens(t)))  # type: ignore[assignment]
    _state.update(corpus=corpus, site=site, topics={})


def run_one(job: tuple[str, str]) -> tuple[str, str, CrawlMetrics, float]:
    """Simulates one (topic, config); returns its metrics and the seconds it took."""
    from focuseval.simulate import simulate_metrics
    from focuseval.topics import wikispeedia_topic

    from focuscrawl.relevance.adaptive import AdaptiveCosineModel
    from focuscrawl.relevance.cosine import CosineModel
    from focuscrawl.relevance.judge import PageJudge
    from focuscrawl.strategy.policy import CrawlPolicy

    topic_name, spec = job
    if "site" not in _state:
        _setup()
    topics = _state["topics"]
    if topic_name not in topics:
        topics[topic_name] = wikispeedia_topic(
            _state["corpus"], _state["site"].url_for, TOPICS[topic_name]
        )
    topic = topics[topic_name]
    strategy, overrides = parse_config(spec)
    auto = overrides.pop("auto", defaults.DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD"])
    calib = overrides.pop("calib", defaults.DEFAULTS["FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION"])
    judge = overrides.pop("judge", "model")
    order = overrides.pop("order", "strategy")
    cvw = overrides.pop("cvw", 0.0)
    seed_order = overrides.pop("seeds", "")
    adapt_args = {ADAPT_KEYS[k][0]: overrides.pop(k) for k in list(overrides) if k in ADAPT_KEYS}
    adapt = adapt_args.pop("", defaults.DEFAULTS["FOCUSCRAWL_ADAPT_TOPIC"])
    params = SharkParams(**overrides)
    pages = _state["pages"]
    cls = _ceiling_policy(judge, order, cvw)

    def make_policy(tp: Any) -> CrawlPolicy:
        # as load_model builds the crawl's model (the Wikispeedia topics have no example files)
        model = (
            AdaptiveCosineModel(tp.keywords, **adapt_args) if adapt else CosineModel(tp.keywords)
        )
        policy = cls(PageJudge(model, auto_threshold=auto, calibrate=calib), strategy, params)
        if cls is not CrawlPolicy:
            policy.labels = tp.labels  # type: ignore[attr-defined]
            policy.children = _target_children(topic_name, tp)  # type: ignore[attr-defined]
            if order.startswith("linkcv"):
                policy.link_probs = _link_cv(
                    topic_name, tp, order == "linkcvp", shape=order == "linkcvs"
                )  # type: ignore[attr-defined]
        return policy

    if seed_order:  # the same seeds in another order: a null change, for the runs' noise
        seeds = (
            topic.seeds[::-1] if seed_order == "reverse" else [*topic.seeds[1:], *topic.seeds[:1]]
        )
        topic = dataclasses.replace(topic, seeds=seeds)
    start = time.perf_counter()
    metrics = simulate_metrics(_state["site"], topic, make_policy, pages)
    return topic_name, spec, metrics, time.perf_counter() - start


def run_references(topic_name: str) -> tuple[str, dict[str, CrawlMetrics], float]:
    """The pure oracle and BFS of one topic over the worker's site (:mod:`focuseval.oracle`)."""
    from focuseval.oracle import LinkGraph, reference_metrics
    from focuseval.topics import wikispeedia_topic

    if "site" not in _state:
        _setup()
    graph = _state.setdefault("graph", LinkGraph(_state["site"]))
    topic = wikispeedia_topic(_state["corpus"], _state["site"].url_for, TOPICS[topic_name])
    start = time.perf_counter()
    metrics = reference_metrics(graph, topic.seeds, topic.labels, _state["pages"])
    return topic_name, metrics, time.perf_counter() - start


ORACLE_SCORE = 1e5  # above every link score, below the seeds'


def _target_children(topic_name: str, topic: Any) -> dict[str, int]:
    """Per article URL (normalised), how many of the topic's targets it links to (corpus links)."""
    cache = _state.setdefault("children", {})
    if topic_name not in cache:
        from focuseval.metrics import normalize_url

        corpus, url_for = _state["corpus"], _state["site"].url_for
        targets = topic.labels.targets
        counts: dict[str, int] = {}
        for src, dsts in corpus.links.items():
            n = sum(1 for d in set(dsts) if normalize_url(url_for(d)) in targets)
            if n:
                counts[normalize_url(url_for(src))] = n
        cache[topic_name] = counts
    return cache[topic_name]


LINK_CV_FOLDS = 5


def _link_cv(
    topic_name: str, topic: Any, parent_label: bool, shape: bool = False
) -> dict[tuple[str, str], float]:
    """The supervised link ceiling: for every link of every article of the corpus, the
    probability that it leads to a category member, from a logistic regression trained with the
    category's labels on the links to the *other* folds' articles (5 folds by target article,
    so that no link is scored by a model that saw its own target's label). Features: the link
    learner's (anchor, URL path and context words, host), the enclosing block's kind and noise
    flag, and with ``parent_label`` whether the linking page is itself a member (what a
    perfect judge would know of the parent)."""
    key = ("linkcv", topic_name, parent_label, shape)
    if key in _state:
        return _state[key]
    import zlib

    import numpy as np
    from focuseval import simulate as sim
    from focuseval.metrics import normalize_url
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import LogisticRegression

    from focuscrawl.strategy.linklearner import link_features
    from focuscrawl.strategy.linkshape import anchor_shape

    corpus, site = _state["corpus"], _state["site"]
    members = topic.labels.relevant
    rows: list[list[str]] = []
    pairs: list[tuple[str, str]] = []
    ys: list[int] = []
    folds: list[int] = []
    for name in corpus.titles:
        src = site.url_for(name)
        parts = urlsplit(src)
        res = site.get(parts.hostname or "", parts.path)
        if res is None:
            continue
        page = sim.partition(res.body, src)
        src_key = normalize_url(src)
        src_member = src_key in members
        for link in page.links:
            dst = normalize_url(link.url)
            feats = link_features(link.anchor, link.url, link.context, "auhc")
            feats += [f"k:{link.block_kind}", f"n:{int(link.noise)}"]
            if parent_label:
                feats.append(f"p:{int(src_member)}")
            if shape:
                feats += anchor_shape(link.anchor, link.url)
            rows.append(feats)
            pairs.append((src_key, dst))
            ys.append(int(dst in members))
            folds.append(zlib.crc32(dst.encode()) % LINK_CV_FOLDS)
    x = FeatureHasher(2**20, input_type="string", alternate_sign=False).transform(rows)
    y = np.array(ys)
    fold = np.array(folds)
    probs = np.zeros(len(ys))
    for k in range(LINK_CV_FOLDS):
        test = fold == k
        clf = LogisticRegression(C=1.0, solver="liblinear", max_iter=200)
        clf.fit(x[~test], y[~test])
        probs[test] = clf.predict_proba(x[test])[:, 1]
    from sklearn.metrics import average_precision_score, roc_auc_score

    print(
        f"{topic_name}: link classifier (parent label {parent_label}) over {len(ys)} links, "
        f"{int(y.sum())} to members: held-out AUC {roc_auc_score(y, probs):.3f}, "
        f"average precision {average_precision_score(y, probs):.3f}",
        file=sys.stderr,
    )
    out = {pr: float(p) for pr, p in zip(pairs, probs, strict=True)}
    _state[key] = out
    return out


def _ceiling_policy(judge: str, order: str, cvw: float = 0.0) -> type:
    """A :class:`CrawlPolicy` that cheats with the true labels (the ceilings), or the policy."""
    from focuseval.metrics import normalize_url

    from focuscrawl.frontier.state import RequestState
    from focuscrawl.relevance.judge import Judgement
    from focuscrawl.strategy.policy import CrawlPolicy

    if judge == "model" and order == "strategy":
        return CrawlPolicy

    class Ceiling(CrawlPolicy):
        labels: Any
        children: dict[str, int]
        link_probs: dict[tuple[str, str], float]

        def links(self, page: Any, url: str, state: RequestState, judgement: Judgement) -> Any:
            if judge == "label" and not state.seed:
                # the true label decides what the links inherit (the policy learnt from the
                # model's judgement, as it does in a crawl)
                relevant = normalize_url(page.url) in self.labels.relevant
                judgement = Judgement(judgement.relevance, relevant)
            for target, score, child in super().links(page, url, state, judgement):
                if order.startswith("linkcv"):
                    # the supervised link classifier's probability orders the frontier; the
                    # strategy's score (< 10) only breaks ties
                    p = self.link_probs.get((normalize_url(url), normalize_url(target)), 0.0)
                    score = (cvw or 1000.0) * p + score
                elif order != "strategy":
                    key = normalize_url(target)
                    if key in self.labels.targets:
                        score = ORACLE_SCORE
                    elif order == "lookahead":
                        # bounded below ORACLE_SCORE; the strategy's score breaks ties
                        score = 100.0 * self.children.get(key, 0) + score
                yield target, score, child

    return Ceiling


def value(m: CrawlMetrics, n: int, key: str = "target_recall") -> float:
    """The metric after ``n`` pages (after the last page when the crawl stopped earlier)."""
    at = m.at(min(n, m.fetched)) if m.fetched else None
    return at[key] if at else 0.0


def rebase(url: str, site: Any) -> str:
    """A logged URL on this process's site (real crawls serve on another port). Article names
    are the corpus's percent-encoded names, as served: not decoded (a decoded name would hash
    to another host and miss its label)."""
    path = urlsplit(url).path
    if path.startswith("/wiki/"):
        return site.url_for(path[len("/wiki/") :])
    return url


def from_logs(dirs: list[Path], topics: list[str]) -> dict[tuple[str, str], CrawlMetrics]:
    """Metrics of the real crawls logged by ``focuscrawl eval --out DIR`` (``runs/<topic>/``)."""
    from focuseval.metrics import CrawlRecord, evaluate, read_crawl_log
    from focuseval.topics import wikispeedia_topic

    _setup()
    results: dict[tuple[str, str], CrawlMetrics] = {}
    for name in topics:
        topic = wikispeedia_topic(_state["corpus"], _state["site"].url_for, TOPICS[name])
        for d in dirs:
            for log in sorted((d / "runs" / topic.slug).glob("*.jsonl")):
                records, skipped = read_crawl_log(log)
                rebased = [CrawlRecord(rebase(r.url, _state["site"]), r.status) for r in records]
                results[name, log.stem] = evaluate(rebased, topic.labels, skipped)
    return results


def _init(pages: int, web: str = "wikispeedia") -> None:
    _state["pages"] = pages
    _state["web"] = web


def table(
    results: dict[tuple[str, str], CrawlMetrics], topics: list[str], configs: list[str]
) -> str:
    """Markdown: one row per config, recall@500 per topic, mean recall and harvest at every
    checkpoint, ratios at 500; then recall and harvest at every checkpoint per topic."""
    checkpoints = [n for n in CHECKPOINTS if any(m.fetched >= n for m in results.values())]

    def mean(c: str, n: int, key: str = "target_recall") -> float:
        return sum(value(results[t, c], n, key) for t in topics) / len(topics)

    head = ["config", *[f"{t} @500" for t in topics]]
    head += [f"mean @{n}" for n in checkpoints] + [f"harvest @{n}" for n in checkpoints]
    head += ["×bfs @500", "×bestfirst @500"]
    oracle = next((c for c, r in REFERENCE_ROWS.items() if r == "oracle" and c in configs), None)
    ratio_points = [n for n in RATIO_POINTS if n in checkpoints] if oracle else []
    head += [f"×oracle @{n}" for n in ratio_points]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in configs:
        label = c if c in REFERENCE_ROWS else f"`{c}`"
        row = [label, *[f"{value(results[t, c], 500):.3f}" for t in topics]]
        row += [f"{mean(c, n):.3f}" for n in checkpoints]
        row += [f"{mean(c, n, 'harvest_rate'):.3f}" for n in checkpoints]
        for base in ("bfs", "bestfirst"):
            ref = mean(base, 500) if base in configs else 0.0
            row.append(f"{mean(c, 500) / ref:.2f}" if ref else "–")
        for n in ratio_points:
            ref = mean(oracle, n)  # type: ignore[arg-type]
            row.append(f"{mean(c, n) / ref:.2f}" if ref else "–")
        lines.append("| " + " | ".join(row) + " |")
    cps = " / ".join(str(n) for n in checkpoints)
    rps = " / ".join(str(n) for n in ratio_points)
    extra = f" ×oracle @{rps} |" if ratio_points else ""
    lines += ["", f"| topic | config | recall @{cps} | harvest @{cps} |{extra}"]
    lines.append("|---|---|---|---|" + ("---|" if ratio_points else ""))
    for t in topics:
        for c in configs:
            m = results[t, c]
            rec = " / ".join(f"{value(m, n):.3f}" for n in checkpoints)
            har = " / ".join(f"{value(m, n, 'harvest_rate'):.3f}" for n in checkpoints)
            label = c if c in REFERENCE_ROWS else f"`{c}`"
            line = f"| {t} | {label} | {rec} | {har} |"
            if ratio_points:
                refs = [value(results[t, oracle], n) for n in ratio_points]  # type: ignore[index]
                line += (
                    " "
                    + " / ".join(
                        f"{value(m, n) / r:.2f}" if r else "–"
                        for n, r in zip(ratio_points, refs, strict=True)
                    )
                    + " |"
                )
            lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--topics",
        default="Birds,Space,Health,Chemistry,British",
        help="short names and sets (tuned, dev, heldout), comma-separated",
    )
    parser.add_argument(
        "--no-references", action="store_true", help="without the pure oracle and BFS rows"
    )
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--configs", default=";".join(STRATEGIES), help="';'-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--web",
        choices=("wikispeedia", "dressed"),
        default="wikispeedia",
        help="dressed: the same articles in real sites' chrome (focuseval.dressed)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    parser.add_argument("--plots", type=Path, default=None, help="write <topic>.png here")
    parser.add_argument(
        "--plot-configs", default=None, help="';'-separated configs to plot (default: all)"
    )
    parser.add_argument(
        "--logs",
        type=Path,
        action="append",
        default=None,
        help="tabulate real crawls: a `focuscrawl eval --out` folder (repeatable); no simulation",
    )
    args = parser.parse_args(argv)
    try:
        topics = topic_names(args.topics)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    configs = [c.strip() for c in args.configs.split(";") if c.strip()]
    if not args.logs:
        for c in configs:
            parse_config(c)
    from focuseval.corpora import corpora_dir

    root = corpora_dir()
    if root is None or not (root / "wikispeedia").exists():
        print("bench_strategies: no Wikispeedia corpus (FOCUSCRAWL_CORPORA); skipped")
        return 0
    _state["web"] = args.web
    results: dict[tuple[str, str], CrawlMetrics] = {}
    if args.logs:
        results = from_logs(args.logs, topics)
        configs = [c for c in configs if all((t, c) in results for t in topics)]
    with ProcessPoolExecutor(
        args.workers, initializer=_init, initargs=(args.pages, args.web)
    ) as pool:
        if not args.no_references:
            for t, refs, secs in pool.map(run_references, topics):
                for row, name in REFERENCE_ROWS.items():
                    results[t, row] = refs[name]
                cells = " ".join(f"{value(refs['oracle'], n):.3f}" for n in CHECKPOINTS)
                print(f"{t:10s} {'oracle (reference)':50s} {cells} ({secs:.0f}s)", flush=True)
            configs = [*REFERENCE_ROWS, *configs]
        jobs = (
            []
            if args.logs
            else [(t, c) for c in configs if c not in REFERENCE_ROWS for t in topics]
        )
        if jobs:
            for t, c, metrics, secs in pool.map(run_one, jobs):
                results[t, c] = metrics
                cells = " ".join(f"{value(metrics, n):.3f}" for n in CHECKPOINTS)
                harvest = value(metrics, args.pages, "harvest_rate")
                print(f"{t:10s} {c:50s} {cells} harvest {harvest:.3f} ({secs:.0f}s)", flush=True)
    if args.plots:
        plotted = [c.strip() for c in (args.plot_configs or "").split(";") if c.strip()]
        for t in topics:
            curves = {
                c: results[t, c]
                for c in plotted or configs
                if (t, c) in results and c not in REFERENCE_ROWS
            }
            # the oracle and BFS references drawn dashed, as in focuscrawl eval's plots
            refs = {
                name: results[t, row] for row, name in REFERENCE_ROWS.items() if (t, row) in results
            }
            kind = "real crawls" if args.logs else "simulated"
            plot(
                {"topic": TOPICS[t], "corpus": f"{args.web}, {kind}"},
                curves,
                args.plots / f"{t}.png",
                refs,
            )
    out = table(results, topics, configs)
    print(out)
    if args.out:
        args.out.write_text(out + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
