"""The evaluation harness: reports from a hand-made crawl log, and a tiny real crawl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuseval.harness import build_topic, crawl_command, eval_site, evaluate_topic
from focuseval.metrics import Labels, evaluate_log
from focuseval.report import topic_report, write_topic_report
from focuseval.topics import EvalTopic, write_topic_toml

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def make_topic() -> EvalTopic:
    relevant = [f"http://127.0.0.2:1/r{i}" for i in range(10)]
    return EvalTopic("test.Topic", ["topic"], relevant[:2], Labels.from_urls(relevant), "a rule")


def test_report_from_a_generated_log(tmp_path: Path) -> None:
    topic = make_topic()
    logs = {}
    for name, relevant_every in (("bfs", 4), ("bestfirst", 2)):
        rows = []
        for seq in range(1, 301):
            url = (
                f"http://127.0.0.2:1/r{seq // relevant_every}"
                if seq % relevant_every == 0
                else f"http://127.0.0.2:1/x{seq}"
            )
            rows.append(
                json.dumps({"seq": seq, "url": url, "status": 200, "relevance": 0.5, "score": 1.0})
            )
        logs[name] = tmp_path / f"{name}.jsonl"
        logs[name].write_text("\n".join(rows) + "\n", encoding="utf-8")
    results = {name: evaluate_log(path, topic.labels) for name, path in logs.items()}
    report = topic_report("synthetic", topic, results, {"bfs": {"returncode": 0}})
    paths = write_topic_report(tmp_path / "out", report, results, topic.slug)

    data = json.loads(paths["json"].read_text())
    bfs, best = data["strategies"]["bfs"], data["strategies"]["bestfirst"]
    # bfs finds r1..r9 at seq 4..36 (r0 never: seq 0 is not fetched); bestfirst r1..r9 at seq 2..18.
    assert bfs["checkpoints"]["100"] == {"harvest_rate": 0.09, "target_recall": 0.9}
    assert best["checkpoints"]["250"] == {"harvest_rate": 9 / 250, "target_recall": 0.9}
    assert bfs["checkpoints"]["500"] is None and bfs["fetched"] == 300 and bfs["returncode"] == 0
    table = paths["markdown"].read_text()
    assert "| bfs | target recall | 0.900 | 0.900 | — | — | — |" in table
    assert paths["png"].read_bytes().startswith(PNG_MAGIC)


def test_topic_file_and_crawl_command(tmp_path: Path) -> None:
    import tomllib

    topic = make_topic()
    topic.keywords = ['say "hi"']
    path = write_topic_toml(topic, tmp_path / "t.toml")
    data = tomllib.loads(path.read_text())
    assert data == {"name": "test.Topic", "keywords": ['say "hi"'], "seeds": topic.seeds}
    cmd = crawl_command(path, "bfs", 50, tmp_path / "l.jsonl", tmp_path / "d", 60)
    assert cmd[1:5] == ["-m", "scrapy", "crawl", "topical"]
    assert f"topic={path}" in cmd and "strategy=bfs" in cmd
    assert (
        f"FOCUSCRAWL_CRAWL_LOG={tmp_path / 'l.jsonl'}" in cmd and "CLOSESPIDER_PAGECOUNT=50" in cmd
    )
    assert "strategy=" not in " ".join(crawl_command(path, None, 50, tmp_path / "l", tmp_path, 60))
    assert not any("ALLOW_PRIVATE" in arg for arg in cmd)
    allowed = crawl_command(path, None, 5, tmp_path, tmp_path, 60, "127.0.0.2,127.0.0.3")
    assert allowed[-2:] == ["-s", "FOCUSCRAWL_ALLOW_PRIVATE=127.0.0.2,127.0.0.3"]


def test_tiny_real_run_on_the_synthetic_web(tmp_path: Path, testweb_synthetic: Any) -> None:
    topic = build_topic("synthetic", "birds", testweb_synthetic, None)
    assert topic.seeds == testweb_synthetic.seeds["birds"]
    from focuseval.oracle import LinkGraph

    graph = LinkGraph(eval_site("synthetic", testweb_synthetic, None))
    report = evaluate_topic(
        "synthetic", topic, ["bestfirst"], 60, tmp_path, 240, testweb_synthetic.allow_private, graph
    )
    run = report["strategies"]["bestfirst"]
    # the references over the served site's graph, from the same seeds, for as many pages
    oracle = report["references"]["oracle"]
    # the oracle stops at 60 pages; the crawl a little past them (each page past 60 may add one)
    extra = max(0, run["fetched"] - 60)
    assert oracle["fetched"] == 60 and oracle["relevant"] >= run["relevant"] - extra
    assert report["references"]["bfs"]["fetched"] == 60
    assert set(run["x_oracle"]) == {"250", "500", "1000"} and run["judge"]["judged"] > 0
    assert run["returncode"] == 0
    log = Path(run["crawl_log"])
    # CLOSESPIDER_PAGECOUNT stops it a little after 60 responses, a robots.txt per host among
    # them: the pages in flight at the close no longer always make up for those (the engine
    # pauses for the writer threads)
    hosts = {urlsplit(json.loads(line)["url"]).netloc for line in log.read_text().splitlines()}
    assert 60 - len(hosts) <= run["fetched"] <= 80
    again = evaluate_log(log, topic.labels)
    assert run["harvest_rate"] == again.harvest[-1] and run["relevant"] == again.relevant
    # The seeds are relevant pages of the topic, so a crawl from them harvests some.
    assert run["relevant"] >= 3
    assert all(Path(p).exists() for p in report["files"].values())
