"""The compiled walk (``_cwalk.pyx``) gives the same Page as the pure-Python walk.

``pip install -e .`` builds it (setup.py); CI must have it, so its absence fails here unless
``FOCUSCRAWL_PURE_PYTHON=1`` says a pure-Python install is meant.
"""

from __future__ import annotations

import importlib
import os
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from focuseval import extraction as ev
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from focuscrawl.blocks import Page, caches, css, kind, rules, segment, sheet, survey
from focuscrawl.strategy.compiled import cjudge

partition_module = importlib.import_module(
    "focuscrawl.blocks.partition"
)  # the module, not the function

compiled = segment.compiled_walk


def test_compiled_walk_is_built() -> None:
    if os.environ.get("FOCUSCRAWL_PURE_PYTHON") == "1":
        pytest.skip("FOCUSCRAWL_PURE_PYTHON=1: pure-Python install")
    assert compiled is not None, "focuscrawl/blocks/_cwalk.pyx not built: pip install -e ."
    assert segment.walk is compiled


needs_compiled = pytest.mark.skipif(compiled is None, reason="compiled walk not built")


def _dump(page: Page) -> Any:
    def link(x: Any) -> tuple[Any, ...]:
        return tuple(getattr(x, name) for name in x.__slots__)

    blocks = [(b.id, b.kind, b.text, b.weight, b.tag, b.noise_cue, [link(x) for x in b.links])
              for b in page.blocks]  # fmt: skip
    return (page.title, page.base_url, page.error, page.headings, blocks,
            [link(x) for x in page.links], page.kind, page.kind_confidence,
            page.labels)  # fmt: skip


def _clear_caches() -> None:
    caches.attr_cache.clear()
    caches.pair_cache.clear()
    css._sheet_cache.clear()


def _both(html: str | bytes, url: str, **kw: Any) -> tuple[Any, Any]:
    """The page by the compiled code, then by the pure-Python code (every compiled part off)."""
    _clear_caches()
    fast = _dump(partition_module.partition(html, url, **kw))
    _clear_caches()  # the class/id and sheet caches are shared: the Python run fills its own
    with pytest.MonkeyPatch.context() as m:
        m.setattr(partition_module, "walk", segment.walk_python)
        m.setattr(partition_module, "survey", survey.survey_python)
        m.setattr(kind, "_names_mask_impl", [kind.names_mask_python])
        m.setattr(partition_module, "_compiled_assemble", None)
        m.setattr(css, "_cue_starts_impl", css.cue_starts_python)
        m.setattr(partition_module, "_compiled_utf8_valid", None)  # bodies go through str
        slow = _dump(partition_module.partition(html, url, **kw))
    _clear_caches()
    return fast, slow


