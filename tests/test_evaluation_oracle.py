"""The reference crawlers (oracle, breadth-first) on a tiny hand-made site, and the report's
×oracle / ×bfs columns and judge quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from focuseval.metrics import CrawlMetrics, CrawlRecord, Labels, evaluate, judge_quality
from focuseval.oracle import LinkGraph, reference_crawl, reference_metrics
from focuseval.report import markdown_table, ratios, topic_report, write_topic_report
from focuseval.site import Resource
from focuseval.topics import EvalTopic, topic_names

BASE = "http://127.0.0.2:1"
#: path → its links (absolute, in document order); ``!`` marks a nofollow link
GRAPH = {
    "/s": [
        "/a",
        "/b",
        "/r1",
        "/a#again",  # the same page as /a once cleaned
        "http://127.0.0.9:1/far",  # a host the site does not serve
        "/private/p",  # disallowed by robots.txt
        "!/r9",  # nofollow: never followed
        "/old",  # a redirect to /r2
    ],
    "/a": ["/r2", "/c"],
    "/b": ["/r3"],
    "/r1": ["/r4"],
    "/c": ["/r5", "/gone"],  # /gone: 404
    "/r2": [],
    "/r3": [],
    "/r4": [],
    "/r5": [],
    "/r9": [],
    "/private/p": ["/r5"],
}
RELEVANT = ["/r1", "/r2", "/r3", "/r4", "/r5", "/r9"]


def _html(links: list[str]) -> bytes:
    anchors = []
    for href in links:
        rel = ' rel="nofollow"' if href.startswith("!") else ""
        href = href.lstrip("!")
        url = href if href.startswith("http") else BASE + href
        anchors.append(f'<li><a href="{url}"{rel}>link {href}</a></li>')
    return (
        "<!doctype html><html><head><title>t</title></head><body><main><p>Some words of the"
        " article, long enough to be text.</p><ul>"
        + "".join(anchors)
        + "</ul></main></body></html>"
    ).encode()


class TinySite:
    hosts = ["127.0.0.2"]

    def get(self, host: str, path: str) -> Resource | None:
        if host != "127.0.0.2":
            return None
        if path == "/old":
            return Resource(b"", status=301, headers={"Location": "/r2"})
        if path not in GRAPH:
            return None
        return Resource(_html(GRAPH[path]))

    def robots(self, host: str) -> str:
        return "User-agent: *\nDisallow: /private/\n"


def _labels() -> Labels:
    relevant = [BASE + p for p in RELEVANT]
    return Labels.from_urls(relevant, [u for u in relevant if not u.endswith("r9")])


def _paths(order: str, pages: int = 100) -> list[str]:
    log = reference_crawl(LinkGraph(TinySite()), [BASE + "/s"], _labels(), pages, order)
    return [r.url.removeprefix(BASE) for r in log]


def test_the_graph_takes_links_as_the_crawler_does() -> None:
    graph = LinkGraph(TinySite())
    seed = graph.fetch(BASE + "/s")
    assert seed is not None and seed.status == 200
    # cleaned and de-duplicated; off-host, disallowed and nofollow links dropped; the redirect
    # kept as a link (it is followed when fetched)
    assert [u.removeprefix(BASE) for u in seed.links] == ["/a", "/b", "/r1", "/old"]
    moved = graph.fetch(BASE + "/old")
    assert moved is not None and moved.url == BASE + "/r2" and moved.status == 200
    gone = graph.fetch(BASE + "/gone")
    assert gone is not None and gone.status == 404 and gone.links == ()


def test_oracle_fetches_relevant_links_first_ties_by_discovery() -> None:
    # the seed; the links to members as soon as they are found (r1 on the seed, then r4 on r1);
    # then the other links in the order they were found, each member found on the way first
    assert _paths("oracle") == ["/s", "/r1", "/r4", "/a", "/r2", "/b", "/r3", "/c", "/r5", "/gone"]


def test_a_redirect_to_a_fetched_page_costs_no_logged_fetch() -> None:
    # /old (not a member: last of the seed's links) redirects to /r2, fetched by then
    paths = _paths("oracle")
    assert paths.count("/r2") == 1 and "/old" not in paths


def test_bfs_fetches_in_depth_order() -> None:
    # /old → /r2 (depth 1, fetched as /r2), then /a's /r2 is already fetched
    assert _paths("bfs") == ["/s", "/a", "/b", "/r1", "/r2", "/c", "/r3", "/r4", "/r5", "/gone"]


def test_references_stop_at_the_page_budget_and_score_like_a_crawl() -> None:
    assert _paths("oracle", 3) == ["/s", "/r1", "/r4"]
    refs = reference_metrics(LinkGraph(TinySite()), [BASE + "/s"], _labels(), 100)
    oracle, bfs = refs["oracle"], refs["bfs"]
    assert oracle.targets == 5 and oracle.recall[4] == 3 / 5 and oracle.recall[-1] == 1.0
    assert bfs.recall[3] == 1 / 5 and bfs.fetched == oracle.fetched == 10
    with pytest.raises(ValueError):
        reference_crawl(LinkGraph(TinySite()), [], _labels(), 5, "random")


def test_ratios_and_the_report_columns(tmp_path: Path) -> None:
    targets = [f"{BASE}/r{i}" for i in range(1, 11)]
    labels = Labels.from_urls(targets)

    def crawl(found_at: list[int], pages: int) -> CrawlMetrics:
        """A crawl of ``pages`` fetches that finds the next target at each of ``found_at``."""
        found = iter(targets)
        urls = [next(found) if i in found_at else f"{BASE}/x{i}" for i in range(1, pages + 1)]
        return evaluate([CrawlRecord(u, 200) for u in urls], labels)

    oracle = crawl(list(range(1, 11)), 300)  # every target in the first 10 pages, stops at 300
    bfs = crawl([100, 400, 800], 1000)
    strategy = crawl([5, 200, 300, 450, 900], 600)  # stops before 1000
    assert ratios(strategy, oracle) == {"250": 0.2, "500": 0.4, "1000": None}
    assert ratios(strategy, bfs) == {"250": 2.0, "500": 2.0, "1000": None}

    topic = EvalTopic("test.Topic", ["t"], [f"{BASE}/r1"], labels, "a rule")
    log = tmp_path / "best.jsonl"
    rows = [
        {"seq": 1, "url": f"{BASE}/r1", "status": 200, "relevance": 0.9, "relevant": True},
        {"seq": 2, "url": f"{BASE}/x2", "status": 200, "relevance": 0.8, "relevant": True},
        {"seq": 3, "url": f"{BASE}/r3", "status": 200, "relevance": 0.1, "relevant": False},
        {"seq": 4, "url": f"{BASE}/x4", "status": 404, "relevance": None, "relevant": False},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    judge = judge_quality(log, labels)
    assert (judge["believed"], judge["true"], judge["both"], judge["judged"]) == (2, 2, 1, 3)
    assert judge["precision"] == 0.5 and judge["recall"] == 0.5
    assert judge["believed_harvest"] == 0.5 and judge["true_harvest"] == 0.5

    results = {"best": strategy}
    refs = {"oracle": oracle, "bfs": bfs}
    report = topic_report("synthetic", topic, results, {}, refs, {"best": judge})
    paths = write_topic_report(tmp_path / "out", report, results, topic.slug, refs)
    data = json.loads(paths["json"].read_text())
    assert data["strategies"]["best"]["x_oracle"] == {"250": 0.2, "500": 0.4, "1000": None}
    assert data["references"]["oracle"]["fetched"] == 300
    table = markdown_table(report)
    assert "| ×oracle @250 | ×oracle @500 | ×oracle @1000 | ×bfs @250 |" in table
    assert "| best | 0.200 | 0.400 | — | 0.20 | 0.40 | — | 2.00 | 2.00 | — |" in table
    assert "| oracle (reference) | target recall | 1.000 |" in table
    assert "| best | 0.500 | 0.500 | 0.500 | 0.500 | 3 |" in table
    assert paths["png"].read_bytes().startswith(b"\x89PNG")


def test_topic_sets() -> None:
    assert topic_names("dev") == ["Mammals", "European", "Politics"]
    assert topic_names("Birds,heldout,Birds")[:2] == ["Birds", "Figures"]
    assert len(topic_names("tuned,dev,heldout")) == 15
    with pytest.raises(ValueError):
        topic_names("Nowhere")
