"""partition(): blocks, kinds, main text, links, headings, contexts on hand-made pages."""

from __future__ import annotations

from focuscrawl.blocks import main_text, partition

ARTICLE = " ".join(
    f"Sentence {i} about the migration of arctic terns, which fly far, and rest little."
    for i in range(12)
)

PAGE = f"""<!doctype html><html><head><title> Terns  of the Arctic </title>
<base href="http://example.org/birds/">
<style>.promo {{display: none}} #side {{float: right; width: 20%}}</style></head>
<body>
<header><a href="/">Home</a> <a href="/about">About</a></header>
<nav class="menu"><ul><li><a href="/a">Alpha</a></li><li><a href="/b">Beta</a></li></ul></nav>
<div class="article-body">
  <h1>Arctic terns</h1>
  <p>{ARTICLE} See <a href="terns.html#range">their range</a> for more.</p>
  <p>{ARTICLE}</p>
  <div class="promo"><p>Buy our hidden newsletter now please, it is great, really great.</p></div>
  <h2>Related</h2>
</div>
<div id="side"><ul>
  <li><a href="gulls.html">Gulls and terns of the arctic</a></li>
  <li><a href="puffins.html">Puffins</a></li></ul></div>
<footer class="site-footer">© 2024 <a href="/legal">Legal</a></footer>
</body></html>"""


def test_main_text_keeps_the_article_and_drops_the_rest() -> None:
    text = main_text(PAGE, "http://example.org/x")
    assert "Sentence 11 about the migration" in text
    assert "Home" not in text and "Legal" not in text and "Alpha" not in text
    assert "hidden newsletter" not in text  # display:none by a <style> class rule
    assert "Puffins" not in text


def test_title_headings_and_base() -> None:
    page = partition(PAGE, "http://example.org/x")
    assert page.title == "Terns of the Arctic"
    assert page.headings[:2] == ["Arctic terns", "Related"]
    assert page.base_url == "http://example.org/birds/"
    assert page.error == ""


def test_links_are_absolute_defragmented_and_classified() -> None:
    page = partition(PAGE, "http://example.org/x")
    by_url = {link.url: link for link in page.links}
    terns = by_url["http://example.org/birds/terns.html"]  # resolved against <base>, no #range
    assert terns.anchor == "their range"
    assert terns.block_kind == "text" and not terns.noise
    assert page.blocks[terns.block_id].kind == "text"
    assert terns in page.blocks[terns.block_id].links
    assert by_url["http://example.org/a"].noise  # nav
    assert by_url["http://example.org/legal"].noise  # footer
    gulls = by_url["http://example.org/birds/gulls.html"]
    assert not gulls.noise and gulls.block_kind == "link"
    assert terns.block_weight > gulls.block_weight > by_url["http://example.org/a"].block_weight
    for link in page.links:
        assert 0.0 <= link.block_weight <= 1.0
        assert link.url.startswith("http") and "#" not in link.url


def test_block_kinds_and_weights() -> None:
    page = partition(PAGE, "http://example.org/x")
    kinds = {b.kind for b in page.blocks}
    assert kinds == {"text", "link", "noise"}
    for i, block in enumerate(page.blocks):
        assert block.id == i and 0.0 <= block.weight <= 1.0
    text_w = min(b.weight for b in page.blocks if b.kind == "text")
    noise_w = max(b.weight for b in page.blocks if b.kind == "noise")
    assert text_w > noise_w


def test_context_is_a_word_window_around_the_anchor() -> None:
    html = "<div><p>" + " ".join(f"w{i}" for i in range(50)) + ' <a href="/t">target</a> '
    html += " ".join(f"v{i}" for i in range(50)) + "</p></div>"
    page = partition(html, "http://e.org/", context_levels=1, context_words=3)
    assert page.links[0].context == "w47 w48 w49 v0 v1 v2"
    page = partition(html, "http://e.org/", context_levels=0, context_words=3)
    assert page.links[0].context == ""  # the anchor is its own aggregation node


def test_context_levels_bound_the_aggregation_node() -> None:
    html = '<div>outer words here <p>inner <span><a href="/t">x</a></span> text</p></div>'
    near = partition(html, "http://e.org/", context_levels=2, context_words=10).links[0]
    far = partition(html, "http://e.org/", context_levels=3, context_words=10).links[0]
    assert near.context == "inner text"
    assert far.context == "outer words here inner text"


def test_non_followable_links_are_dropped_and_nofollow_kept() -> None:
    html = (
        '<p><a href="javascript:void(0)">j</a><a href="mailto:a@b">m</a><a href="#top">t</a>'
        '<a href=" /ok ">ok</a><a href="https://x.org/n" rel="nofollow">n</a></p>'
    )
    page = partition(html, "http://e.org/p")
    assert [(link.url, link.nofollow) for link in page.links] == [
        ("http://e.org/ok", False),
        ("https://x.org/n", True),
    ]


def test_image_link_anchor_falls_back_to_alt() -> None:
    page = partition('<p><a href="/i"><img alt="A puffin"></a></p>', "http://e.org/")
    assert page.links[0].anchor == "A puffin"