CASES = [
    "",
    "<p>one</p>",
    "<html><body><div class='content'><p>Some text, with commas, and words.</p>"
    "<p>More <a href='/x'>link</a> text<b>glued</b>on.</p></div>"
    "<nav><a href='/a'>A</a> <a href='/b'>B</a></nav></body></html>",
    "<style>.ad{display:none} #side{float:left} aside.promo{position:fixed}</style>"
    "<div class='ad'>hidden ad <a href='http://ads.example/'>x</a></div>"
    "<div id='side'>menu <a href='/m'>m</a></div><p class='promo'>p</p>",
    "<div style='display:none'>h</div><div hidden>h2</div><div aria-hidden=true>h3</div>",
    # inline styles read by the compiled cue scan: case, Unicode whitespace, the Kelvin sign,
    # U+0130, a declaration starting inside another, values that are no cue
    "<div style='DISPLAY :\u00a0NONE'>a</div><div style='position:stic\u212ay'>b</div>"
    "<div style='position:fixedisplay:none'>c</div><div style='float: none'>d</div>"
    "<div style='visibility:visible;display:block'>e</div><div style='d\u0130splay:none'>f</div>"
    "<div style='x:none;visibility\t:\nHIDDEN'>g</div><div style='float:right'>h</div>",
    "<a href='/img'><img alt='An image' src='x.png'></a><a href='/t' title=' Title  here '></a>",
    # links without words: title, aria-label, else the first img's alt or title within 100
    "<a href='/1' title='' aria-label=' Aria\tlabel '><img alt='no'></a>"
    "<a href='/2'><span><b></b><img title='deep  title'></span><img alt='second'></a>"
    "<a href='/3'>" + "<i></i>" * 99 + "<img alt='the 100th'></a>"
    "<a href='/4'>" + "<i></i>" * 100 + "<img alt='the 101st'></a>"
    "<a href='/5'><svg><image alt='not img'></image></svg><IMG ALT='Upper'></a><a href='/6'></a>",
    "<frameset><frame src='/f1'><frame src='http://o.example/f2'></frameset>",
    "<map><area href='/area' alt='x'></map><a href='javascript:void(0)'>js</a>"
    "<a href='#top'>top</a><a href='mailto:x@y'>m</a><a rel='nofollow' href='/nf'>nf</a>",
    "<base href='http://other.example/dir/'><a href='rel/page'>r</a>",
    "<table><tr><td>cell one, two</td><td><a href='/c'>cell link</a></td></tr></table>",
    "<ul><li>a<li>b<li><a href='/l'>l</a></ul><select><option>o1<option>o2</select>tail",
    "<p>x<!-- c -->y<script>var a = '<b>';</script>z<?pi x?>w</p>",
    "<p>caf\u00e9 \u00a0 na\u00efve\u2003wide\u3000space \u4e2d\u6587</p><p>\x1c\x1d</p>",
    "<svg><a href='/in-svg'>s</a></svg><math><mi>x</mi></math>text<br>after",
    "<div>" * 300 + "deep <a href='/deep'>d</a>" + "</div>" * 300,
    "<p>" + "word " * 2000 + "</p>" + "<a href='/n{0}'>n{0}</a>" * 50,
    "<fb:like href='/fb'>ns</fb:like><o:p>office</o:p>",
    b"\xef\xbb\xbf<p>bom page <a href='/b'>b</a></p>",
    b"<meta charset='iso-8859-1'><p>caf\xe9</p>",
    # bodies parsed as they are, or not (partition._parsed_as_is): the same page either way
    "<p>caf\u00e9 \U0001f600 \u4e2d</p>".encode(),
    b"\xc2\xa0\xe3\x80\x80",  # only whitespace to str.isspace: an empty page
    b"\x1c\x1d \n",
    b" \xc2\xa0<p>after a no-break space</p>",
    b"<p>not UTF-8: caf\xe9</p>",
    b"<p>a surrogate \xed\xa0\x80 and a cut \xe2\x82</p>",
    b"<p a b c d e f g h i j k l>" + "\u00e9".encode() * 10 + b"</p>",
    b"<p>NUL\x00 inside</p>",
    "<div role=' Dialog ' aria-modal='true'><p>Update your browser, please.</p></div>"
    "<div role='navigation'><a href='/n'>n</a></div><div aria-modal='true'>m</div>"
    "<div class='reviews'><p>Great shelf, five stars.</p></div><p role='alert'>oops</p>",
    # issue 15: the main regions and their ancestors are not unlikely by name
    "<div class='page_frame with_header'><header><a href='/h'>h</a></header><div class='footer'>"
    "<main class='sidebar'><span class='comment'>in main</span><p class='price'>$1</p></main>"
    "</div><div class='footer'>f</div></div><div class='ad' role='MAIN '>ad main</div>"
    "<span class='footer'><div role='navigation' class='x'><main>nav main</main></div></span>",
    "<div class='footer'>" + "<main class='footer'>m</main>" * 20 + "</div>",
    "<div class='sidebar'>" * 300 + "<main>deep</main>" + "</div>" * 300,
    "<div class='page-header'><header><ul class='megamenu'><li><main class='x'>misparsed"
    "</main></li></ul></header></div><div class='footer'><main>kept</main></div>",
]


@needs_compiled
@pytest.mark.parametrize("html", CASES, ids=range(len(CASES)))
def test_hand_made_pages_are_identical(html: str | bytes) -> None:
    fast, slow = _both(html, "http://example.org/a/b")
    assert fast == slow


@needs_compiled
@pytest.mark.parametrize("levels,window", [(0, 20), (1, 5), (3, 0), (50, 100)])
def test_context_parameters_are_identical(levels: int, window: int) -> None:
    fast, slow = _both(CASES[2] + CASES[9], "http://example.org/",
                       context_levels=levels, context_words=window)  # fmt: skip
    assert fast == slow


TAGS = ["div", "p", "a", "table", "td", "ul", "li", "span", "nav", "b", "script", "style",
        "frame", "base", "br", "img", "svg", "h2", "aside", "option"]  # fmt: skip
