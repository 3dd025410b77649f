"""Harvest rate and target recall on hand-made crawl logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from focuseval.metrics import Labels, evaluate_log, normalize_url, read_crawl_log

A, B, C, D, E = (f"http://127.0.0.2:8000/wiki/{x}" for x in "ABCDE")


def write_log(path: Path, rows: list[dict[str, object] | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def labels() -> Labels:
    # A, B, C relevant; only A and B reachable from the seeds (targets); D, E irrelevant.
    return Labels.from_urls([A, B, C], targets=[A, B])


def test_curves_by_hand(tmp_path: Path, labels: Labels) -> None:
    log = write_log(
        tmp_path / "log.jsonl",
        [
            {"seq": 1, "url": A, "status": 200, "relevance": 0.1, "score": 1.0},
            {
                "seq": 2,
                "url": D,
                "status": 200,
                "relevance": 0.9,
                "score": 0.9,
            },  # crawler's opinion ignored
            {"seq": 3, "url": C, "status": 200, "relevance": 0.0, "score": 0.5},
            {
                "seq": 4,
                "url": A,
                "status": 200,
                "relevance": 0.1,
                "score": 0.4,
            },  # refetch: not counted twice
            {
                "seq": 5,
                "url": B,
                "status": 404,
                "relevance": 0.0,
                "score": 0.3,
            },  # failed fetch of a target
            {"seq": 6, "url": B, "status": 200, "relevance": 0.0, "score": 0.2},
        ],
    )
    m = evaluate_log(log, labels)
    assert m.fetched == 6 and m.relevant == 3 and m.targets == 2
    assert m.harvest == pytest.approx([1 / 1, 1 / 2, 2 / 3, 2 / 4, 2 / 5, 3 / 6])
    assert m.recall == pytest.approx([0.5, 0.5, 0.5, 0.5, 0.5, 1.0])
    assert m.at(3) == pytest.approx({"harvest_rate": 2 / 3, "target_recall": 0.5})
    assert m.at(7) is None
    assert m.checkpoints([2, 100]) == {
        2: pytest.approx({"harvest_rate": 0.5, "target_recall": 0.5}),
        100: None,
    }


def test_fetch_order_follows_seq_and_bad_lines_are_skipped(tmp_path: Path, labels: Labels) -> None:
    log = write_log(
        tmp_path / "log.jsonl",
        [
            {"seq": 2, "url": E, "status": 200},
            "not json",
            {"seq": 1, "url": A, "status": 200},
            {"status": 200},  # no url
            "",
        ],
    )
    records, skipped = read_crawl_log(log)
    assert [r.url for r in records] == [A, E] and skipped == 2
    m = evaluate_log(log, labels)
    assert m.harvest == pytest.approx([1.0, 0.5]) and m.skipped_lines == 2


def test_urls_compare_after_percent_decoding() -> None:
    assert (
        normalize_url("HTTP://127.0.0.2:80/wiki/Turkey_%28bird%29#x")
        == "http://127.0.0.2:80/wiki/Turkey_(bird)"
    )
    assert normalize_url("http://h/a?b=1") == "http://h/a?b=1"
    labels = Labels.from_urls(["http://h/wiki/%C3%85land"])
    assert normalize_url("http://h/wiki/Åland") in labels.relevant


def test_empty_log(tmp_path: Path, labels: Labels) -> None:
    m = evaluate_log(write_log(tmp_path / "log.jsonl", []), labels)
    assert m.fetched == 0 and m.summary()["harvest_rate"] == 0.0 and m.at(1) is None