def test_inline_hidden_and_words_glued_across_inline_tags() -> None:
    html = (
        f'<div><p><b>W</b>ord and {ARTICLE}</p><p style="display:none">secret words</p>'
        "<p hidden>more secret</p></div>"
    )
    text = main_text(html, "http://e.org/")
    assert text.startswith("Word and")
    assert "secret" not in text


def _summary(page) -> tuple:  # type: ignore[no-untyped-def]
    return (page.title, [(b.kind, b.text) for b in page.blocks],
            [(x.url, x.anchor, x.context) for x in page.links])  # fmt: skip


def test_utf8_bytes_parse_as_their_text() -> None:
    # UTF-8 bodies are parsed as bytes (no str round trip): the page must be the one its
    # decoded text gives, whatever a <meta charset> inside claims.
    html = ("<html><head><meta charset='iso-8859-1'><title>Caf\u00e9 \u2014 \u4e2d</title></head>"
            "<body><p>Na\u00efve \u201cquotes\u201d, \u00a0 wide\u3000space, "
            "<a href='/x'>\u00fcber link</a> and more text here.</p></body></html>")  # fmt: skip
    body = html.encode("utf-8")
    from_text = partition(html, "http://example.org/")
    # With no header charset the meta's windows-1252 fails on these bytes (0x9d) and the
    # decoder falls back to UTF-8: the same page again.
    for charset in ("utf-8", None):
        page = partition(body, "http://example.org/", encoding=charset)
        assert _summary(page) == _summary(from_text)
        assert page.title == "Caf\u00e9 \u2014 \u4e2d"
    # A NUL byte past the binary sniff (4 KB) goes the str way, where NULs are dropped.
    padded = body.replace(b"<body>", b"<body><p>" + b"pad, " * 1000 + b"</p>")
    with_nul = partition(padded.replace(b"and more", b"and\x00 more"), "http://example.org/",
                         encoding="utf-8")  # fmt: skip
    assert "and more text" in with_nul.main_text


DESCRIPTION = " ".join(
    f"Part {i} of the feeder's description: cedar wood, a copper roof, and room for six terns."
    for i in range(8)
)
STORE_NAV = (
    '<header><nav><a href="/store">Store</a> <a href="/community">Community</a> '
    '<a href="/about">About</a> <a href="/support">Support</a></nav></header>'
)
PRODUCT = (
    '<h1>Tern feeder</h1><div class="purchase_price price">$12.99</div>'
    f'<div class="description"><p>{DESCRIPTION}</p></div>'
)


def _store_page(body: str) -> str:
    # A product page wrapped whole in a frame named for the page chrome (Steam's store pages:
    # <div class="responsive_page_frame with_header">), with or without its <main> region.
    return (
        '<html><head><title>Tern feeder</title><meta property="og:type" content="product">'
        f'</head><body><div class="page_frame with_header">{STORE_NAV}{body}</div></body></html>'
    )


def test_the_main_region_is_main_text_inside_a_boilerplate_named_wrapper() -> None:
    # issue 15: the price, outside the chosen container (the description), joins the product's
    # main text unless a cue marks it: the wrapper's name no longer does, <main> holds it
    for body in (f"<main>{PRODUCT}</main>", f'<div role=" Main ">{PRODUCT}</div>'):
        page = partition(_store_page(body), "http://example.org/app/1")
        assert page.kind == "product"
        assert "Part 7 of the feeder's description" in page.main_text
        assert "$12.99" in page.main_text
        assert "Community" not in page.main_text and "Support" not in page.main_text


def test_without_a_main_region_the_wrapper_name_still_counts() -> None:
    page = partition(_store_page(f"<div>{PRODUCT}</div>"), "http://example.org/app/1")
    assert "Part 7 of the feeder's description" in page.main_text
    assert "$12.99" not in page.main_text  # under the "header" wrapper: unlikely, as before
    assert "Community" not in page.main_text


def test_a_main_region_in_a_chrome_section_spares_nothing() -> None:
    # a <main> the parser nested in an unclosed menu item of the header (a real service page)
    from focuscrawl.blocks.parse import parse
    from focuscrawl.blocks.segment import main_path
    from focuscrawl.blocks.survey import survey_python

    for body, spared in (
        (f"<div><header><ul class='megamenu'><li><main>{PRODUCT}</main>", set()),
        (f"<div><main>{PRODUCT}</main></div>", {"html", "body", "div", "main"}),
    ):
        root, _ = parse(_store_page(body).encode())
        assert root is not None
        mains = survey_python(root).mains
        assert len(mains) == 1
        assert {el.tag for el in main_path(root, mains)} == spared


def test_only_the_path_to_the_main_region_is_spared() -> None:
    # a boilerplate-named sibling of <main> inside the spared wrapper is still judged by its name
    aside = '<div class="sidebar-footer"><div class="price">$5.00</div></div>'
    page = partition(_store_page(f"<main>{PRODUCT}</main>{aside}"), "http://example.org/app/1")
    assert "$12.99" in page.main_text and "$5.00" not in page.main_text
