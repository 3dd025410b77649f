from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest

from focuscrawl.blocks.partition import partition
from focuscrawl.relevance import ModelFileError, PageScorer, RelevanceModel, train
from focuscrawl.relevance.features import page_terms
from tests.relevance_pages import web


@pytest.fixture(scope="module")
def pages():
    return web(n_per_topic=30, seed=1)


def _split(pages):
    positives = pages["birds"][:10]
    unlabeled = pages["birds"][10:20] + [
        p for t, ps in pages.items() if t != "birds" for p in ps[:20]
    ]
    test_pos = pages["birds"][20:]
    test_neg = [p for t, ps in pages.items() if t != "birds" for p in ps[20:]]
    return positives, unlabeled, test_pos, test_neg


def _accuracy(model, test_pos, test_neg):
    right = sum(model.is_relevant(h, u) for u, h in test_pos)
    right += sum(not model.is_relevant(h, u) for u, h in test_neg)
    return right / (len(test_pos) + len(test_neg))


def test_pu_learning_from_positives_only_separates_the_topic(pages):
    positives, unlabeled, test_pos, test_neg = _split(pages)
    model = train(positives, unlabeled=unlabeled, keywords=["birds"])
    assert model.kind == "pu-ensemble"
    assert model.info["rounds"] >= 1 and model.info["reliable_negatives"] > 0
    assert isinstance(model, PageScorer)
    scores_pos = [model.score(h, u) for u, h in test_pos]
    scores_neg = [model.score(h, u) for u, h in test_neg]
    assert all(0.0 <= s <= 1.0 for s in scores_pos + scores_neg)
    assert min(scores_pos) > max(scores_neg)
    assert _accuracy(model, test_pos, test_neg) >= 0.9


def test_supervised_svm_when_negatives_are_given(pages):
    positives, _, test_pos, test_neg = _split(pages)
    negatives = [p for t, ps in pages.items() if t != "birds" for p in ps[:5]]
    model = train(positives, negatives=negatives)
    assert model.kind == "svm"
    assert _accuracy(model, test_pos, test_neg) >= 0.9


def test_save_and_load_round_trip_gives_identical_scores(pages, tmp_path):
    positives, unlabeled, test_pos, test_neg = _split(pages)
    model = train(positives, unlabeled=unlabeled, keywords=["birds"])
    for name in ("model.json", "model.json.gz"):
        path = tmp_path / name
        model.save(path)
        loaded = RelevanceModel.load(path)
        assert loaded.kind == model.kind and loaded.threshold == model.threshold
        for url, html in test_pos[:3] + test_neg[:3]:
            assert loaded.score(html, url) == pytest.approx(model.score(html, url), abs=1e-12)
    data = json.loads((tmp_path / "model.json").read_text())
    assert data["libraries"]["scikit-learn"] and data["features"]["field_weights"]
    assert gzip.decompress((tmp_path / "model.json.gz").read_bytes()).startswith(b"{")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x80\x04\x95pickle", "not a focuscrawl relevance model"),
        (b'{"hello": 1}', "not a focuscrawl relevance model"),
        (b'{"format": "focuscrawl-relevance-model", "format_version": 99}', "format version 99"),
        (
            b'{"format": "focuscrawl-relevance-model", "format_version": 1, "kind": "svm"}',
            "damaged",
        ),
    ],
)
def test_load_refuses_what_is_not_a_model(tmp_path, content, message):
    path = tmp_path / "m.bin"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=message):
        RelevanceModel.load(path)


def test_load_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelFileError, match="cannot read model"):
        RelevanceModel.load(tmp_path / "absent.json")


def test_keywords_only_or_single_example_falls_back_to_cosine(pages, tmp_path):
    birds = pages["birds"]
    model = train([], keywords=["bird feather"])
    assert model.kind == "cosine"
    assert model.score(birds[0][1], birds[0][0]) > model.score(*reversed(pages["finance"][0]))
    single = train(birds[:1], unlabeled=pages["finance"][:3])
    assert single.kind == "cosine"
    single.save(tmp_path / "c.json")
    again = RelevanceModel.load(tmp_path / "c.json")
    assert again.score_text("bird nest egg") == pytest.approx(single.score_text("bird nest egg"))


