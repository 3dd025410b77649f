"""The cosine model's numpy page path (fastcosine.py) against its pure path (regex + dicts)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from focuscrawl.blocks.partition import partition
from focuscrawl.relevance.adaptive import AdaptiveCosineModel
from focuscrawl.relevance.cosine import CosineModel, DocumentFrequencies
from focuscrawl.relevance.fastcosine import token_spans
from focuscrawl.relevance.fastscore import codepoints
from focuscrawl.text import _WORD, tokens
from tests.relevance_pages import web

ODD_TEXTS = [
    "The owl's nest — an OWL, a heron; x y 3d _a naïve-ly ’quoted’ 12 of-the",
    "(bird) bird. BIRD 1999 birds— e-mail u.s.a. 3heron heron3 ... -- '' __init__ a_b_ x1_",
    "ΟΔΟΣ οδός\u00a0heron\u3000nest İstanbul naïve cafe\u0301 鳥 bird\u2029egg ²nd x² Ⅻ ①",
    "don't -bird- 'heron' bird's-eye owl-- --owl ’’ ’a’ a’ b- -c _d_ 9a a9 ٣٤ab ab٣ ʼn",
    "   \t\n\u200b\u2028 ",
    "",
    "1234 5678 !!! --- ___",
    "日本語のテキスト 鳥類 ไทย ภาษา العربية الطيور हिन्दी पक्षी",
    "ﬁsh ß STRASSE ǅemal \U0001d400\U0001d401 \U00020000x \udc80bird",
]

ODD_PAGES = [
    "<html><head><title>HERON, heron; “Heron” ΣΟΦΟΣ</title></head><body><h1>Owl's nest!</h1>"
    "<p>(bird) bird. BIRD 1999 birds— e-mail u.s.a. 3heron heron3 ... -- ''</p>"
    "<ul><li><a href='/a'>Nest</a></li><li><a href='/b'>feather, wing</a></li></ul></body></html>",
    "<html><body><p>ΟΔΟΣ οδός\u00a0heron\u3000nest İstanbul naïve cafe\u0301 鳥 bird\u2029egg</p>"
    "</body></html>",
    "<html><body><p>   </p></body></html>",
    "<html><head><title>bird bird</title></head><body><p>1234 !!! ---</p></body></html>",
    "<html><body><p>日本語 鳥類 ไทย العربية الطيور हिन्दी पक्षी bird's-eye don't</p></body></html>",
]


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_token_spans_are_the_regex_matches(text):
    low = text.lower()
    starts, ends = token_spans(codepoints(low))
    found = [low[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    assert found == _WORD.findall(low)


def test_token_spans_on_every_short_string_of_tricky_characters():
    alphabet = "a1_'’- .é٣²Ⅻ\u0301鳥"
    rng = random.Random(0)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        starts, ends = token_spans(codepoints(text))
        found = [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        assert found == _WORD.findall(text), text


def _stream():
    pages = [partition(h, u) for ps in web(25, seed=4).values() for u, h in ps]
    pages += [partition(h, f"http://x.test/odd{i}") for i, h in enumerate(ODD_PAGES)]
    random.Random(1).shuffle(pages)
    return pages


@pytest.mark.parametrize("adaptive", [False, True])
def test_fast_scores_equal_the_pure_path_through_a_crawl(adaptive):
    """Score and observe pages one by one as the crawl does: the numpy path and the pure path
    give the same scores (1e-9) and the same document frequencies, while the IDF cache refreshes
    and (adaptive) the profile changes."""
    keywords = ["bird feather nest heron"]

    def make():
        if adaptive:
            return AdaptiveCosineModel(
                keywords, ODD_TEXTS[:3], min_relevance=0.05, min_ratio=0.0, update_every=3
            )
        return CosineModel(keywords, ODD_TEXTS[:3])

    fast, pure = make(), make()
    pure.fast = False
    scored = 0
    for page in _stream() * 2:
        a, b = fast.score_page(page), pure.score_page(page)
        assert fast._page_terms(page) is not None and pure._page_terms(page) is None
        assert abs(a - b) <= 1e-9, (page.url, a, b)
        assert fast.score_page_counts(page) == pytest.approx(b, abs=1e-9)
        scored += a > 0
        fast.observe(page, a)
        pure.observe(page, b)
        text = page.title + " " + page.main_text[:80]
        assert abs(fast.score_text(text) - pure.score_text(text)) <= 1e-9
    assert scored > 20 and fast.dfs.version > 10  # pages with terms; several IDF refreshes
    assert fast.dfs.df == pure.dfs.df and fast.dfs.n_docs == pure.dfs.n_docs
    if adaptive:
        assert fast.added and fast.added == pure.added


def test_fast_path_declines_and_a_colliding_table_falls_back(monkeypatch):
    from focuscrawl.relevance import fastcosine

    page = partition(ODD_PAGES[0], "http://x.test/a")
    model = CosineModel(["heron"])
    reference = model.score_page_counts(page)
    assert reference > 0
    monkeypatch.setattr(fastcosine, "MAX_CODEPOINTS", 10)  # a "huge" page
    assert model._page_terms(page) is None
    assert model.score_page(page) == reference
    monkeypatch.undo()
    model._fast_last = None
    model.dfs.table.usable = False  # as after two terms with one hash
    assert model._page_terms(page) is None and model.score_page(page) == reference


def test_document_frequencies_pickled_before_the_term_table_load():
    dfs = DocumentFrequencies()
    for text in ODD_TEXTS:
        dfs.add(tokens(text))
    old = {"n_docs": dfs.n_docs, "refresh": dfs.refresh, "_cache_docs": dfs._cache_docs}
    old |= {"df": dfs.df, "_cache": {"heron": dfs.idf("heron")}}
    restored = DocumentFrequencies.__new__(DocumentFrequencies)
    restored.__setstate__(old)
    assert restored.df == dfs.df and restored.idf("heron") == dfs.idf("heron")
    assert restored.idf("owl") == dfs.idf("owl")
    assert isinstance(restored.df, Counter) and np.all(restored._df[: len(restored.terms)] >= 0)


def test_the_bmp_class_table_is_the_start_of_the_full_one():
    from focuscrawl.relevance.fastcosine import _BMP, LETTER, classes

    full = classes()
    assert np.array_equal(classes(_BMP), full[:_BMP])
    assert full[0x1D400] == LETTER and full[ord("a")] == LETTER and full[ord("_")] != LETTER
