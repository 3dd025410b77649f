"""A small slice of the classifier evaluation on the real corpus (the full table is a bench)."""

from __future__ import annotations

import pytest
from focuseval import classifier_experiments as ex
from focuseval import classifiers as ev

CATEGORY = "subject.Science.Physics.Space_Astronomy"


@pytest.fixture(scope="module")
def corpus(corpora):
    def subset(wiki):
        members = sorted(wiki.members(CATEGORY))
        others = [n for n in wiki.titles if not wiki.in_category(n, CATEGORY)][::15]
        return sorted(members + others)

    return ev.load_corpus(corpora / "wikispeedia", subset=subset)


def test_pu_ensemble_learns_the_topic_from_20_positives_without_negatives(corpus):
    rows = {
        r.method: r
        for r in ev.evaluate_category(corpus, CATEGORY, ["space", "astronomy"], n_negatives=100)
    }
    assert set(rows) == set(ev.METHODS)
    assert all(0.0 <= r.f1 <= 1.0 for r in rows.values())
    # a quality floor on the slice (topic share about 25%: a constant "relevant" scores F1 0.4)
    assert rows["pu-ensemble"].f1 >= 0.6
    assert rows["svm-true-neg"].f1 >= 0.6
    assert "| Science.Physics.Space_Astronomy |" in ev.format_table(list(rows.values()))


def test_guarded_adaptation_keeps_the_profile_near_the_original(corpus):
    rows = {r["profile"]: r for r in ex.drift(corpus, CATEGORY, ["space", "astronomy"], pages=300)}
    assert rows["static"]["sim to original"] == pytest.approx(1.0)
    assert rows["guarded"]["new share"] <= 0.3 + 1e-9
    assert rows["guarded"]["sim to original"] >= rows["unguarded"]["sim to original"]