_fragment = st.one_of(
    st.sampled_from(TAGS).map(lambda t: f"<{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"</{t}>"),
    st.sampled_from(['<a href="/x">', '<a href="', '" class="nav">', ' class="content">',
                     ' style="display:none">', ' id="sidebar">', "<!--", "-->", "&amp;", ",",
                     " ", "\n", "\u00a0", '<img alt="pic">', '<div style="float:left">']),
    st.text(max_size=12),
)  # fmt: skip


@needs_compiled
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_fragment, max_size=60).map("".join))
def test_random_markup_is_identical(html: str) -> None:
    fast, slow = _both(html, "http://example.org/a/b")
    assert fast == slow


@needs_compiled
@pytest.mark.corpus
@pytest.mark.parametrize("corpus", sorted(ev.CORPORA))
def test_corpus_pages_are_identical(corpora: Path, corpus: str) -> None:
    for case in islice(ev.CORPORA[corpus](corpora), 25):
        fast, slow = _both(case.html, case.url)
        assert fast == slow, case.name


_css_text = st.lists(
    st.one_of(
        st.sampled_from(["display", "visibility", "float", "position", ":", " ", "\n", "\u00a0",
                         "none", "hidden", "left", "right", "fixed", "absolute", "sticky", ";",
                         "{", "}", "dis", "play", "\u2003", "ſ"]),
        st.text(max_size=4),
    ),
    max_size=40,
).map("".join)  # fmt: skip


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_css_text)
def test_cue_scan_is_the_regex(text: str) -> None:
    from focuscrawl.blocks._cwalk import cue_starts

    assert cue_starts(text) == css.cue_starts_python(text)


_class_value = st.lists(
    st.one_of(st.sampled_from(sorted(caches.WORD_TABLE)), st.text(max_size=5)), max_size=8
).map("".join)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_class_value)
def test_class_words_match_the_regex(value: str) -> None:
    from focuscrawl.blocks._cwalk import feature_info

    _clear_caches()
    fast = feature_info(value)
    _clear_caches()
    assert fast == caches.feature_info(value)
    _clear_caches()


@needs_compiled
@pytest.mark.parametrize("html", CASES[:6] + CASES[8:9] + CASES[14:15] + CASES[-3:], ids=range(11))
def test_survey_is_the_python_one(html: str | bytes) -> None:
    from focuscrawl.blocks._cwalk import survey as compiled_survey

    page = "<html><head><title> T  x </title><base href=' /b/ '><style>p{}</style></head>"
    kinds = (
        "<meta property='og:type' content=' Product '><meta name='og:type' content='x'>"
        '<script type=\'Application/LD+JSON\'>{"@type": "Product"}</script><script>1</script>'
        "<div itemtype='https://schema.org/Offer  x/Y' class='a price-tag'><pre>c</pre></div>"
        "<article><time>t</time><h2><a href='/1'>one</a></h2><a href='/2'><h3>two</h3></a>"
        "<h4>no <b><a href='/3'>deeper</a></b></h4><form class='pricey'></form></article>"
    )
    for text in (html, page + str(html), page + kinds + str(html)):
        root = partition_module.parse_html(text if isinstance(text, str) else text.decode())
        if root is None:
            continue
        assert compiled_survey(root) == survey.survey_python(root)
    root = partition_module.parse_html(page + kinds)
    assert root is not None
    signals = compiled_survey(root).signals
    assert (signals.pre, signals.article, signals.time, signals.form) == (1, 1, 1, 1)
    assert (signals.linked_headings, signals.prices) == (2, 2)
    assert signals.og_types == (" Product ", "x")
    assert signals.itemtypes == ("https://schema.org/Offer  x/Y",)
    assert signals.json_ld == ('{"@type": "Product"}',)


@needs_compiled
def test_survey_finds_the_fact_meta_elements() -> None:
    """The compiled survey collects the <meta>/<link> elements that may declare product facts
    (what ``structured`` used to search the tree for with an XPath), in document order."""
    from focuscrawl.blocks._cwalk import survey as compiled_survey

    html = (
        "<html><head><meta property='og:title' content='no'>"
        "<meta property='product:price:amount' content='9.90'>"
        "<meta property='og:availability' content='instock'><link rel='x' href='/no'></head>"
        "<body><div itemscope><meta itemprop='price' content='9.90'>"
        "<link itemprop='availability' href='https://schema.org/InStock'>"
        "<span itemprop='name'>span, not meta</span><meta itemprop=''></div></body></html>"
    )
    root = partition_module.parse_html(html)
    assert root is not None
    found = compiled_survey(root).fact_meta
    assert found == survey.survey_python(root).fact_meta
    assert [(el.tag, el.get("property") or el.get("itemprop")) for el in found] == [
        ("meta", "product:price:amount"),
        ("meta", "og:availability"),
        ("meta", "price"),
        ("link", "availability"),
        ("meta", ""),
    ]
    many = "<html><body>" + "<meta itemprop='sku' content='s'>" * (survey.MAX_FACT_META + 5)
    root = partition_module.parse_html(many + "</body></html>")
    assert root is not None
    assert len(compiled_survey(root).fact_meta) == survey.MAX_FACT_META


