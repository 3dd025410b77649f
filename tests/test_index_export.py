from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.index import PageIndex
from focuscrawl.index.export import doc_id, es_mapping


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    path = tmp_path / "index.sqlite"
    with PageIndex.open(path) as ix:
        ix.upsert(
            "http://t/a",
            "Eagle",
            "bald eagle",
            relevance=0.9,
            depth=1,
            fetched_at=1000.5,
            change="new",
        )
        ix.upsert("http://t/" + "x" * 3000, "Long URL", "owl", relevance=0.4)
    return path


def test_bulk_lines_pair_actions_and_documents(index_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "bulk.ndjson"
    assert (
        main(["export-es", "--index", str(index_path), "-o", str(out), "--es-index", "birds"]) == 0
    )
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4
    actions, docs = lines[0::2], lines[1::2]
    assert all(set(a) == {"index"} and a["index"]["_index"] == "birds" for a in actions)
    assert actions[0]["index"]["_id"] == doc_id("http://t/a")
    assert all(len(a["index"]["_id"]) == 40 for a in actions)  # long URLs still give short ids
    assert docs[0] == {
        "url": "http://t/a",
        "title": "Eagle",
        "text": "bald eagle",
        "relevance": 0.9,
        "authority": 0.0,
        "depth": 1,
        "fetched_at": 1000500,
        "indexed_at": docs[0]["indexed_at"],
        "change": "new",
    }
    # every exported field is in the (strict) mapping, with a matching type; the last change
    # (changed_at, change_diff) only when a page has one (tests/test_index_changes.py)
    props = es_mapping()["mappings"]["properties"]
    assert all(set(d) == set(props) - {"changed_at", "change_diff"} for d in docs)


def test_mapping_and_bad_index_name(index_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export-es", "--mapping"]) == 0
    assert json.loads(capsys.readouterr().out)["mappings"]["dynamic"] == "strict"
    assert main(["export-es", "--index", str(index_path), "--es-index", "Bad Name"]) == 2
    assert "invalid Elasticsearch index name" in capsys.readouterr().err
