"""Crawled text printed by ``focuscrawl search`` and ``focuscrawl status`` cannot drive the
terminal: escape sequences, control characters and bidi overrides are removed first."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.cli import main
from focuscrawl.cluster.state import write_worker
from focuscrawl.index import PageIndex
from focuscrawl.terminal import json_terminal_safe, terminal_line, terminal_safe

RETITLE = "\x1b]0;evil\x07"  # sets the terminal window's title
CLEAR = "\x1b[2J"  # clears the screen
HOSTILE = (
    f"Eagle{RETITLE} nest{CLEAR} \x1b[31mred\x1b[0m \x9b2J c1\x9d0;t\x9c a\rb "
    "\u202egnirts\u202c \u2066iso\u2069 nul\x00 del\x7f bell\x07 tab\tnew\nline"
)
# what no printed line may contain: ESC, C0 but tab/newline, DEL, C1, bidi overrides
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_terminal_safe_removes_sequences_whole() -> None:
    out = terminal_safe(HOSTILE)
    assert not UNSAFE.search(out)
    assert "evil" not in out and "2J" not in out and "0;t" not in out and "[31m" not in out
    assert out.startswith("Eagle nest red ") and "ab" in out and "tab\tnew\nline" in out
    assert "gnirts" in out and "iso" in out  # the text stays, without its overrides


def test_terminal_line_is_one_line() -> None:
    out = terminal_line(HOSTILE)
    assert "\n" not in out and "\t" not in out and not UNSAFE.search(out)
    assert terminal_line("plain text, ünïcode ✓") == "plain text, ünïcode ✓"


def test_json_keeps_the_data_and_escapes_what_a_terminal_acts_on() -> None:
    text = json_terminal_safe(json.dumps({"t": HOSTILE}, ensure_ascii=False))
    assert not UNSAFE.search(text) and json.loads(text)["t"] == HOSTILE


@pytest.fixture
def hostile_index(tmp_path: Path) -> Path:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        ix.upsert(
            f"http://t/eagle{CLEAR}", f"Bald eagle{RETITLE}", f"The eagle {HOSTILE} eats fish",
            relevance=0.9,
        )  # fmt: skip
    return path


@pytest.mark.parametrize("json_out", [False, True])
def test_search_prints_no_escape_sequences(
    hostile_index: Path, capsys: pytest.CaptureFixture[str], json_out: bool
) -> None:
    args = ["search", "eagle", "--index", str(hostile_index)] + (["--json"] if json_out else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    if json_out:
        assert not UNSAFE.search(out)
        hit = json.loads(out)["hits"][0]
        assert hit["title"] == f"Bald eagle{RETITLE}"  # the data, unchanged for a program
        return
    assert not UNSAFE.search(out.replace("\n", ""))
    assert "Bald eagle" in out and "evil" not in out and "[eagle]" in out


def test_status_prints_no_escape_sequences(
    redis_url: str, redis_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = "focuscrawl:topical_redis"
    redis_client.set(f"{prefix}:topic", json.dumps({"name": f"birds{RETITLE}"}))
    write_worker(redis_client, prefix, f"host{CLEAR}:1", {"state": f"running{RETITLE}",
                 "pages": 3, "judged": 2, "relevant": 1, "harvest_rate": 0.5, "updated": 0})  # fmt: skip
    write_worker(redis_client, prefix, "forged:2", {"state": "x", "pages": "many",
                 "harvest_rate": [1], "updated": "soon"})  # fmt: skip
    assert main(["status", "--redis-url", redis_url]) == 0
    out = capsys.readouterr().out
    assert not UNSAFE.search(out.replace("\n", ""))
    assert "topic: birds" in out and "running" in out and "evil" not in out
    assert "pages 3" in out  # a forged worker record counts as nothing, and does not crash