_KIND_WORD_TEXT = st.lists(
    st.sampled_from([*"-_ acdeioprstuvwxz", "é", "\u212a", "\U0001f600"])
    | st.sampled_from([w for w, _, _ in rules.NAME_KIND_EVIDENCE]),
    max_size=40,
).map("".join)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_KIND_WORD_TEXT)
def test_kind_word_mask_is_the_python_one(text: str) -> None:
    from focuscrawl.blocks._cwalk import kind_word_mask

    assert kind_word_mask(text) == kind.word_mask_python(text)
    assert kind_word_mask("x-product-price-y") == kind.word_mask_python("x-product-price-y") != 0
    # words inside, overlapping and ending other words (the automaton's failure links)
    for name in (
        "search-results-products-gridpricing",
        "pproduct-product-listinglisting",
        "post-bodypostbodytopic-post-stream",
        "PRODUCT-ITEMS-GRID",
        "docsdocumentation",
    ):
        assert kind_word_mask(name.lower()) == kind.word_mask_python(name.lower()) != 0


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_KIND_WORD_TEXT, st.sampled_from(["PRICE", "Add-To-Cart", "\u212aB",
                                                            "FORUM\u03a3", "\u0130tem"])),
                max_size=8))  # fmt: skip
def test_names_word_mask_is_the_mask_of_the_joined_names(names: list[str]) -> None:
    from focuscrawl.blocks._cwalk import kind_word_mask_of

    assert kind_word_mask_of(names) == kind.names_mask_python(names)
    assert kind_word_mask_of(iter(names)) == kind.names_mask_python(names)  # any iterable


def test_case_folding_facts_the_cue_scan_relies_on() -> None:
    # _cwalk._fold: only U+0130 lower-cases to more than one character; only it and the
    # Kelvin sign lower-case to ASCII; lower-casing keeps whitespace whitespace.
    longer, to_ascii = [], []
    for code in range(0x110000):
        lowered = chr(code).lower()
        if len(lowered) != 1:
            longer.append(code)
        if code >= 128 and any(ord(x) < 128 for x in lowered):
            to_ascii.append(code)
        assert chr(code).isspace() == all(x.isspace() for x in lowered)
    assert longer == [0x130]
    assert to_ascii == [0x130, 0x212A]


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_css_text.map(lambda t: t.upper().replace("K", "\u212a").replace("\u0130", "")))
def test_folded_cue_scan_is_the_scan_of_the_lowered_text(text: str) -> None:
    from focuscrawl.blocks._cwalk import cue_starts

    assert cue_starts(text, True) == css.cue_starts_python(text.lower())
    assert cue_starts(text + "\u0130", True) is None  # its lower case is longer: not folded


_sheet_text = st.lists(
    st.one_of(
        st.sampled_from(["@media x", "@import y", "@", "{", "}", ";", ",", " ", "\n", "/*", "*/",
                         ".a", "#b", "div", "display", "visibility", "float", "position", ":",
                         "none", "hidden", "left", "right", "fixed", "absolute", "sticky",
                         "DISPLAY:NONE", "fixedisplay:none", "\u00a0", "\u2003", "\u212a",
                         "\u0130", "é", "\U0001f600", "*", "/"]),
        st.text(max_size=3),
    ),
    max_size=50,
).map("".join)  # fmt: skip


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(_sheet_text)
def test_compiled_sheet_stripping_is_the_python_one(text: str) -> None:
    from focuscrawl.blocks._cwalk import strip_at_rules, strip_comments

    assert strip_at_rules(text) == sheet.strip_at_rules(text)
    assert strip_comments(text) == sheet.strip_comments(text)


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(_sheet_text, st.integers(min_value=1, max_value=4))
def test_compiled_sheet_reading_is_the_python_one(text: str, limit: int) -> None:
    from focuscrawl.blocks._cwalk import sheet_rules

    found = sheet_rules(text, limit)
    if "\u0130" in text:  # left to the Python reading when the stripped sheet holds it
        assume(found is not None)
    assert found == css.cue_rules_python(text, limit)
    assert sheet_rules(text, 10_000) == css.cue_rules_python(text, 10_000)


