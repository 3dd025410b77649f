"""Hostile pages: the partition's work is linear in the page or capped, and every cap is recorded.

The pages come from ``focuseval.hostile_pages``, at sizes where the code before
issue 14 needed minutes or gigabytes (said per page below); each partitions here in well under
a second. Nothing is timed: the tests check what comes out, and ``Page.cuts``. A page fixed by
a linear algorithm is read whole (no cut); a page past a budget says which.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

import pytest
from focuseval import hostile_pages as hp
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.blocks import Page, caches, css, kind, markup, partition, rules, segment, survey
from focuscrawl.blocks.sheet import Braces, strip_at_rules, strip_comments

partition_module = importlib.import_module("focuscrawl.blocks.partition")
URL = "http://example.org/hostile"

# name -> (the page at its test size, the cuts it must record). Before issue 14 (measured by
# bench/bench_hostile_partition.py on the code of then, compiled walk):
CASES: dict[str, tuple[Callable[[], str], set[str]]] = {
    # rule splitting copied the rest of the sheet per rule: 4,000 rules 209 MB, 40,000 past 4 GB
    "css_unclosed_rules": (lambda: hp.css_unclosed_rules(20_000), {"css"}),
    # backtracking regexes: more than 30 s (stopped there), at the sizes
    "css_open_comments": (lambda: hp.css_open_comments(150_000), set()),
    "css_at_signs": (lambda: hp.css_at_signs(300_000), set()),
    "css_nested_at_rules": (lambda: hp.css_nested_at_rules(50_000), set()),
    "css_many_rules": (lambda: hp.css_many_rules(30_000), {"css"}),
    "css_many_selectors": (lambda: hp.css_many_selectors(50_000), {"css"}),
    "css_long_selector": (lambda: hp.css_long_selector(100_000), {"css"}),
    "many_style_elements": (lambda: hp.many_style_elements(10_000), {"css"}),
    "css_hidden_names": (lambda: hp.css_hidden_names(6_000), {"css"}),
    # libxml2's duplicate check: 20,000 attributes 1 s, 100,000 more than 30 s
    "many_attributes": (lambda: hp.many_attributes(100_000), {"attributes"}),
    "many_classes": (lambda: hp.many_classes(100_000), set()),
    "long_class_name": (lambda: hp.long_class_name(1_000_000), set()),
    "huge_inline_style": (lambda: hp.huge_inline_style(1_000_000), set()),
    "deep_nesting": (lambda: hp.deep_nesting(100_000), {"elements", "depth"}),
    "deep_inline_nesting": (lambda: hp.deep_inline_nesting(10_000), {"depth"}),
    "many_links": (lambda: hp.many_links(20_000), {"links"}),
    "many_elements": (lambda: hp.many_elements(300_000), {"elements"}),
    # a sentence check per short sibling read every segment: 50,000 siblings 7.7 s
    "many_paragraphs": (lambda: hp.many_paragraphs(50_000), set()),
    # list.index per cleaned sibling, on every attempt: 20,000 lists 22 s, 50,000 over 30 s
    "many_lists": (lambda: hp.many_lists(30_000), set()),
    # the growing word copied per piece: 90,000 pieces 8 GB copied (0.7 s), 10x as many 100x
    "glued_word": (lambda: hp.glued_word(90_000), set()),
    # each of 120 nested anchors held the whole 100,000-word text (0.9 s, +64 MB)
    "nested_links": (lambda: hp.nested_links(120, 100_000), {"text"}),
    "nested_empty_links": (lambda: hp.nested_empty_links(120, 50_000), set()),
    "giant_word": (lambda: hp.giant_word(11_000_000), {"text"}),
    "giant_text": (lambda: hp.giant_text(2_000_000), set()),
    "many_text_nodes": (lambda: hp.many_text_nodes(150_000), {"elements"}),
    # the main regions (issue 15): the first rules.MAX_MAIN_REGIONS, each climb bounded
    "many_mains": (lambda: hp.many_mains(90_000), set()),
}


def test_every_hostile_page_has_a_case() -> None:
    assert set(CASES) == set(hp.HOSTILE_PAGES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_page_partitions_with_its_cuts(name: str) -> None:
    make, cuts = CASES[name]
    page = partition(make(), URL)
    assert isinstance(page, Page) and page.error == ""
    assert set(page.cuts) == cuts
    assert all(amount >= 1 for amount in page.cuts.values())
    # What comes before the hostile part is still read, as main text (but where the article
    # is the long paragraph beside the short ones).
    assert hp.LEAD_TEXT in (page.text if name == "many_paragraphs" else page.main_text)
    assert len(page.links) <= rules.MAX_LINKS_PER_PAGE


def test_an_ordinary_page_has_no_cuts() -> None:
    page = partition(hp.ordinary_page(500_000), URL)
    assert page.cuts == {} and "Albatross colonies" in page.main_text
    assert len(page.links) > 1000


def test_links_past_the_budget_are_counted_and_still_link_text() -> None:
    html = hp.many_links(2_000)
    whole = partition(html, URL, max_links=10_000)
    cut = partition(html, URL, max_links=100)
    assert len(whole.links) == 2_000 and whole.cuts == {}
    assert [link.url for link in cut.links] == [link.url for link in whole.links[:100]]
    assert cut.cuts == {"links": 1_900}
    # the classifier saw the same link text: the same blocks, kinds and weights
    assert [(b.kind, b.weight, b.text) for b in cut.blocks] == [
        (b.kind, b.weight, b.text) for b in whole.blocks
    ]


def test_anchors_are_cut_to_their_budget() -> None:
    page = partition(hp.nested_links(120, 5_000), URL)
    assert len(page.links) == 120 and page.cuts == {"text": 120}
    assert all(len(link.anchor.split()) == rules.MAX_ANCHOR_WORDS for link in page.links)


def test_a_glued_word_is_one_word() -> None:
    page = partition(hp.glued_word(5_000), URL)
    assert "ab" * 5_000 in page.main_text.split()


def test_the_walk_stops_at_its_element_budget_with_what_came_before() -> None:
    root, _ = partition_module.parse(hp.many_links(300))
    for walk in (segment.walk_python, segment.compiled_walk):
        if walk is None:
            continue
        w = walk(root, css.StyleRules(), 3, 1_000, 150)
        assert w.cuts == {"elements": 1}
        assert 0 < len(w.links) < 150 and w.links[0].href == "/l0"
        assert all(f.post >= f.pre for f in w.frames)  # every open frame was closed
        assert " ".join(w.words).startswith("The wandering albatross")


def test_caches_keep_no_giant_values() -> None:
    partition(hp.long_class_name(100_000), URL)
    assert all(len(c) + len(i) <= caches.CACHED_VALUE_CHARS for c, i in caches.pair_cache)
    assert all(len(v) <= caches.CACHED_VALUE_CHARS for v in caches.attr_cache)


# ---- the compiled code and the pure-Python reference agree on hostile pages -----------------

SMALL: dict[str, Callable[[], str]] = {
    "css_unclosed_rules": lambda: hp.css_unclosed_rules(6_000),
    "css_hidden_names": lambda: hp.css_hidden_names(600),
    "many_attributes": lambda: hp.many_attributes(1_000),
    "deep_nesting": lambda: hp.deep_nesting(1_000),
    "many_links": lambda: hp.many_links(6_000),
    "many_paragraphs": lambda: hp.many_paragraphs(2_000),
    "many_lists": lambda: hp.many_lists(2_000),
    "glued_word": lambda: hp.glued_word(2_000),
    "nested_links": lambda: hp.nested_links(100, 1_200),
    "nested_empty_links": lambda: hp.nested_empty_links(100, 500),
    "many_text_nodes": lambda: hp.many_text_nodes(3_000),
    "many_mains": lambda: hp.many_mains(3_000),
}


def _dump(page: Page) -> Any:
    links = [tuple(getattr(x, n) for n in x.__slots__) for x in page.links]
    blocks = [(b.id, b.kind, b.text, b.weight, b.tag, b.noise_cue) for b in page.blocks]
    return page.title, page.error, page.cuts, blocks, links, page.labels, page.kind


@pytest.mark.skipif(segment.compiled_walk is None, reason="compiled walk not built")
@pytest.mark.parametrize("name", sorted(SMALL))
def test_compiled_and_python_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    html = SMALL[name]()
    budgets = {"max_elements": 5_000, "max_links": 1_000}
    monkeypatch.setattr(rules, "MAX_ELEMENTS", budgets["max_elements"])
    fast = _dump(partition(html, URL, max_links=budgets["max_links"]))
    monkeypatch.setattr(partition_module, "walk", segment.walk_python)
    monkeypatch.setattr(partition_module, "survey", survey.survey_python)
    monkeypatch.setattr(kind, "_names_mask_impl", [kind.names_mask_python])
    monkeypatch.setattr(partition_module, "_compiled_assemble", None)
    monkeypatch.setattr(css, "_cue_starts_impl", css.cue_starts_python)
    monkeypatch.setattr(markup, "_impl", markup.markup_cuts_python)
    css._sheet_cache.clear()
    slow = _dump(partition(html, URL, max_links=budgets["max_links"]))
    css._sheet_cache.clear()
    assert fast == slow


_markup = st.lists(
    st.one_of(
        st.sampled_from(["<div", "<p", "<a", "</div", "</p", "<script>", "</script>",
                         "<style>", "</style ", "<title>", "</title>", "<plaintext>", "<!--",
                         "-->", "--!>", "<!-->", "<!x", "<?", "</", "</>", "<", ">", "/", "/>",
                         " ", "\t", "=", '"', "'", "a", "b=", "c=x", 'd="v"', "e='w'", "<A",
                         "<SCRIPT>", "</Script>", "<xmp>", "</xmp>"]),
        st.text(max_size=3),
    ),
    max_size=80,
).map("".join)  # fmt: skip


@pytest.mark.skipif(segment.compiled_walk is None, reason="compiled walk not built")
@settings(max_examples=300, deadline=None)
@given(_markup, st.integers(0, 3), st.integers(0, 6))
def test_compiled_markup_scan_is_the_reference(text: str, attrs: int, elements: int) -> None:
    from focuscrawl.blocks._cwalk import markup_cuts

    assert markup_cuts(text, attrs, elements) == markup.markup_cuts_python(text, attrs, elements)


def test_markup_cuts_follow_the_tokenizer() -> None:
    cut = markup.cap_markup
    assert cut('<div a b c d e="x>y" f>t</div>', 3, 10) == ("<div a b c >t</div>", 3, False)
    assert cut("<!-- <div a b c d> --><p>x", 1, 10)[1] == 0  # in a comment
    assert cut("<style><div a b c d></style><p a b>", 1, 10) == ("<style><div a b c d></style><p a >", 1, False)  # fmt: skip
    assert cut("<p>1<p>2<p>3", 5, 2) == ("<p>1<p>2", 0, True)
    page = "<p>ordinary</p>"
    assert cut(page, 5, 5)[0] is page  # uncut: the same object, no copy


# ---- style sheet text: linear and, on well-formed CSS, as before -----------------------------

_OLD_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_css = st.lists(
    st.sampled_from(["/*", "*/", "*", "/", "a", " ", "{", "}", ";", "@media x", "@import y",
                     "@", ".c", "display:none"]),
    max_size=40,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_css)
def test_comments_go_as_the_lazy_regex_took_them(text: str) -> None:
    assert strip_comments(text) == _OLD_COMMENT.sub("", text)


def test_at_rules_go_whole() -> None:
    sheet = (
        "@import url(x);.a{color:red}@media (x){.b{display:none}.c{float:left}}.d{}@charset 'u';"
    )
    assert strip_at_rules(sheet) == ".a{color:red}}.d{}"
    assert strip_at_rules("@supports x{@media y{.a{b:c}}}.e{}") == "}.e{}"  # any depth
    assert strip_at_rules(".a{x:@}.b{}") == ".a{x:@}.b{}"  # not an at-rule
    assert strip_at_rules(".a{}@media x{.b{" + "{" * 10) == ".a{}}"  # unclosed: to the end


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}ab", max_size=40), st.lists(st.integers(0, 41), max_size=30))
def test_braces_answer_as_find_does(text: str, positions: list[int]) -> None:
    braces = Braces(text)
    for pos in positions + sorted(positions):
        for ch in "{}":
            assert braces.after(ch, pos) == text.find(ch, pos)
            assert braces.before(ch, pos) == text.rfind(ch, 0, pos)
