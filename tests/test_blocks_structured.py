"""Structured data as content: declared product facts, hidden spec tables, and change detection
reading them (a spec, price or availability change is significant, a cosmetic edit is not)."""

from __future__ import annotations

import json

import pytest

from focuscrawl.blocks import partition
from focuscrawl.blocks import structured as st
from focuscrawl.change.classify import compare
from focuscrawl.change.content import content_of

URL = "https://shop.example/phones/pixel-9-pro"

# A product page shaped like a real shop's: JSON-LD in a @graph with a breadcrumb, OpenGraph
# product meta, microdata <meta>/<link> on the offer, the price drawn in a widget, the spec
# table in a tab that a script reveals (display: none until then), a shown comparison table,
# header menu and footer.
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Pixel 9 Pro – 128 GB – Obsidian | Example Shop</title>
<meta property="og:type" content="product"><meta property="og:title" content="Pixel 9 Pro">
<meta property="product:price:amount" content="%(price)s">
<meta property="product:price:currency" content="EUR">
<link rel="stylesheet" href="/static/app.%(nonce)s.css">
<script type="application/ld+json">%(ld)s</script>
<script>window.__STATE__={"nonce":"%(nonce)s"}</script>
</head><body class="%(body_class)s">
<header class="site-header"><nav class="main-nav"><ul><li><a href="/">Home</a></li>
<li><a href="/phones">Phones</a></li><li><a href="/tablets">Tablets</a></li>
<li><a href="/deals">Deals</a></li></ul></nav></header>
<main id="content"><div class="product" itemscope itemtype="https://schema.org/Product">
<h1 itemprop="name">Pixel 9 Pro</h1>
<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
<meta itemprop="priceCurrency" content="EUR"><meta itemprop="price" content="%(price)s">
<link itemprop="availability" href="https://schema.org/%(avail)s">
<div class="price-widget" data-sku="G1MNW"></div></div>
<p>The Pixel 9 Pro has a 6.3 inch Super Actua display, a triple rear camera system and a
battery that lasts more than a day. It comes with seven years of OS and security updates.</p>
<ul class="tabs"><li><a href="#overview">Overview</a></li><li><a href="#specs">Specs</a></li></ul>
<div class="tab-panel" id="specs" style="display:none"><h2>Technical specifications</h2>
<table class="specs"><tbody><tr><th>Memory</th><td>%(mem)s</td></tr>
<tr><th>Storage</th><td>128 GB</td></tr><tr><th>Rear camera</th><td>%(lens)s</td></tr>
<tr><th>Weight</th><td>199 g</td></tr>%(extra)s</tbody></table></div>
<section class="compare"><h2>Compare models</h2><table><thead><tr><th></th><th>Pixel 9</th>
<th>Pixel 9 Pro</th></tr></thead><tbody><tr><td>Display</td><td>6.3 inch</td><td>6.3 inch</td>
</tr><tr><td>RAM</td><td>12 GB</td><td>%(mem)s</td></tr></tbody></table></section>
</div></main>
<footer class="site-footer"><a href="/imprint">Imprint</a> <a href="/privacy">Privacy</a>
<span>© 2026 Example Shop</span></footer></body></html>"""


def _ld(price: str, avail: str) -> str:
    return json.dumps(
        {
            "@context": "https://schema.org",
            "@graph": [
                {"@type": "BreadcrumbList", "itemListElement": [{"name": "Phones"}]},
                {
                    "@type": "Product",
                    "name": "Pixel 9 Pro",
                    "brand": {"@type": "Brand", "name": "Google"},
                    "sku": "G1MNW",
                    "description": "The phone with the best camera.",
                    "additionalProperty": [
                        {
                            "@type": "PropertyValue",
                            "name": "Battery",
                            "value": 4700,
                            "unitText": "mAh",
                        },  # fmt: skip
                    ],
                    "offers": {
                        "@type": "Offer",
                        "price": price,
                        "priceCurrency": "EUR",
                        "availability": f"https://schema.org/{avail}",
                    },
                },
            ],
        }
    )


BASE = {"price": "999.00", "avail": "InStock", "mem": "16 GB", "lens": "Wide", "extra": "",
        "nonce": "a81f3c9e2b7d", "body_class": "page product"}  # fmt: skip


def _page(**edit: str) -> bytes:
    values = dict(BASE, **edit)
    values["ld"] = _ld(values["price"], values["avail"])
    return (PAGE % values).encode()


def test_declared_product_facts_are_read() -> None:
    page = partition(_page(), URL)
    assert page.kind == "product"
    for fact in ("name: Pixel 9 Pro", "brand: Google", "sku: G1MNW", "price: 999.00",
                 "pricecurrency: EUR", "availability: InStock", "battery: 4700 mAh"):  # fmt: skip
        assert fact in page.facts
    assert len(page.facts) == len(set(page.facts))  # the same fact from three sources, once
    assert "BreadcrumbList" not in " ".join(page.facts)


def test_hidden_spec_table_of_a_product_is_content() -> None:
    text = partition(_page(), URL).main_text
    for cell in ("Memory", "16 GB", "Rear camera", "Wide", "199 g", "Pixel 9", "12 GB"):
        assert cell in text
    assert "Imprint" not in text and "Tablets" not in text


@pytest.mark.parametrize(
    "edit",
    [
        {"mem": "12 GB"},  # a spec value: "16 GB" -> "12 GB"
        {"lens": "Telephoto"},  # only in the hidden spec tab
        {"extra": "<tr><th>SIM</th><td>Dual eSIM</td></tr>"},  # a new spec row
        {"price": "899.00"},  # declared only (the widget draws it by script)
        {"avail": "OutOfStock"},  # declared only
    ],
)
def test_spec_price_and_availability_changes_are_significant(edit: dict[str, str]) -> None:
    change = compare(_page(), _page(**edit), URL)
    assert change.status == "significant", edit
    assert change.added or change.removed


@pytest.mark.parametrize(
    "edit",
    [
        {"nonce": "f00dbabe1234"},  # cache buster and script state
        {"body_class": "page product theme-dark"},  # a class on the body
    ],
)
def test_cosmetic_edits_of_the_same_page_are_not(edit: dict[str, str]) -> None:
    assert compare(_page(), _page(**edit), URL).status == "insignificant"


def test_facts_are_lines_of_the_compared_content() -> None:
    lines = content_of(partition(_page(), URL)).lines
    assert ("fact", "availability: InStock") in lines


def test_a_page_showing_no_text_reads_its_declared_facts() -> None:
    html = (
        "<html><head><script type='application/ld+json'>"
        + _ld("49.90", "PreOrder")
        + "</script></head><body><div id='app'></div></body></html>"
    )
    text = partition(html, URL).main_text
    assert "Pixel 9 Pro" in text and "49.90" in text and "PreOrder" in text


def test_hostile_json_ld_is_bounded_and_counted() -> None:
    deep = "[" * 50_000 + "]" * 50_000  # past the parser's recursion limit
    huge = json.dumps({"@type": "Product", "name": "x" * (st.MAX_JSON_LD_CHARS + 1)})
    nested = {"@type": "Product", "name": "ok"}
    for _ in range(st.MAX_JSON_LD_DEPTH + 2):
        nested = {"@type": "Thing", "hasPart": [nested]}
    many = json.dumps([{"@type": "Product", "name": f"n{i}", "sku": f"s{i}"} for i in range(500)])
    blobs = ["{not json", deep, huge, json.dumps(nested), many]
    cuts: dict[str, int] = {}
    from lxml import etree

    root = etree.fromstring("<html><body><p>x</p></body></html>", etree.HTMLParser())
    facts = st.facts_of(root, blobs, cuts)
    assert cuts["json_ld"] >= 2  # the oversized blob, the walk past the depth
    assert "name: ok" not in facts  # deeper than MAX_JSON_LD_DEPTH
    assert len(facts) == st.MAX_FACTS
    long_description = json.dumps({"@type": "Product", "description": "word " * 1000})
    (fact,) = st.facts_of(root, [long_description], cuts)
    assert len(fact) <= len("description: ") + st.MAX_FACT_CHARS and cuts["facts"] == 1


def test_many_blobs_are_capped() -> None:
    from lxml import etree

    root = etree.fromstring("<html><body></body></html>", etree.HTMLParser())
    blobs = [json.dumps({"@type": "Offer", "price": i}) for i in range(st.MAX_JSON_LD_BLOBS + 3)]
    cuts: dict[str, int] = {}
    facts = st.facts_of(root, blobs, cuts)
    assert len(facts) == st.MAX_JSON_LD_BLOBS and cuts["json_ld"] == 3


# A thread whose posts a script renders (a Discourse topic as served to a browser): the body is
# a splash screen, an empty mount point and a hidden login form; only the <head> says what the
# thread is, its first post cut into the descriptions.
THREAD = """<!doctype html><html><head><meta charset="utf-8"><title>%(title)s - Forum</title>
<meta name="description" content="%(short)s&amp;hellip;">
<meta property="og:type" content="website"><meta property="og:title" content="%(title)s">
<meta property="og:description" content="%(long)s">
<meta name="twitter:description" content="%(long)s">
%(ld)s</head><body class=""><section id="d-splash"><div class="preloader-image">
<div class="dots"></div><div class="dots"></div></div></section>
<discourse-assets><div class="hidden" id="data-preloaded"></div></discourse-assets>
<section id="main"> </section>
<form id="hidden-login-form" method="post" action="/login" style="display: none;">
<input name="username" type="text"><input type="submit" value="Log In"></form>
</body></html>"""
POST = (
    "Howdy everyone, I am new to astronomy and excited to start exploring the night sky. I would"
    " love some advice on choosing my first telescope, something beginner friendly but still"
    " powerful enough to see planets and deep sky objects. My budget is around 300 to 500"
)
THREAD_URL = "https://forum.example.org/t/best-first-telescope/1555"


def _thread(long: str, ld: str = "") -> str:
    return THREAD % {"title": "Best first telescope?", "short": POST[:120], "long": long, "ld": ld}


def test_a_script_rendered_thread_reads_the_excerpt_its_description_declares() -> None:
    page = partition(_thread(POST + "..."), THREAD_URL)
    assert page.main_text == POST  # the longest description, without its ellipsis
    assert [b.tag for b in page.blocks if b.kind == "text"] == ["meta"]
    assert partition(_thread(POST + "\u2026"), THREAD_URL).main_text == POST


def test_a_description_that_is_not_an_excerpt_is_not_content() -> None:
    # The site's summary of a page (a shop's "Free shipping!", a clinic's pitch) describes the
    # page; when the body shows nothing, there is no main text to read.
    summary = "Shop the Beatrice rug. Our washable rugs are made to order. Free shipping!"
    html = _thread(summary).replace(POST[:120] + "&amp;hellip;", summary)
    assert partition(html, THREAD_URL).main_text == ""


def test_a_page_that_shows_text_does_not_read_its_description() -> None:
    html = _thread(POST + "...").replace(
        '<section id="main"> </section>',
        '<section id="main"><p>The telescope thread itself, rendered on the server.</p></section>',
    )
    text = partition(html, THREAD_URL).main_text
    assert "rendered on the server" in text and "Howdy" not in text


def test_json_ld_post_bodies_come_before_the_description() -> None:
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "DiscussionForumPosting",
            "headline": "Best first telescope?",
            "text": "A whole first post.",
            "comment": [
                {"@type": "Comment", "text": "A reply: get a Dobsonian."},
                {"@type": "Person", "text": "not a post"},
            ],
        }
    )
    html = _thread(POST + "...", f'<script type="application/ld+json">{ld}</script>')
    page = partition(html, THREAD_URL)
    assert "A whole first post." in page.main_text and "Dobsonian" in page.main_text
    assert "not a post" not in page.main_text and "Howdy" not in page.main_text
    assert [b.tag for b in page.blocks if b.kind == "text"] == ["script"]


def test_declared_text_is_bounded() -> None:
    from lxml import etree

    root = etree.fromstring("<html><body></body></html>", etree.HTMLParser())
    blobs = [json.dumps({"@type": "Article", "articleBody": "word " * 15_000})] * 4
    text, source = st.declared_text(root, blobs)
    assert source == "json-ld" and len(text) <= st.MAX_DECLARED_CHARS
    many = "".join(f'<meta name="description" content="d{i}...">' for i in range(500))
    root = etree.fromstring(f"<html><head>{many}</head></html>", etree.HTMLParser())
    # the longest of the first MAX_DESCRIPTION_META (20): d10 … d19, the first of them kept
    assert st.declared_text(root, []) == ("d10", "meta")
