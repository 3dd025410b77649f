from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.index import PageIndex


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        ix.upsert(
            "http://t/eagle",
            "Bald eagle",
            "The bald eagle is a bird of prey that eats fish.",
            relevance=0.9,
        )
        ix.upsert(
            "http://t/owl", "Owl", "The owl is a bird of prey that hunts at night.", relevance=0.4
        )
    return path


def test_search_text_output(index_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "eagle", "--index", str(index_path)]) == 0
    out = capsys.readouterr().out
    assert "Bald eagle" in out and "http://t/eagle" in out and "[eagle]" in out
    assert "relevance 0.900" in out and "Owl" not in out


def test_search_json_output(index_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "bird prey", "--index", str(index_path), "--json", "-n", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "and" and len(data["hits"]) == 1
    assert data["hits"][0]["url"] == "http://t/eagle"  # same text match, higher relevance
    assert "<<bird>>" in data["hits"][0]["highlighted"]


def test_search_env_default_path(
    index_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOCUSCRAWL_DATA_DIR", str(index_path.parent))
    monkeypatch.delenv("FOCUSCRAWL_INDEX_PATH", raising=False)
    assert main(["search", "owl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["url"] == "http://t/owl"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "   "], "empty query"),
        (["search", "((("], "no searchable words"),
        (["search", "x" * 5000], "too long"),
        (["search", "eagle", "-n", "0"], "-n must be"),
        (["search", "eagle", "--relevance-weight", "2"], "weights"),
    ],
)
def test_search_user_errors(
    index_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--index", str(index_path)]) == 2
    assert message in capsys.readouterr().err


def test_search_missing_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "eagle", "--index", str(tmp_path / "none.sqlite")]) == 2
    assert "no index" in capsys.readouterr().err