@needs_compiled
def test_compiled_sheet_reading_on_hand_made_sheets() -> None:
    from focuscrawl.blocks._cwalk import sheet_rules

    sheets = [
        ".ad{display:none}#side{float:left}.x{position:static}.y{display:hidden}",
        "@media print{.a{display:none}}.b{visibility:HIDDEN}",
        "@supports x{@media y{.a{display:none}}}.c{position:sticky}",
        ".n{ .m{display:none} }",  # nested: "{ " in front
        "/* .c{display:none} */.d{display :\u00a0none}",
        ".e{position:fixedisplay:none}",  # both cues: the second starts inside the first
        ".f{display:none",  # never closed
        "\u212a{display:none}.k{position:sticky}",  # Kelvin sign: "k" when folded
        # found by their ":": whitespace around it, values and properties that do not match,
        # a property that starts inside the match before it
        ".g{position:absolutedisplay : none}.h{x:none;display:block}",
        "a{float\t:\nright;DISPLAY\u2003:NONE}.i{display:nonevisibility:hidden}",
        ".j{isplay:none;d isplay:none;:none;display:}.l{ : display:none}",
    ]
    for text in sheets:
        assert sheet_rules(text, 100) == css.cue_rules_python(text, 100), text
    assert sheet_rules(".a{display:none}.b{float:left}", 1) == ([(".a", True)], False)
    assert sheet_rules(".e{position:fixedisplay:none}", 9) == ([(".e", True)], True)
    assert sheet_rules("\u0130{display:none}", 9) is None


@needs_compiled
@pytest.mark.parametrize(
    "base",
    ["http://example.org/a/b", "https://h.example:8080", "https://h.example?q=/x",
     "ftp://example.org/", "http://example.org/#x/y"],
)  # fmt: skip
def test_compiled_link_resolution_is_the_resolver(base: str) -> None:
    hrefs = ["/a", "/a#f", "//cdn.example/x", "/./a", "/a/../b", " /a", "/a ", "http://x.example/#f",
             "https://y.example", "HTTP://z.example/", "rel", "../up", "#top", "javascript:x()",
             "mailto:a@b", "/", "?q", "http://[bad/", "/\u00e9t\u00e9", "\t"]  # fmt: skip
    links = "".join(f"<a href='{h}'>l{i}</a> " for i, h in enumerate(hrefs))
    fast, slow = _both(f"<base href='{base}'><p>{links}</p>", "http://page.example/p/q")
    assert fast == slow
    assert fast[5]  # the links are there


# ---- UTF-8 bodies parsed as they are (partition._parsed_as_is) ---------------------------------

_utf8ish = st.lists(
    st.one_of(
        st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.binary(max_size=4),
        st.sampled_from([b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xed\x9f\xbf",
                         b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf0\x8f\xbf\xbf",
                         b"\xf5\x80\x80\x80", b"\xc2", b"\xe2\x82", b"\x80", b"abcdefgh"]),
    ),
    max_size=30,
).map(b"".join)  # fmt: skip


def _module() -> Any:
    from focuscrawl.blocks.compiled import cwalk

    return cwalk()


def _decodes(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(_utf8ish)
def test_utf8_validity_is_the_decoders(body: bytes) -> None:
    assert _module().utf8_valid(body) is _decodes(body)


@needs_compiled
def test_utf8_validity_on_every_lead_byte() -> None:
    for lead in range(256):
        for tail in (b"", b"\x80", b"\x80\x80", b"\xbf\xbf\xbf", b"\x90\x80\x80", b"\xa0\x80"):
            body = b"ascii run " + bytes([lead]) + tail + b" more ascii"
            assert _module().utf8_valid(body) is _decodes(body), body


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["<p a b c", "<div", "<script>", "</script>", "<!--",
                                           "-->", "=", '"', " ", ">", "<b"]),
                          st.text(max_size=4)), max_size=60).map("".join),
       st.integers(0, 3), st.integers(0, 6))  # fmt: skip
def test_markup_scan_of_utf8_bytes_cuts_where_the_text_scan_does(
    text: str, attrs: int, elements: int
) -> None:
    body = text.encode("utf-8", "surrogatepass")
    spans, end, dropped = _module().markup_cuts(text, attrs, elements)
    at = [len(text[:i].encode("utf-8", "surrogatepass")) for i in range(len(text) + 1)]
    assert _module().markup_cuts(body, attrs, elements) == (
        [(at[a], at[b]) for a, b in spans],
        -1 if end < 0 else at[end],
        dropped,
    )


