"""The evaluation harness: start the test web, crawl a topic with each strategy, measure, report.

Each strategy runs as its own ``scrapy crawl topical`` subprocess (the same command a user
runs), writing a crawl log that :mod:`focuseval.metrics` scores against the
corpus labels::

    SCRAPY_SETTINGS_MODULE=focuscrawl.settings python -m scrapy crawl topical \\
        -a topic=<topic.toml> -a strategy=<name> -s FOCUSCRAWL_CRAWL_LOG=<log.jsonl> \\
        -s CLOSESPIDER_PAGECOUNT=<pages> -s LOG_LEVEL=INFO \\
        -s FOCUSCRAWL_ALLOW_PRIVATE=<the test web's loopback hosts>

Beside the crawls, the pure oracle and BFS references (:mod:`focuseval.oracle`) run in-process
over the same site (built here as the server builds it), from the same seeds; the report sets
every strategy against them.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuseval.metrics import CrawlMetrics, evaluate_log, judge_quality
from focuseval.oracle import LinkGraph, reference_metrics
from focuseval.report import markdown_table, topic_report, write_topic_report
from focuseval.site import Site
from focuseval.testweb import CORPORA, TestWebProcess, build_site
from focuseval.topics import (
    WIKISPEEDIA_TOPICS,
    EvalTopic,
    synthetic_topic,
    topic_names,
    wikispeedia_topic,
    write_topic_toml,
)

logger = logging.getLogger(__name__)

DEFAULT_STRATEGIES = ("bfs", "bestfirst")
#: the test webs ``focuscrawl eval`` runs on (the dressed web once it is one of the corpora)
EVAL_CORPORA = tuple(c for c in ("synthetic", "wikispeedia", "dressed") if c in CORPORA)


@dataclass(slots=True)
class CrawlRun:
    strategy: str
    returncode: int
    seconds: float
    log: Path
    output: Path

    def as_dict(self) -> dict[str, Any]:
        return {
            "returncode": self.returncode,
            "seconds": round(self.seconds, 2),
            "pages_per_second": None,
            "crawl_log": str(self.log),
            "scrapy_log": str(self.output),
        }


def crawl_command(
    topic_file: Path,
    strategy: str | None,
    pages: int,
    log: Path,
    data_dir: Path,
    timeout: float,
    allow_private: str = "",
) -> list[str]:
    """The ``scrapy crawl topical`` command line; ``allow_private``: the test web's hosts, which
    the crawl may reach although they are loopback addresses (``FOCUSCRAWL_ALLOW_PRIVATE``)."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic_file}"]
    if strategy:
        cmd += ["-a", f"strategy={strategy}"]
    cmd += [
        "-s", f"FOCUSCRAWL_CRAWL_LOG={log}",
        "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s", f"CLOSESPIDER_TIMEOUT={int(timeout)}",
        "-s", f"FOCUSCRAWL_DATA_DIR={data_dir}",
        "-s", "LOG_LEVEL=INFO",
        "-s", "TELNETCONSOLE_ENABLED=False",
    ]  # fmt: skip
    if allow_private:
        cmd += ["-s", f"FOCUSCRAWL_ALLOW_PRIVATE={allow_private}"]
    return cmd


def run_crawl(
    topic_file: Path,
    strategy: str | None,
    pages: int,
    workdir: Path,
    timeout: float = 900,
    allow_private: str = "",
) -> CrawlRun:
    """One crawl subprocess; its Scrapy log goes to ``<workdir>/<strategy>.log``."""
    name = strategy or "default"
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"{name}.jsonl"
    output = workdir / f"{name}.log"
    log.unlink(missing_ok=True)
    data_dir = workdir / f"{name}-data"
    cmd = crawl_command(topic_file, strategy, pages, log, data_dir, timeout, allow_private)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    logger.info("crawl %s: %s", name, " ".join(cmd))
    start = time.perf_counter()
    with output.open("w", encoding="utf-8") as out:
        proc = subprocess.run(
            cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout + 120
        )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        logger.warning("crawl %s exited with %d (see %s)", name, proc.returncode, output)
    if not log.exists():
        log.write_text("", encoding="utf-8")  # no pages: an empty crawl, scored as such
    return CrawlRun(name, proc.returncode, seconds, log, output)


def eval_site(corpus: str, web: TestWebProcess, corpora: Path | None) -> Site:
    """The same deterministic site the server serves (its hosts, port and seed), in-process."""
    if corpus == "synthetic":
        from focuseval.synthetic import SyntheticWeb

        return SyntheticWeb(web.hosts, web.port, seed=web.seed)
    if corpus == "wikispeedia":
        from focuseval.wikispeedia import WikispeediaSite

        return WikispeediaSite(_wikispeedia(corpora), web.hosts, web.port)
    return build_site(corpus, web.port, web.hosts, corpora, web.seed)


