"""Hostile pages: HTML built to make a page parser spend unbounded CPU or memory.

Each generator is a pure function (no I/O, no Scrapy) returning the page as ``str``; the size
argument defaults to the size measured against focuscrawl's partition in issue 14 (or one that
makes a quadratic or backtracking step run for minutes). Every page starts with :data:`LEAD`, an
ordinary paragraph, so a test can check that the content before the hostile part survives.

:data:`HOSTILE_PAGES` maps a stable name to a zero-argument generator: the hostile test web
serves them under these names and ``bench/bench_hostile_partition.py`` measures each one.
:func:`ordinary_page` gives an ordinary page of about the same size, the benchmark's baseline.
"""

from __future__ import annotations

from collections.abc import Callable

LEAD_TEXT = (
    "The wandering albatross has the longest wingspan of any living bird, and it glides for "
    "hours over the Southern Ocean without a single beat of its wings."
)
LEAD = f"<html><head><title>Hostile page</title></head><body><p>{LEAD_TEXT}</p>\n"
_TAIL = "\n</body></html>"


def _page(hostile: str, head: str = "") -> str:
    if head:
        return LEAD.replace("</head>", head + "</head>") + hostile + _TAIL
    return LEAD + hostile + _TAIL


def css_unclosed_rules(n: int = 40_000) -> str:
    """``<style>`` then ``{display:none`` n times, never closed (~13 bytes each): issue 14 saw
    the rule splitting grow quadratically (4,000: 209 MB; 40,000: MemoryError past 6 GB)."""
    return _page("<style>" + "{display:none" * n + "</style>")


def css_open_comments(n: int = 150_000) -> str:
    """``<style>`` then ``/*a`` n times: a comment opened and never closed, n times."""
    return _page("<style>" + "/*a" * n + "</style>")


def css_at_signs(n: int = 300_000) -> str:
    """``<style>`` then ``@`` n times: at-rules that never end."""
    return _page("<style>" + "@" * n + "</style>")


def css_nested_at_rules(n: int = 50_000) -> str:
    """``@media x{`` n times, then as many ``}``: at-rule blocks nested n deep."""
    return _page("<style>" + "@media x{" * n + "}" * n + "</style>")


def css_many_rules(n: int = 100_000) -> str:
    """n hiding rules, each for a class the page uses (every rule is kept and checked)."""
    rules = "".join(f".c{i}{{display:none}}" for i in range(n))
    spans = "".join(f'<span class="c{i}">x</span>' for i in range(0, n, 50))
    return _page(f"<div>{spans}</div>", head=f"<style>{rules}</style>")


def css_many_selectors(n: int = 200_000) -> str:
    """One hiding rule with n selectors in its group."""
    group = ",".join(f".s{i}" for i in range(n))
    return _page('<div class="s1">hidden?</div>', head=f"<style>{group}{{display:none}}</style>")


def css_long_selector(n: int = 1_000_000) -> str:
    """One hiding rule whose selector is a class name n characters long, used by an element."""
    name = "k" * n
    return _page(f'<div class="{name}">x</div>', head=f"<style>.{name}{{display:none}}</style>")


def many_style_elements(n: int = 50_000) -> str:
    """n ``<style>`` elements, each with a hiding rule."""
    return _page("".join(f"<style>.h{i}{{display:none}}</style>" for i in range(n)))


def many_attributes(n: int = 100_000) -> str:
    """One element with n attributes (issue 14: 9.6 s of CPU for this page)."""
    attrs = " ".join(f"a{i}=x" for i in range(n))
    return _page(f"<div {attrs}>text</div>")


def many_classes(n: int = 200_000) -> str:
    """One element whose class attribute lists n class names."""
    classes = " ".join(f"c{i}" for i in range(n))
    return _page(f'<div class="{classes}">text</div>', head="<style>.c7{display:none}</style>")


def long_class_name(n: int = 5_000_000) -> str:
    """One class name n characters long."""
    return _page(f'<div class="{"x" * n}">text</div>')


def huge_inline_style(n: int = 2_000_000) -> str:
    """A ``style`` attribute of n declarations-worth of characters (``color:red;`` repeated)."""
    return _page(f'<div style="{"color:red;" * (n // 10)}">text</div>')


def deep_nesting(n: int = 100_000) -> str:
    """``<div>`` nested n deep (libxml2 stops at depth 256 unless ``huge_tree`` is on)."""
    return _page("<div>" * n + "deep" + "</div>" * n)


def deep_inline_nesting(n: int = 100_000) -> str:
    """``<b>`` nested n deep: inline elements make no frames but each is still walked."""
    return _page("<b>" * n + "deep" + "</b>" * n)


def many_links(n: int = 200_000) -> str:
    """n links, each to its own URL."""
    return _page("".join(f'<a href="/l{i}">link {i}</a> ' for i in range(n)))


def many_elements(n: int = 1_000_000) -> str:
    """n empty inline elements: the walk's budget of elements is the only bound."""
    return _page("<i></i>" * n)