def test_nothing_to_learn_from_is_a_value_error():
    with pytest.raises(ValueError, match="nothing to learn from"):
        train([("http://x.test/", "")])


def test_empty_and_foreign_pages_are_skipped_or_scored_low(pages):
    positives, unlabeled, _, _ = _split(pages)
    bad = [("http://x.test/empty", ""), ("http://x.test/blank", "   ")]
    model = train(positives + bad, unlabeled=unlabeled, keywords=["birds"])
    assert model.info["skipped_pages"] == 2
    assert model.score("", "http://x.test/") == 0.0
    foreign = "<html><body><p>Это страница на другом языке о погоде и городе.</p></body></html>"
    assert model.score(foreign, "http://x.test/ru") < model.threshold


def test_score_page_and_observe_follow_the_page_scorer_protocol(pages):
    positives, unlabeled, test_pos, _ = _split(pages)
    model = train(positives, unlabeled=unlabeled)
    url, html = test_pos[0]
    page = partition(html, url)
    assert model.score_page(page) == pytest.approx(model.score(html, url))
    model.observe(page, model.score_page(page))
    assert 0.0 <= model.score_text("heron nest") <= 1.0
    assert model.score_text("heron nest plumage") > model.score_text("stock bond dividend")
    assert np.isfinite(model.scale)


def test_fast_page_scoring_equals_the_term_count_path(pages):
    """``score_page`` (numpy, fastscore.py) == ``score_page_terms`` (page_terms + dict)."""
    positives, unlabeled, test_pos, test_neg = _split(pages)
    model = train(positives, unlabeled=unlabeled, keywords=["birds"])
    odd = [
        # punctuation, digits and quotes at word ends, case, internal punctuation
        "<html><head><title>HERON, heron; “Heron”</title></head><body><h1>Owl's nest!</h1>"
        "<p>(bird) bird. BIRD 1999 birds— e-mail u.s.a. 3heron heron3 ... -- ''</p>"
        "<ul><li><a href='/a'>Nest</a></li><li><a href='/b'>feather, wing</a></li></ul></body></html>",
        # other scripts, non-breaking and ideographic spaces, combining marks, final sigma
        "<html><body><p>ΟΔΟΣ οδός\u00a0heron\u3000nest İstanbul naïve cafe\u0301 鳥 bird\u2029egg</p>"
        "</body></html>",
        "<html><body><p>   </p></body></html>",
        "<html><body><p>1234 5678 !!! ---</p></body></html>",
    ]
    sample = test_pos + test_neg + [(f"http://x.test/odd{i}", h) for i, h in enumerate(odd)]
    checked = 0
    for url, html in sample:
        page = partition(html, url)
        fast, slow = model.score_page(page), model.score_page_terms(page)
        assert abs(fast - slow) <= 1e-9, (url, fast, slow)
        decision = model._fast.decision_page(page)
        reference = model.decision_terms(page_terms(page, model.field_weights))
        if math.isinf(reference):
            assert decision == reference
        else:
            assert abs(decision - reference) <= 1e-9
            checked += 1
    assert checked >= len(test_pos) + len(test_neg) + 2  # the two odd pages with words


def test_pages_the_fast_path_declines_are_scored_by_the_term_count_path(pages, monkeypatch):
    from focuscrawl.relevance import fastscore

    positives, unlabeled, test_pos, _ = _split(pages)
    model = train(positives, unlabeled=unlabeled, keywords=["birds"])
    page = partition(test_pos[0][1], test_pos[0][0])
    monkeypatch.setattr(fastscore, "MAX_CODEPOINTS", 10)  # a "huge" page
    assert model.prepare()._fast.decision_page(page) is None
    assert model.score_page(page) == model.score_page_terms(page) > model.threshold