def site_topic(corpus: str, site: Site, name: str) -> EvalTopic:
    """The topic ``name`` of ``site``: a synthetic topic; or a Wikispeedia category, full or
    by its short name (:data:`focuseval.topics.WIKISPEEDIA_TOPICS`), on any site over the
    Wikispeedia corpus (``corpus`` and ``url_for``); or what the site's own ``eval_topic`` says."""
    if corpus == "synthetic":
        return synthetic_topic(site, name)
    if hasattr(site, "corpus") and hasattr(site, "url_for"):
        category = WIKISPEEDIA_TOPICS.get(name, name)
        return wikispeedia_topic(site.corpus, site.url_for, category)
    if hasattr(site, "eval_topic"):
        return site.eval_topic(name)  # type: ignore[no-any-return]
    raise ValueError(f"the {corpus} web has no evaluation topics")


def expand_topics(names: list[str]) -> list[str]:
    """``--topic`` values: the set names (``tuned``, ``dev``, ``heldout``) become their topics."""
    out: list[str] = []
    for name in names:
        out += topic_names(name) if name.lower() in ("tuned", "dev", "heldout", "fresh") else [name]
    return list(dict.fromkeys(out))


def build_topic(corpus: str, topic: str, web: TestWebProcess, corpora: Path | None) -> EvalTopic:
    """The topic's seeds and labels, from the same deterministic site the server serves."""
    return site_topic(corpus, eval_site(corpus, web, corpora), topic)


_CORPUS_CACHE: dict[str, Any] = {}


def _wikispeedia(corpora: Path | None):  # type: ignore[no-untyped-def]
    from focuseval.wikispeedia import WikispeediaCorpus

    key = str(corpora)
    if key not in _CORPUS_CACHE:
        _CORPUS_CACHE[key] = WikispeediaCorpus.open(corpora)
    return _CORPUS_CACHE[key]


def evaluate_topic(
    corpus: str,
    topic: EvalTopic,
    strategies: list[str | None],
    pages: int,
    out: Path,
    timeout: float = 900,
    allow_private: str = "",
    graph: LinkGraph | None = None,
) -> dict[str, Any]:
    """Crawl ``topic`` with every strategy (the web must be running, on the hosts
    ``allow_private`` lists) and write its report; with ``graph`` (the served site's), the
    oracle and BFS references of the same seeds beside them."""
    workdir = out / "runs" / topic.slug
    topic_file = write_topic_toml(topic, workdir / "topic.toml")
    results: dict[str, CrawlMetrics] = {}
    runs: dict[str, dict[str, Any]] = {}
    judges: dict[str, dict[str, Any]] = {}
    references: dict[str, CrawlMetrics] = {}
    if graph is not None:
        start = time.perf_counter()
        references = reference_metrics(graph, topic.seeds, topic.labels, pages)
        logger.info(
            "%s references in %.1fs: oracle recall %.3f, bfs recall %.3f",
            topic.name, time.perf_counter() - start,
            references["oracle"].recall[-1] if references["oracle"].recall else 0.0,
            references["bfs"].recall[-1] if references["bfs"].recall else 0.0,
        )  # fmt: skip
    for strategy in strategies:
        run = run_crawl(
            topic_file.resolve(), strategy, pages, workdir.resolve(), timeout, allow_private
        )
        metrics = evaluate_log(run.log, topic.labels)
        results[run.strategy] = metrics
        judges[run.strategy] = judge_quality(run.log, topic.labels)
        runs[run.strategy] = run.as_dict()
        runs[run.strategy]["pages_per_second"] = round(metrics.fetched / run.seconds, 1)
        logger.info(
            "%s %s: %d pages, harvest %.3f, target recall %.3f",
            topic.name, run.strategy, metrics.fetched,
            metrics.harvest[-1] if metrics.harvest else 0.0,
            metrics.recall[-1] if metrics.recall else 0.0,
        )  # fmt: skip
    report = topic_report(corpus, topic, results, runs, references, judges)
    paths = write_topic_report(out, report, results, topic.slug, references)
    report["files"] = {k: str(v) for k, v in paths.items()}
    return report


def run_evaluation(
    corpus: str,
    topics: list[str],
    strategies: list[str | None],
    pages: int,
    out: Path,
    corpora: Path | None = None,
    hosts: int | None = None,
    timeout: float = 900,
) -> list[dict[str, Any]]:
    """Start the test web, evaluate every topic, write ``<out>/report.md`` over all topics."""
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    with TestWebProcess(corpus, hosts=hosts, corpora=corpora) as web:
        site = eval_site(corpus, web, corpora)
        graph = LinkGraph(site)  # one graph for every topic of this web: pages partitioned once
        for name in expand_topics(topics):
            topic = site_topic(corpus, site, name)
            reports.append(
                evaluate_topic(
                    corpus,
                    topic,
                    strategies,
                    pages,
                    out,
                    timeout,
                    allow_private=web.allow_private,
                    graph=graph,
                )
            )
    (out / "report.md").write_text("\n".join(markdown_table(r) for r in reports), encoding="utf-8")
    return reports
