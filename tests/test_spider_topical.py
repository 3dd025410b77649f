"""The topical spider end to end: ``scrapy crawl topical`` in a subprocess against the test web."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.netguard import allow_private_args

ROOT = Path(__file__).resolve().parents[1]


def scrapy_crawl(tmp_path: Path, *args: str, web: Any = None) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl topical``; with ``web`` (a test web), allowed to reach its loopback hosts."""
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    allow = allow_private_args(web.hosts) if web is not None else []
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topical", *args, *allow],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def topic_file(tmp_path: Path, web: Any, topic: str = "birds") -> Path:
    seeds = ", ".join(json.dumps(u) for u in web.seeds[topic])
    path = tmp_path / f"{topic}.toml"
    path.write_text(f'name = "{topic}"\nkeywords = ["{topic}"]\nseeds = [{seeds}]\n')
    return path


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, testweb_synthetic: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("crawl")
    proc = scrapy_crawl(
        tmp,
        "-a",
        f"topic={topic_file(tmp, testweb_synthetic)}",
        "-s",
        "CLOSESPIDER_PAGECOUNT=250",
        "-s",
        f"FOCUSCRAWL_CRAWL_LOG={tmp / 'log.jsonl'}",
        "-s",
        f"FOCUSCRAWL_STATS_FILE={tmp / 'stats.json'}",
        "-O",
        f"{tmp / 'items.jsonl'}:jsonlines",
        web=testweb_synthetic,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    read = lambda name: [json.loads(x) for x in (tmp / name).read_text().splitlines()]  # noqa: E731
    return {
        "log": read("log.jsonl"),
        "items": read("items.jsonl"),
        "stats": json.loads((tmp / "stats.json").read_text()),
        "stderr": proc.stderr,
    }


def test_crawl_log_has_one_line_per_fetch_in_order(crawl: dict[str, Any]) -> None:
    log = crawl["log"]
    # CLOSESPIDER_PAGECOUNT=250 counts the robots.txt responses too; the pages in flight at the
    # close come on top, and they are fewer since the engine pauses for the writer threads
    # (247 lines for 253 responses, 6 of them robots.txt, in one run)
    robots = crawl["stats"].get("robotstxt/response_count", 0)
    assert len(log) >= 250 - robots
    assert [r["seq"] for r in log] == list(range(1, len(log) + 1))
    assert all({"url", "status", "relevance", "score"} <= r.keys() for r in log)
    assert len({r["url"] for r in log}) == len(log), "a URL was fetched twice"


def test_items_carry_the_page_fields(crawl: dict[str, Any]) -> None:
    items = crawl["items"]
    assert items
    for item in items:
        assert {
            "url",
            "title",
            "relevance",
            "relevant",
            "depth",
            "parent",
            "seq",
            "fetched_at",
        } <= (item.keys())
        assert 0.0 <= item["relevance"] <= 1.0
    assert any(i["relevant"] for i in items) and any(not i["relevant"] for i in items)


def test_focused_crawl_harvests_well_above_the_base_rate(
    crawl: dict[str, Any], testweb_synthetic: Any
) -> None:
    from focuseval.synthetic import SyntheticWeb

    web = SyntheticWeb(hosts=testweb_synthetic.hosts, port=testweb_synthetic.port)
    pages = [web.url(p) for p in web.pages]
    base_rate = sum(web.topic_of(u) == "birds" for u in pages) / len(pages)
    fetched = [r["url"] for r in crawl["log"] if r["status"] == 200]
    harvest = sum(web.topic_of(u) == "birds" for u in fetched) / len(fetched)
    assert harvest > 2 * base_rate, (harvest, base_rate)


def test_bad_cases_are_counted_not_fatal(crawl: dict[str, Any]) -> None:
    stats = crawl["stats"]
    assert stats["finish_reason"] == "closespider_pagecount"
    assert "Traceback" not in crawl["stderr"]
    assert stats.get("focuscrawl/harvest/relevant", 0) > 0
    # the synthetic web links PDFs from its pages: fetched, counted, not parsed, not fatal
    assert stats.get("focuscrawl/partition/non_html", 0) > 0
    assert "harvest rate" in crawl["stderr"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "topic=birds of prey"], "has no seeds"),
        (["-a", "topic=/nonexistent/x.toml"], "topic file not found"),
        ([], "no topic"),
    ],
)
def test_bad_topic_is_one_error_line_and_nonzero_exit(
    tmp_path: Path, args: list[str], message: str
) -> None:
    proc = scrapy_crawl(tmp_path, *args)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    # Scrapy logs its start-up banner first; then one error line ends the run
    errors = [line for line in lines if "error:" in line]
    assert errors == [lines[-1]] and message in lines[-1], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_file_that_is_not_a_model_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.model"
    bad.write_text('{"not": "a model"}')
    proc = scrapy_crawl(
        tmp_path, "-a", "topic=birds", "-a", "seeds=http://127.0.0.1:9/", "-a", f"model={bad}"
    )
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "not a focuscrawl relevance model" in last and "Traceback" not in proc.stderr


def test_the_crawl_ends_with_a_readable_summary(crawl: dict[str, Any]) -> None:
    stats = crawl["stats"]
    summary = [line.split("] INFO: ", 1)[1] for line in crawl["stderr"].splitlines()
               if "[focuscrawl.extensions.summary] INFO" in line]  # fmt: skip
    judged, relevant = stats["focuscrawl/harvest/pages"], stats["focuscrawl/harvest/relevant"]
    assert summary[0].startswith(f"Crawl closespider_pagecount: {stats['focuscrawl/pages']} pages")
    assert (
        f"{relevant} relevant of {judged} judged (harvest rate {relevant / judged:.3f})"
        in summary[0]
    )
    assert summary[1].startswith("  top hosts: 127.0.0.")
    assert summary[-1].startswith("  wrote: items ") and "crawl log " in summary[-1]
    assert "focuscrawl/exit_status" not in stats
