from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.index import PageIndex, QueryError, parse_query
from focuscrawl.index.query import MAX_QUERY_CHARS, MAX_TERMS, match_expression


@pytest.fixture(scope="module")
def index() -> PageIndex:
    ix = PageIndex.open(":memory:")
    ix.upsert(
        "http://t/eagle",
        "Bald eagle",
        "The bald eagle is a bird of prey. Eagles eat fish.",
        relevance=0.9,
    )
    ix.upsert(
        "http://t/owl", "Owl", "Owls hunt at night; an owl is a bird of prey too.", relevance=0.8
    )
    ix.upsert("http://t/moscow", "Москва", "Москва — столица России.", relevance=0.5)
    ix.upsert("http://t/tokyo", "東京", "東京 は 日本 の 首都", relevance=0.5)
    ix.upsert(
        "http://t/quote",
        'He said "NEAR"',
        "AND OR NOT NEAR title:body ^start (group) col*",
        relevance=0.4,
    )
    ix.commit()
    return ix


def urls(ix: PageIndex, q: str) -> list[str]:
    return [h.url for h in ix.search(q).hits]


@pytest.mark.parametrize("q", ["", "   ", "\t\n", "\x00"])
def test_empty_query_is_a_clear_error(index: PageIndex, q: str) -> None:
    with pytest.raises(QueryError, match="empty|no searchable"):
        index.search(q)


@pytest.mark.parametrize("q", ['"', '""', "***", "()", "-", ":^", "'; --"])
def test_punctuation_only_is_a_clear_error(index: PageIndex, q: str) -> None:
    with pytest.raises(QueryError, match="no searchable words"):
        index.search(q)


def test_too_long_and_too_many_terms_are_clear_errors(index: PageIndex) -> None:
    with pytest.raises(QueryError, match="too long"):
        index.search("eagle " * (MAX_QUERY_CHARS // 6 + 1))
    with pytest.raises(QueryError, match="too many words"):
        index.search(" ".join(f"w{i}" for i in range(MAX_TERMS + 1)))


@pytest.mark.parametrize(
    "q",
    [
        'eagle" OR "owl',
        "eagle OR owl",
        "NEAR(eagle owl)",
        "title:eagle",
        "^eagle",
        "eagle)",
        "(eagle",
        "ea*gle",
        "x'; DROP TABLE pages; --",
        'x"); DELETE FROM pages; --',
        "{title body}: eagle",
        "eagle -owl +fish",
    ],
)
def test_fts_and_sql_syntax_is_searched_as_words(index: PageIndex, q: str) -> None:
    before = len(index)
    index.search(q)  # no sqlite3 error
    assert len(index) == before
    assert "http://t/eagle" in index


def test_operators_are_literal_words(index: PageIndex) -> None:
    # "OR" is a word to match, not an operator: only the page that contains "or" matches
    assert urls(index, "eagle OR owl") == urls(index, '"eagle" "or" "owl"')
    assert urls(index, "NEAR AND NOT") == ["http://t/quote"]  # "and", "not": stop words
    # "title:eagle" is the two words title and eagle, not a column filter
    assert urls(index, "title:body") == ["http://t/quote"]


def test_phrase_prefix_and_and_or_fallback(index: PageIndex) -> None:
    assert set(urls(index, '"bird of prey"')) == {"http://t/eagle", "http://t/owl"}
    assert urls(index, '"prey bird"') == []
    assert urls(index, "eag*") == ["http://t/eagle"]
    res = index.search("fish night")  # no page holds both: OR fallback
    assert res.mode == "or"
    assert {h.url for h in res.hits} == {"http://t/eagle", "http://t/owl"}
    assert index.search("eagle fish").mode == "and"


def test_stop_words_dropped_unless_alone_or_in_a_phrase() -> None:
    assert match_expression(parse_query("the eagle of the sea"), "and") == '"eagle" AND "sea"'
    assert match_expression(parse_query("the"), "and") == '"the"'
    assert match_expression(parse_query('"bird of prey" of'), "and") == '"bird of prey"'


def test_non_latin_scripts(index: PageIndex) -> None:
    assert urls(index, "Москва") == ["http://t/moscow"]
    assert urls(index, "МОСКВА") == ["http://t/moscow"]
    assert urls(index, "東京") == ["http://t/tokyo"]
    assert urls(index, "مرحبا") == []


def test_match_expression_only_holds_quoted_words() -> None:
    expr = match_expression(parse_query('a (c) NEAR dd* d* "e f" a'), "and")
    assert expr == '"c" AND "near" AND "dd"* AND "d" AND "e f"'  # "a": a stop word
    # a quote inside a word opens a phrase; an unclosed quote runs to the end
    assert match_expression(parse_query('x"y z'), "or") == '"x" OR "y z"'


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_results_or_a_query_error(text: str) -> None:
    ix = _fuzz_index()
    try:
        res = ix.search(text)
    except QueryError as exc:
        assert str(exc)
    except sqlite3.Error as exc:  # pragma: no cover - the failure this test exists for
        pytest.fail(f"SQL error for {text!r}: {exc}")
    else:
        assert all(h.url.startswith("http://f/") for h in res.hits)
    assert len(ix) == 2


_FUZZ: list[PageIndex] = []


def _fuzz_index() -> PageIndex:
    if not _FUZZ:
        ix = PageIndex.open(":memory:")
        ix.upsert("http://f/1", "One", "alpha beta gamma δέλτα 東京 ÆØÅ naïve café")
        ix.upsert("http://f/2", "Two", 'beta gamma "quoted" (paren) col:on ^caret')
        _FUZZ.append(ix)
    return _FUZZ[0]
