"""Run the relevance measurements and format them as Markdown (no Scrapy)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from focuseval import classifier_experiments as ex
from focuseval import classifiers as ev

log = logging.getLogger(__name__)


def markdown(rows: Sequence[dict], floats: str = "{:.3f}") -> str:
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [floats.format(v) if isinstance(v, float) else str(v) for v in r.values()]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _picked(category: str, wanted: Sequence[str]) -> bool:
    """``wanted`` names categories by any suffix of their dotted name (``Birds``, ``Chemistry``)."""
    return any(category == w or category.endswith("." + w) for w in wanted)


def run_all(
    root: Path,
    *,
    cache_dir: Path | None,
    parts: Sequence[str] = ("table", "pso", "drift", "speed", "retrain"),
    seed: int = 0,
    categories: Sequence[str] = (),
    pso_seeds: int = 10,
    speed_pages: int = 300,
    stall_pages: int = 4000,
    stall_every: int = 1000,
) -> str:
    sections: list[str] = []
    if "crawlstall" in parts:  # a crawl of the test web: needs no corpus
        sections.append(
            "## Online retraining in a real crawl: the reactor's lag (crawl stats)\n\n"
            + crawl_stall(stall_pages, stall_every)
        )
    if not set(parts) & {"table", "ceiling", "traintime", "pso", "drift", "speed", "retrain"}:
        return "\n\n".join(sections)
    t0 = time.perf_counter()
    corpus = ev.load_corpus(root, cache_dir)
    sections.insert(
        0,
        f"corpus: {len(corpus.names)} Wikispeedia articles rendered by `{corpus.source}` "
        f"and partitioned by `focuscrawl.blocks.partition` ({time.perf_counter() - t0:.0f}s)",
    )
    if "table" in parts:
        chosen = {
            c: k for c, k in ev.CATEGORIES.items() if not categories or _picked(c, categories)
        }
        rows = ev.classifier_table(corpus, chosen, seed=seed)
        sections.append(
            "## Classifiers (keywords + 20 positives; test on the other pages)\n\n"
            + ev.format_table(rows)
        )
    if "ceiling" in parts:
        chosen = {
            c: k for c, k in ev.CATEGORIES.items() if not categories or _picked(c, categories)
        }
        sections.append(
            "## Ceiling: linear classifiers with plentiful labels (5-fold cross-validation "
            "over every article, true labels; best C of 0.1 / 1 / 10)\n\n"
            + markdown(ex.ceiling(corpus, chosen, seed=seed))
        )
    if "traintime" in parts:
        sections.append(
            "## PU training time (CPU), 20 positives + ~4,580 unlabelled pages\n\n"
            + markdown(ex.training_time(corpus, ev.CATEGORIES, seed=seed), "{:.2f}")
        )
    if "pso" in parts:
        prows = ex.pso_on_ensembles(corpus, ev.CATEGORIES, seeds=pso_seeds)
        prows += ex.pso_on_benchmarks()
        sections.append(
            "## PSO vs BWPSO: mean iterations to reach the fitness both reach "
            f"({pso_seeds} seeds per ensemble problem, 20 per benchmark)\n\n"
            + markdown(prows, "{:.4g}")
        )
    if "drift" in parts:
        drows = []
        for category, keywords in list(ev.CATEGORIES.items())[:3]:
            drows += ex.drift(corpus, category, keywords, seed=seed)
        sections.append(
            "## Adaptive topic: drift after a 2,000-page breadth-first crawl from "
            "the positives\n\n" + markdown(drows)
        )
    if "retrain" in parts:
        sections.append(
            "## Online retraining: crawl-thread time per page while a PU model "
            "retrains in the worker process (every 1,000 pages)\n\n"
            + markdown(ex.retrain_stall(corpus.pages[::4], ["birds"], every=1000))
        )
    if "speed" in parts:
        sections.append(
            "## Per-page cost, one page at a time\n\n"
            + speed_section(root, corpus, speed_pages, seed)
        )
    return "\n\n".join(sections)


def speed_section(root: Path, corpus: ev.Corpus, n: int, seed: int) -> str:
    from focuscrawl.relevance.cosine import CosineModel
    from focuscrawl.relevance.train import train_pu
    from focuseval.wikispeedia import WikispeediaCorpus

    wiki = WikispeediaCorpus.open(root)
    category, keywords = next(iter(ev.CATEGORIES.items()))
    labels = np.array([ev.has_category(c, category) for c in corpus.categories])
    pos, _, unl, rest = ev.split(labels, 20, 500, seed)
    model = train_pu([corpus.terms[i] for i in pos], [corpus.terms[i] for i in unl], keywords)
    cosine = CosineModel(keywords, [corpus.pages[i].main_text for i in pos])
    cosine.dfs = corpus.cosine_dfs()
    rng = np.random.default_rng(seed)
    picked = rng.choice(rest, min(n, len(rest)), replace=False)
    html = [
        (f"http://wiki.test/wiki/{corpus.names[i]}", wiki.render(corpus.names[i])) for i in picked
    ]
    rows = ex.speed(html, {"pu-ensemble (RelevanceModel)": model, "cosine": cosine})
    kb = np.mean([len(h) for _, h in html]) / 1024
    return f"{len(html)} rendered pages, mean {kb:.1f} KiB of HTML\n\n" + markdown(rows)


CRAWL_STALL_STATS = (
    "response_received_count",
    "elapsed_time_seconds",
    "focuscrawl/reactor/lag_mean_ms",
    "focuscrawl/reactor/lag_p99_ms",
    "focuscrawl/reactor/lag_max_ms",
    "focuscrawl/reactor/lag_over_50ms",
    "focuscrawl/reactor/busy_lag_p99_ms",
    "focuscrawl/reactor/busy_lag_max_ms",
    "focuscrawl/reactor/lag_mean_ms_retraining",
    "focuscrawl/reactor/lag_p99_ms_retraining",
    "focuscrawl/reactor/lag_max_ms_retraining",
    "focuscrawl/reactor/lag_over_50ms_retraining",
    "focuscrawl/reactor/busy_lag_p99_ms_retraining",
    "focuscrawl/reactor/busy_lag_max_ms_retraining",
    "focuscrawl/reactor/ticks_retraining",
    "focuscrawl/relevance/retrains",
    "focuscrawl/relevance/retrain_failures",
    "focuscrawl/relevance/retrain_fit_seconds",
    "focuscrawl/gc/full_collections",
    "focuscrawl/gc/pause_max_ms",
)


def crawl_stall(pages: int = 4000, every: int = 1000, corpus: str = "synthetic") -> str:
    """A real crawl of the local test web (``scrapy crawl topical``), without and with online
    retraining every ``every`` pages; the reactor-lag stats the crawl records itself."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    from focuseval.testweb import TestWebProcess

    rows = []
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    project = Path(__file__).resolve().parents[2]
    with TestWebProcess(corpus=corpus) as web, tempfile.TemporaryDirectory() as tmp:
        name, seeds = next(iter(web.seeds.items()))
        topic = Path(tmp) / "topic.toml"
        topic.write_text(f'name = "{name}"\nkeywords = ["{name}"]\nseeds = {json.dumps(seeds)}\n')
        for retrain in (0, every):
            stats_path = Path(tmp) / f"stats{retrain}.json"
            cmd = [
                sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}",
                "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=False",
                "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
                "-s", f"FOCUSCRAWL_RETRAIN_EVERY={retrain}",
                "-s", f"FOCUSCRAWL_STATS_FILE={stats_path}",
                "-s", f"FOCUSCRAWL_DATA_DIR={tmp}/data{retrain}",
                "-s", f"FOCUSCRAWL_ALLOW_PRIVATE={web.allow_private}",
            ]  # fmt: skip
            subprocess.run(cmd, check=True, env=env, cwd=project, timeout=1800)
            stats = json.loads(stats_path.read_text())
            rows.append({"retrain every": retrain or "off"} | {
                k.removeprefix("focuscrawl/"): stats.get(k, "–") for k in CRAWL_STALL_STATS
            })  # fmt: skip
    return f"{corpus} test web, topic {name!r}, {pages} pages\n\n" + markdown(rows)
