"""HITS over the fetched graph (focuscrawl.strategy.hits) and the ``hits`` strategy's policy."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.blocks import partition
from focuscrawl.frontier.state import RequestState
from focuscrawl.netguard import allow_private_args
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.judge import Judgement
from focuscrawl.strategy.hits import HitsGraph
from focuscrawl.strategy.scoring import SharkParams
from tests.test_strategy_policy import make_policy

GOLDEN = (math.sqrt(5) - 1) / 2  # 0.618…


def test_known_graph_hubs_and_authorities() -> None:
    # h1 → A, B; h2 → A. MᵀM = [[2, 1], [1, 1]]: the principal eigenvector is (1, 0.618…)
    # for the authorities A, B, and M·a gives the hubs (1, 0.618…) for h1, h2
    g = HitsGraph(every=2)
    g.add_page("h1", ["A", "B"], 1.0)
    g.add_page("h2", ["A"], 1.0)
    assert g.due
    rounds = g.recompute()
    assert 1 < rounds < 50
    assert g.authority("A") == pytest.approx(1.0)
    assert g.authority("B") == pytest.approx(GOLDEN, abs=1e-5)
    assert g.hub("h1") == pytest.approx(1.0)
    assert g.hub("h2") == pytest.approx(GOLDEN, abs=1e-5)
    assert g.authority("h1") == 0.0 and g.authority("unknown") == 0.0
    assert [u for u, _ in g.top_unfetched(10)] == ["A", "B"]
    assert not g.due


def test_three_hubs_known_vectors() -> None:
    # h1 → A, B, C; h2 → A, B; h3 → A. MᵀM = [[3, 2, 1], [2, 2, 1], [1, 1, 1]]
    g = HitsGraph(every=3, iterations=200, tolerance=1e-12)
    g.add_page("h1", ["A", "B", "C"], 1.0)
    g.add_page("h2", ["A", "B"], 1.0)
    g.add_page("h3", ["A"], 1.0)
    g.recompute()
    ata = [[3, 2, 1], [2, 2, 1], [1, 1, 1]]
    v = [1.0, 1.0, 1.0]
    for _ in range(500):  # the principal eigenvector by plain iteration, as a reference
        v = [sum(ata[i][j] * v[j] for j in range(3)) for i in range(3)]
        v = [x / max(v) for x in v]
    for url, want in zip("ABC", v, strict=True):
        assert g.authority(url) == pytest.approx(want, abs=1e-6)
    hubs = [sum(v[: 3 - k]) for k in range(3)]  # h1 = a·(1,1,1), h2 = a·(1,1,0), h3 = a·(1,0,0)
    for url, want in zip(("h1", "h2", "h3"), hubs, strict=True):
        assert g.hub(url) == pytest.approx(want / max(hubs), abs=1e-6)


def test_weights_irrelevant_pages_are_no_hubs() -> None:
    # h1 → A, B (weight 1); h2 → B (weight 0.5); junk → C (judged irrelevant: weight 0).
    # M = [[1, 1], [0, 0.5]], MᵀM = [[1, 1], [1, 1.25]]: λ = (2.25 + √4.0625) / 2 and
    # a ∝ (1, λ − 1), so B leads and A = 1 / (λ − 1)
    g = HitsGraph(every=3, iterations=200, tolerance=1e-12)
    g.add_page("h1", ["A", "B"], 1.0)
    g.add_page("h2", ["B"], 0.5)
    g.add_page("junk", ["C", "C"], 0.0)
    g.recompute()
    lam = (2.25 + math.sqrt(4.0625)) / 2
    assert g.authority("B") == pytest.approx(1.0)
    assert g.authority("A") == pytest.approx(1 / (lam - 1), abs=1e-6)
    assert g.authority("C") == 0.0 and g.hub("junk") == 0.0
    assert [u for u, _ in g.top_unfetched(5)] == ["B", "A"]


def test_disconnected_part_fades() -> None:
    # the principal eigenvector: a weaker separate community tends to 0 (Kleinberg's HITS)
    g = HitsGraph(every=2, iterations=200, tolerance=1e-12)
    g.add_page("h1", ["A"], 1.0)
    g.add_page("h2", ["B"], 0.5)
    g.recompute()
    assert g.authority("A") == pytest.approx(1.0)
    assert g.authority("B") < 1e-6


def test_incremental_scores_between_runs() -> None:
    g = HitsGraph(every=100)
    g.add_page("h1", ["A", "B"], 1.0)
    assert g.authority("A") == 1.0  # before the first run: weighted in-degree
    g.add_page("h2", ["A"], 1.0)
    assert g.authority("A") == 2.0 and g.authority("B") == 1.0
    g.recompute()
    # a new page gets its hub score from the last authorities at once (h3 links to A, as h2
    # does: the same hub score, 0.618…), and its other target gains that much authority
    g.add_page("h3", ["A", "C"], 1.0)
    assert g.hub("h3") == pytest.approx(g.hub("h2")) == pytest.approx(GOLDEN)
    assert g.authority("C") == pytest.approx(g.authority("B") * GOLDEN)
    # fetched URLs are never offered for re-scoring
    g.add_page("A", [], 1.0)
    assert "A" not in [u for u, _ in g.top_unfetched(10)]


def test_bounded_pages_and_nodes() -> None:
    g = HitsGraph(every=1000, max_pages=10, max_nodes=50)
    for i in range(30):
        g.add_page(f"p{i}", [f"t{i}-{k}" for k in range(5)], weight=(i % 7) + 1)
    g.recompute()
    assert len(g._pages) == 10
    assert len(g) <= 30 + 10 * 5  # compacted: fetched pages and the kept hubs' targets
    assert all(w >= 5 for w, _ in g._pages.values())  # the least weighted went first
    assert g.authority("t6-0") > 0 and g.authority("t0-0") == 0.0


def _page(url: str, links: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    items = "".join(f'<li><a href="{u}">{a}</a></li>' for u, a in links)
    html = f"<html><head><title>{url}</title></head><body><main><article>"
    html += "<p>Birds of prey: eagles, hawks, falcons and owls hunt by sight.</p>"
    html += f"<ul>{items}</ul></article></main></body></html>"
    return partition(html, url)


def test_policy_rescores_the_queue_after_each_run() -> None:
    policy = make_policy(CosineModel(["birds", "prey"]), "hits", SharkParams(hits_every=2))
    base = "http://127.0.0.1:9/"
    relevant = Judgement(relevance=1.0, relevant=True)  # hub weight 1 (no seed scale yet)
    out1 = list(
        policy.links(
            _page(base + "h1", [(base + "a", "Eagle"), (base + "b", "Owl")]),
            base + "h1",
            RequestState(seed=True),
            relevant,
        )
    )
    assert [u for u, _, _ in out1] == [base + "a", base + "b"]
    assert all(s == pytest.approx(0.5) for _, s, _ in out1)  # epoch 0: in-degree 1 → 1/(1+1)
    out2 = list(
        policy.links(
            _page(base + "h2", [(base + "a", "Eagle"), (base + "c", "Hawk")]),
            base + "h2",
            RequestState(1, parent=base + "h1"),
            relevant,
        )
    )
    # the page's own links, then (a run is due) the queued URLs re-scored, best first
    urls = [u for u, _, _ in out2]
    assert urls[:2] == [base + "a", base + "c"]
    rescored = out2[2:]
    assert [u for u, _, _ in rescored][0] == base + "a"
    assert all(s > 1 for _, s, _ in rescored)  # one run done: above every earlier score
    by_url = {u: (s, c) for u, s, c in rescored}
    assert by_url[base + "b"][1].parent == base + "h1"  # re-sent with its own parent, depth
    assert by_url[base + "b"][1].depth == 1
    assert by_url[base + "a"][0] > by_url[base + "b"][0]


def _crawl(web: Any, tmp: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(web.seeds["birds"]), "-a", "strategy=hits"]
    cmd += allow_private_args(web.hosts)
    for setting in ("FOCUSCRAWL_DATA_DIR=data", "FOCUSCRAWL_CRAWL_LOG=log.jsonl", *settings):
        cmd += ["-s", setting]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=400)


def test_hits_strategy_crawls(testweb_synthetic: Any, tmp_path: Path) -> None:
    proc = _crawl(
        testweb_synthetic,
        tmp_path,
        "CLOSESPIDER_PAGECOUNT=150",
        "FOCUSCRAWL_HITS_EVERY=20",
        "FOCUSCRAWL_STATS_FILE=stats.json",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert len(log) >= 140  # CLOSESPIDER_PAGECOUNT counts the robots.txt answers as well
    assert sum(r["relevant"] for r in log) >= 30
    # after the first recomputations the queue is re-scored: later fetches carry the epoch
    assert max(r["score"] for r in log[60:]) >= 2
    assert stats["focuscrawl/frontier/upgraded"] > 0
    # the crawl's own CPU (spider opened to closed), less than the whole process's
    assert 0 < stats["crawl_cpu_seconds"] < stats["elapsed_time_seconds"] * 4


def test_hits_refuses_a_redis_frontier(
    testweb_synthetic: Any, redis_url: str, tmp_path: Path
) -> None:
    proc = _crawl(testweb_synthetic, tmp_path, f"REDIS_URL={redis_url}")
    assert proc.returncode == 2
    assert "strategy hits runs with the in-process frontier only" in proc.stderr
    log = tmp_path / "log.jsonl"
    assert not log.exists() or not log.read_text().strip()  # stopped before fetching