@needs_compiled
def test_an_ordinary_utf8_page_is_parsed_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_decoding(*args: Any) -> Any:
        raise AssertionError("decoded")

    monkeypatch.setattr(partition_module, "decode_html_as", no_decoding)
    page = partition_module.partition("<p>caf\u00e9 ok</p>".encode(), "http://example.org/")
    assert page.main_text == "caf\u00e9 ok"
    with pytest.raises(AssertionError, match="decoded"):  # a cut page goes through its text
        partition_module.partition(b"<p>x</p>" * (rules.MAX_ELEMENTS + 1), "http://example.org/")


_context_text = st.lists(
    st.one_of(
        st.sampled_from(["The", "the", "Eagle,", "eagle", "(eagles)", "1066", "x", "ab", "I", "",
                         " ", "\n", "\t", "\u00a0", "\u2003", "\x1c", "\u2019s", "\u201cQuote\u201d",
                         "caf\u00c9", "\u0130stanbul", "\u00df", "\u4e2d\u6587", "--", "'", "9a",
                         "\u00e9t\u00e9", "\U0001f600", "\u2014dash\u2014", "A.B.", "of", "was"]),
        st.text(max_size=6),
    ),
    max_size=50,
).map(" ".join)  # fmt: skip


def _context_ids_both(text: str, limit: int) -> tuple[Any, Any]:
    """The compiled context word ids and memo, then the pure-Python twin's."""
    from focuscrawl.blocks._cwalk import context_word_ids

    from focuscrawl.strategy.linkfeatures import _SALT, context_word_ids_python
    from focuscrawl.text import STOPWORDS, WORD_EDGES

    args = (WORD_EDGES, STOPWORDS, _SALT["c"], (1 << 18) - 1, limit, 1000)
    fast_memo: dict[str, int] = {}
    slow_memo: dict[str, int] = {}
    fast = context_word_ids(text, fast_memo, *args)
    slow = context_word_ids_python(text, slow_memo, *args, raw_ids={})
    return (fast, fast_memo), (slow, slow_memo)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_context_text, st.integers(1, 14))
def test_compiled_context_word_ids_are_the_python_ones(text: str, limit: int) -> None:
    fast, slow = _context_ids_both(text, limit)
    assert fast == slow


@needs_compiled
def test_compiled_context_word_ids_on_hand_made_contexts() -> None:
    from focuscrawl.strategy.linkfeatures import first_distinct_tokens

    context = "The Bald Eagle, an eagle of North America; the eagle (eagles) nests by rivers, " * 3
    (ids, memo), slow = _context_ids_both(context, 12)
    assert (ids, memo) == slow
    assert list(memo) == first_distinct_tokens(context, 12)  # one id per distinct word
    assert len(ids) == len(memo) == 7 and all(0 < i < 1 << 18 for i in ids)
    assert _context_ids_both("a an the 1066 x \u2014 --", 12)[0] == ([], {})
    assert (
        _context_ids_both("\u00a0caf\u00e9\u2003na\u00efve\x1cwide", 12)[0][0]
        == _context_ids_both("caf\u00e9 na\u00efve wide", 12)[0][0]
    )  # str.split's white space, not only ASCII


@needs_compiled
@pytest.mark.skipif(cjudge() is None, reason="compiled judge steps not built")  # its contexts
@pytest.mark.corpus
@pytest.mark.parametrize("corpus", sorted(ev.CORPORA))
def test_corpus_links_get_the_python_feature_ids(corpora: Path, corpus: str) -> None:
    """The link judge's featuriser, compiled and pure Python, on every link of corpus pages."""
    from focuscrawl.strategy.linkfeatures import LinkFeaturizer

    links = [
        link
        for case in islice(ev.CORPORA[corpus](corpora), 25)
        for link in partition_module.partition(case.html, case.url).links
    ]
    assert sum(bool(link.context) for link in links) > 50
    got = []
    for compiled_ in (True, False):
        fz = LinkFeaturizer(compiled=compiled_)
        ids = []
        for link in links * 2:  # uncached, then cached
            host, words = fz.host_and_words(link.url)
            ids.append(fz.link_ids(link, host, words, "text|p|0|0", 7, 2))
        got.append(ids)
    assert got[0] == got[1]
