"""The evolving web, the six-cycle experiment (small) and the real-data slice (APFC)."""

from __future__ import annotations

from pathlib import Path

import pytest
from focuseval.evolving import SIX_CYCLES, synthetic_evolving
from focuseval.recrawl import (
    SIX_TECHNIQUES,
    apfc_versions,
    exchange,
    run_six_cycles,
    score_versions,
)

from focuscrawl.change import compare


@pytest.fixture(scope="module")
def web():  # type: ignore[no-untyped-def]
    return synthetic_evolving(n_pages=240, changed=6)


def test_evolving_web_mutations(web) -> None:  # type: ignore[no-untyped-def]
    web.state.clear()
    host, path = web.victims[0]
    v0 = web.get(host, path)
    assert web.get(host, "/_evolve/2").body == b"delete"
    assert web.get(host, path) is None
    web.step(3)
    assert web.get(host, path).etag == v0.etag  # added back as it was
    web.step(4)
    v4 = web.get(host, path)
    assert v4.etag != v0.etag and v4.last_modified > v0.last_modified
    assert compare(v0.body, v4.body, "u").status == "significant"
    web.step(5)
    v5 = web.get(host, path)
    assert compare(v4.body, v5.body, "u").status == "insignificant"
    assert exchange(web, host, path, v5.etag)[0] == 304
    assert exchange(web, host, path, v4.etag)[0] == 200
    other = next(p for p in web.pages if p not in web.victims)
    assert web.get(*other).etag == web.base.get(*other).etag
    web.state.clear()


def test_six_cycles_meet_the_targets(web) -> None:  # type: ignore[no-untyped-def]
    rows = {t: run_six_cycles(web, t) for t in SIX_TECHNIQUES}
    n, total = len(web.victims), len(web.pages)
    assert [r.cycle for r in rows["doc-index"]] == list(SIX_CYCLES)
    for tech in SIX_TECHNIQUES:
        r = {row.cycle: row for row in rows[tech]}
        assert r["initial"].indexed == total
        assert r["delete"].victims_indexed == n  # every deletion caught (tombstones)
        assert r["add-back"].victims_indexed == n
        if tech == "refetch-all":
            assert r["no-change"].fetched == total
            continue
        assert r["no-change"].body_bytes == 0 and r["no-change"].not_modified == total  # 304s
        assert r["significant"].fetched == n
    for tech in ("doc-index", "content-diff"):
        doc = {row.cycle: row for row in rows[tech]}
        assert doc["significant"].victims_indexed == n  # every significant change caught
        assert doc["insignificant"].indexed == 0  # insignificant changes send nothing
    for tech in ("last-modified", "size", "hash"):
        assert {row.cycle: row for row in rows[tech]}["insignificant"].indexed == n


@pytest.mark.corpus
def test_apfc_slice_precision_recall(corpora: Path) -> None:
    scores = score_versions(
        apfc_versions(corpora, limit=30), techniques=("hash", "doc-index"), package_bits=()
    )
    doc, hsh = scores["doc-index"], scores["hash"]
    assert doc.tp + doc.fn >= 5  # the slice holds real changes
    assert doc.precision >= 0.9 and doc.recall >= 0.9
    assert hsh.precision < 0.6  # every version differs byte-wise: the hash is useless here