def many_paragraphs(n: int = 50_000) -> str:
    """An article container, then n short sibling paragraphs, each a sentence: every one is
    checked for a sentence end, which once read every paragraph of the page."""
    article = "<div><p>" + "A long paragraph of the article, with commas, " * 6 + "</p></div>"
    return _page("<div>" + article + "<p>Ok.</p>" * n + "</div>")


def many_lists(n: int = 50_000) -> str:
    """n sibling lists between paragraphs: each is looked up among its siblings."""
    body = "<p>" + "word " * 60 + "</p>" + "<ul><li>a</li></ul>" * n
    return _page(f"<article>{body}</article>")


def glued_word(n: int = 90_000) -> str:
    """One word of n pieces, each in its own text node between empty inline elements."""
    return _page("<p>" + "ab<i></i>" * n + "</p>")


def nested_links(n: int = 120, words: int = 100_000) -> str:
    """n links nested in one another around one long text: each anchor holds all of it."""
    opening = "".join(f'<a href="/n{i}"><b>' for i in range(n))
    return _page("<div>" + opening + "word " * words + "</b></a>" * n + "</div>")


def nested_empty_links(n: int = 120, inner: int = 90_000) -> str:
    """n links nested in one another, no text, around many elements but no image."""
    opening = "".join(f'<a href="/e{i}"><b>' for i in range(n))
    return _page("<div>" + opening + "<i></i>" * inner + "</b></a>" * n + "</div>")


def css_hidden_names(n: int = 20_000) -> str:
    """n hiding rules for classes the page uses, each name then mentioned again before a
    block that never closes: every mention is checked for a rule that shows it again."""
    rules = "".join(f".h{i}{{display:none}}" for i in range(n))
    again = "".join(f".h{i} " for i in range(n)) + "{" + "x" * 100_000
    spans = "".join(f'<span class="h{i}">x</span>' for i in range(n))
    return _page(f"<div>{spans}</div>", head=f"<style>{rules}{again}</style>")


def giant_word(n: int = 20_000_000) -> str:
    """One word of n characters: no space anywhere."""
    return _page("<p>" + "a" * n + "</p>")


def giant_text(n: int = 5_000_000) -> str:
    """One text node of n characters of ordinary words."""
    words = "lorem ipsum dolor sit amet, "
    return _page("<p>" + words * (n // len(words)) + "</p>")


def many_text_nodes(n: int = 500_000) -> str:
    """n words, each its own text node between ``<br>`` tags."""
    return _page("<p>" + "w<br>" * n + "</p>")


def many_mains(n: int = 100_000) -> str:
    """n ``<main>`` elements in a boilerplate-named wrapper, after 200 nested ``role="main"``
    ones: only the first few main regions and a bounded climb from each are read."""
    nested = '<div role="main" class="sidebar">' * 200 + "deep" + "</div>" * 200
    return _page(
        '<div class="page_frame footer">' + nested + '<main class="comment"></main>' * n + "</div>"
    )


HOSTILE_PAGES: dict[str, Callable[[], str]] = {
    "css_unclosed_rules": css_unclosed_rules,
    "css_open_comments": css_open_comments,
    "css_at_signs": css_at_signs,
    "css_nested_at_rules": css_nested_at_rules,
    "css_many_rules": css_many_rules,
    "css_many_selectors": css_many_selectors,
    "css_long_selector": css_long_selector,
    "many_style_elements": many_style_elements,
    "many_attributes": many_attributes,
    "many_classes": many_classes,
    "long_class_name": long_class_name,
    "huge_inline_style": huge_inline_style,
    "deep_nesting": deep_nesting,
    "deep_inline_nesting": deep_inline_nesting,
    "many_links": many_links,
    "many_elements": many_elements,
    "many_paragraphs": many_paragraphs,
    "many_lists": many_lists,
    "glued_word": glued_word,
    "nested_links": nested_links,
    "nested_empty_links": nested_empty_links,
    "css_hidden_names": css_hidden_names,
    "giant_word": giant_word,
    "giant_text": giant_text,
    "many_text_nodes": many_text_nodes,
    "many_mains": many_mains,
}


_ORDINARY_SECTION = (
    '<div class="section"><h2>Seabirds of the south</h2><p>Albatrosses, petrels and '
    "shearwaters spend most of their lives at sea, coming ashore only to breed on remote "
    'islands. <a href="/birds/albatross">Albatross</a> colonies are crowded, noisy places, and '
    'a pair may raise a single chick over nearly a year.</p><ul><li><a href="/birds/petrel">'
    'Petrels</a></li><li><a href="/birds/shearwater">Shearwaters</a></li></ul></div>\n'
)


def ordinary_page(size: int) -> str:
    """An ordinary article of about ``size`` characters: sections of text, headings and links."""
    count = max(1, size // len(_ORDINARY_SECTION))
    return _page(_ORDINARY_SECTION * count)
