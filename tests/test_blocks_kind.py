"""Page kinds (blocks.kind) and the main content that fits them (blocks.fit)."""

from __future__ import annotations

from focuscrawl.blocks import partition, rules
from focuscrawl.blocks.fit import fit_to_kind
from focuscrawl.blocks.kind import page_kind
from focuscrawl.blocks.model import Block, Link, Page

NAV = "<nav><a href='/'>Home</a> <a href='/about'>About us</a> <a href='/shop'>Shop</a></nav>"
FOOT = "<footer><p>Copyright Example Corp, all rights reserved, terms and privacy.</p></footer>"
PROSE = (
    "The migration of arctic terns spans the whole globe, from the breeding grounds in the far "
    "north to the pack ice of the southern ocean, and back again within one year of flight. "
)


def _page(body: str, head: str = "") -> str:
    return f"<html><head><title>t</title>{head}</head><body>{NAV}{body}{FOOT}</body></html>"


def test_article_is_told_and_read_as_before() -> None:
    head = '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
    body = "<article><h1>Terns</h1>" + f"<p>{PROSE}</p>" * 6 + "</article>"
    page = partition(_page(body, head), "https://news.example/2024/05/terns")
    assert page.kind == "article"
    assert page.kind_confidence > 0.5
    assert "arctic terns" in page.main_text
    assert "Copyright" not in page.main_text


def test_forum_thread_keeps_every_post() -> None:
    head = '<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>'
    posts = "".join(
        f"<div class='topic-post'><div class='author'>user{i}</div><time>2024-0{i}-01</time>"
        f"<div class='cooked'><p>Post number {i}: {PROSE[: 60 + 20 * i]}</p></div></div>"
        for i in range(1, 6)
    )
    page = partition(_page(f"<div class='post-stream'>{posts}</div>", head),
                     "https://forum.example/t/terns/123")  # fmt: skip
    assert page.kind == "forum"
    for i in range(1, 6):
        assert f"Post number {i}" in page.main_text


def test_an_articles_lists_and_tables_between_its_paragraphs_are_read() -> None:
    # A news story whose text is split over sibling sections, with a box of facts and a table
    # between them: Readability's choice takes the paragraphs, not those. They are read; a list
    # of links to other stories between the same paragraphs, and a list after the article, are
    # not.
    head = '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
    facts = "".join(f"<li>Tern fact {i}: they fly {i} thousand kilometres</li>" for i in range(5))
    related = "".join(f"<li><a href='/story/{i}'>Another story about birds {i}</a></li>"
                      for i in range(5))  # fmt: skip
    gulls = facts.replace("Tern fact", "Gull fact")
    table = "<table><tr><th>Colony</th><th>Pairs</th></tr><tr><td>Farne Islands</td><td>2,100</td></tr></table>"
    body = (
        "<article><h1>Terns</h1>"
        f"<div class='story-body'><p>{PROSE}</p><p>Then {PROSE}</p><p>Also {PROSE}</p></div>"
        f"<div class='facts-box'><ul>{facts}</ul></div>"
        f"<div class='story-body'><p>Later, {PROSE}</p><p>Next, {PROSE}</p></div>"
        f"<div class='more'><ul>{related}</ul></div><div class='colonies'>{table}</div>"
        f"<div class='story-body'><p>In the end, {PROSE}</p><p>Last, {PROSE}</p></div>"
        f"</article><div class='after'><ul>{gulls}</ul></div>"
    )
    url = "https://news.example/2024/05/terns"
    page = partition(_page(body, head), url)
    assert page.kind == "article"
    assert "Tern fact 3" in page.main_text and "Farne Islands" in page.main_text
    assert "Another story" not in page.main_text and "Gull fact" not in page.main_text
    before = rules.ARTICLE_INSET_TAGS
    try:
        rules.ARTICLE_INSET_TAGS = frozenset()  # type: ignore[misc]
        text = partition(_page(body, head), url).main_text
        assert "Tern fact 3" not in text and "Farne Islands" not in text
    finally:
        rules.ARTICLE_INSET_TAGS = before  # type: ignore[misc]


def test_forum_posts_inside_a_moderation_form_are_read() -> None:
    # Forum software wraps a thread's replies in a <form> (the moderators' and multi-quote
    # check boxes): Readability's one best container is the opening post, and the replies,
    # inside the form, are cued as a form's text. Their prose is read; the form's short labels,
    # its link-led lists and its controls are not.
    head = '<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>'
    opening = f"<div class='topic-opener'><div class='cooked'>{''.join(f'<p>Part {j}: {PROSE * 2}</p>' for j in range(4))}</div></div>"
    replies = "".join(
        f"<li class='postcontainer'><div class='username'>user{i}</div>"
        f"<input type='checkbox' name='quote{i}'> <label>Quote</label>"
        f"<div class='postbody'><p>Post number {i}: {PROSE[: 60 + 10 * i]}</p></div>"
        "<ul class='postlinks'><li><a href='/report'>Report this post to a moderator</a></li>"
        "<li><a href='/reply'>Reply with a quote of this post</a></li></ul></li>"
        for i in range(2, 7)
    )
    body = (
        f"<div class='thread'><h1>Arctic terns</h1>{opening}</div>"
        f"<form action='/inlinemod' method='post'><ol class='posts'>{replies}</ol>"
        "<select name='do'><option>Delete posts</option></select><button>Go</button></form>"
    )
    url = "https://forum.example/threads/terns.123/"
    page = partition(_page(body, head), url)
    assert page.kind == "forum"
    for i in range(2, 7):
        assert f"Post number {i}" in page.main_text
    assert "Report this post" not in page.main_text and "Delete posts" not in page.main_text
    before = rules.FORM_POST_KINDS
    try:
        rules.FORM_POST_KINDS = frozenset()  # type: ignore[misc]
        assert "Post number 3" not in partition(_page(body, head), url).main_text
    finally:
        rules.FORM_POST_KINDS = before  # type: ignore[misc]


def test_a_docs_pages_title_header_inside_the_content_is_read() -> None:
    # A reference page puts its title, a status box and the lead in a wrapper named
    # "layout__header" inside <main>: the class word "header" marks it as boilerplate. On a docs
    # page that wrapper (its <h1> and what follows up to the chosen text) is read; the site's
    # own <header> section, and a link-led list in the wrapper, are not.
    head = '<script type="application/ld+json">{"@type": "TechArticle"}</script>'
    code = "<pre><code>const ws = new WebSocket(url);</code></pre>"
    sections = "".join(
        f"<section><h2>Method {i}</h2><p>Method {i} of the socket: {PROSE}</p>{code}</section>"
        for i in range(4)
    )
    body = (
        "<header class='site'><p>Developer network for the whole web platform</p></header>"
        "<main><div class='layout__header'><h1>WebSocket</h1>"
        "<p>Widely available across browsers since July 2015 and in every engine.</p>"
        "<p>The WebSocket object provides the API for creating and managing a connection.</p>"
        "<ul><li><a href='/compat'>See full compatibility</a></li>"
        "<li><a href='/feedback'>Report feedback</a></li></ul></div>"
        f"<div class='content'>{sections}</div></main>"
    )
    url = "https://developer.example/docs/Web/API/WebSocket"
    page = partition(_page(body, head), url)
    assert page.kind == "documentation"
    text = page.main_text
    assert "Method 3 of the socket" in text
    assert "WebSocket\n" in text and "provides the API" in text and "Widely available" in text
    assert "See full compatibility" not in text and "Developer network" not in text
    before = rules.TITLE_HEADER_KINDS
    try:
        rules.TITLE_HEADER_KINDS = frozenset()  # type: ignore[misc]
        assert "provides the API" not in partition(_page(body, head), url).main_text
    finally:
        rules.TITLE_HEADER_KINDS = before  # type: ignore[misc]


def test_a_short_form_text_of_a_forum_is_not_a_post() -> None:
    page = Page(url="https://forum.example/t/1")
    page.blocks = [
        Block(0, "text", PROSE, 0.9, "p"),
        Block(
            1, "noise", "Log in to reply to this thread", rules.WEIGHT_NOISE, "p", noise_cue="form"
        ),  # fmt: skip
        Block(2, "noise", PROSE + "in a form", rules.WEIGHT_NOISE, "div", noise_cue="form"),
    ]
    fit_to_kind(page, "forum", 1.0)
    assert [b.kind for b in page.blocks] == ["text", "noise", "text"]


def test_product_keeps_description_and_specs() -> None:
    head = (
        '<meta property="og:type" content="product">'
        '<script type="application/ld+json">{"@type": ["Product", "Offer"]}</script>'
    )
    body = (
        "<div class='product-info'><h1>Trail shoe</h1><span class='price'>$120</span>"
        "<button class='add-to-cart'>Add to cart</button></div>"
        f"<div class='product-description'><p>{PROSE}</p></div>"
        "<table class='specs'><tr><td>Weight</td><td>280 g</td></tr>"
        "<tr><td>Drop</td><td>6 mm</td></tr></table>"
    )
    page = partition(_page(body, head), "https://shop.example/products/trail-shoe")
    assert page.kind == "product"
    assert "arctic terns" in page.main_text
    assert "280 g" in page.main_text


def test_what_the_site_recommends_beside_a_product_is_not_its_content() -> None:
    # A shop page's "You may also like" carousel and its recently viewed items are named for
    # what they are (recommendations, upsells, recently viewed): not the product's content.
    # The same cards under a neutral name are read, as every uncued block of a product is.
    head = (
        '<meta property="og:type" content="product">'
        '<script type="application/ld+json">{"@type": ["Product", "Offer"]}</script>'
    )
    cards = "".join(
        f"<div class='card'><h3>Camp mug {i}</h3><p>Enamel steel, holds {i} dl, from $2{i}</p></div>"
        for i in range(4)
    )
    product = (
        "<div class='product-info'><h1>Trail shoe</h1><span class='price'>$120</span></div>"
        f"<div class='product-description'><p>{PROSE}</p></div>"
    )
    named = (
        f"{product}<section class='product-recommendations'><h2>You may also like</h2>{cards}"
        f"</section><div id='recently-viewed'><p>Wool socks, merino, two pairs</p></div>"
    )
    url = "https://shop.example/products/trail-shoe"
    page = partition(_page(named, head), url)
    assert page.kind == "product"
    assert "arctic terns" in page.main_text and "Trail shoe" in page.main_text
    assert "Camp mug" not in page.main_text and "Wool socks" not in page.main_text
    neutral = named.replace("product-recommendations", "shelf").replace("recently-viewed", "x")
    text = partition(_page(neutral, head), url).main_text
    assert "Camp mug 2" in text and "Wool socks" in text


def test_site_messages_beside_the_page_are_not_its_content() -> None:
    # An announcement bar and a sign-up box inside the content column, named for what they are;
    # under neutral names the same texts are read.
    head = '<meta property="og:type" content="product">'
    body = (
        "<div class='product'><div class='announcement-bar'><p>Free shipping on every order "
        "over fifty dollars this week only</p></div><h1>Trail shoe</h1>"
        f"<div class='product-description'><p>{PROSE}</p></div>"
        "<div class='signup-box'><p>Join our list and get ten percent off your first order "
        "today</p></div></div>"
    )
    url = "https://shop.example/products/trail-shoe"
    text = partition(_page(body, head), url).main_text
    assert "arctic terns" in text
    assert "Free shipping" not in text and "Join our list" not in text
    neutral = body.replace("announcement-bar", "strip").replace("signup-box", "box")
    text = partition(_page(neutral, head), url).main_text
    assert "Free shipping" in text and "Join our list" in text


def test_the_pages_furniture_around_its_text_is_not_content() -> None:
    # A docs section with a feedback prompt, previous / next links and a copyright line inside
    # its content column, and an article's author bio: named for what they are, left out;
    # under neutral names the same texts are read.
    code = "<pre><code>pip install terns</code></pre>"
    sections = "".join(
        f"<section><h2>Step {i}</h2><p>Step {i} of the guide: {PROSE}</p>{code}</section>"
        for i in range(4)
    )
    body = (
        f"<main><div class='doc-content'><h1>Install</h1>{sections}"
        "<div class='page-feedback'><p>Was this page useful to you and your team today?</p></div>"
        "<div class='prev-next'><p>Previous chapter on configuring the whole tern toolkit</p></div>"
        "<div class='copyright'><p>All material on this site licensed under open terms</p></div>"
        "</div></main>"
    )
    head = '<script type="application/ld+json">{"@type": "TechArticle"}</script>'
    url = "https://docs.example/docs/guide/install"
    page = partition(_page(body, head), url)
    assert page.kind == "documentation"
    assert "Step 3 of the guide" in page.main_text
    for furniture in ("Was this page useful", "Previous chapter", "All material"):
        assert furniture not in page.main_text
    neutral = (
        body.replace("page-feedback", "a1").replace("prev-next", "a2").replace("copyright", "a3")
    )
    text = partition(_page(neutral, head), url).main_text
    assert "Was this page useful" in text and "Previous chapter" in text and "All material" in text
    head = '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
    bio = "<div class='author-bio'><p>Jane Doe writes about seabirds and has done for years.</p></div>"
    story = "<article><h1>Terns</h1>" + f"<p>{PROSE}</p>" * 4 + bio + "</article>"
    url = "https://news.example/2024/05/terns"
    assert "Jane Doe" not in partition(_page(story, head), url).main_text
    assert "Jane Doe" in partition(_page(story.replace("author-bio", "b"), head), url).main_text


def test_a_repeated_copy_is_read_once() -> None:
    # A shop page's desktop and mobile copies of the same feature text: read once.
    head = '<meta property="og:type" content="product">'
    feature = "<div class='feature-card'><h2>Soft wool</h2><p>Fibres that breathe.</p></div>"
    body = (
        f"<div class='product-description'><h1>Wool runner</h1><p>{PROSE}</p></div>"
        f"<div class='desktop'>{feature}</div><div class='mobile'>{feature}</div>"
    )
    page = partition(_page(body, head), "https://shop.example/products/wool-runner")
    assert page.kind == "product"
    assert page.main_text.count("Fibres that breathe.") == 1
    assert page.text.count("Fibres that breathe.") == 2  # the copy is kept, as noise


def test_hidden_tabs_are_read_when_they_hold_the_content() -> None:
    # A product page whose description and specs sit in tabs a script opens (hidden by CSS),
    # beside a hidden hover menu: the tabs are read, the menu is not.
    head = (
        '<meta property="og:type" content="product">'
        "<style>.tab-panel{display:none} .mega-menu{display:none}</style>"
    )
    menu = "".join(f"<a href='/c/{i}'>Category {i}</a> " for i in range(30))
    body = (
        f"<div class='mega-menu'>{menu}</div>"
        "<div class='product-info'><h1>Trail shoe</h1><p>Light and quick.</p></div>"
        f"<div class='tab-panel'><p>{PROSE}</p><p>{PROSE.upper()}</p></div>"
        "<div class='tab-panel'><table><tr><td>Weight</td><td>280 g</td></tr></table></div>"
    )
    page = partition(_page(body, head), "https://shop.example/products/trail-shoe")
    assert page.kind == "product"
    assert "arctic terns" in page.main_text
    assert "280 g" in page.main_text
    assert "Category 7" not in page.main_text


def test_a_products_hidden_drawers_that_link_on_are_not_its_content() -> None:
    # A shop page's hidden tabs are read, but not its hidden drawer (a mini-cart / size guide
    # that links on, not link-led), which the same reading takes on other kinds.
    head = (
        '<meta property="og:type" content="product">'
        "<style>.tab-panel{display:none} .drawer{display:none}</style>"
    )
    drawer = (
        "<div class='drawer'><p>Your cart is empty for now, but our bestselling trail shoes "
        "and the new winter range are waiting for you, see <a href='/c/new'>new arrivals</a>"
        "</p></div>"
    )
    body = (
        "<div class='product-info'><h1>Trail shoe</h1><p>Light and quick.</p></div>"
        f"<div class='tab-panel'><p>{PROSE}</p><p>{PROSE.upper()}</p></div>{drawer}"
    )
    url = "https://shop.example/products/trail-shoe"
    page = partition(_page(body, head), url)
    assert page.kind == "product"
    assert "arctic terns" in page.main_text and "Your cart is empty" not in page.main_text
    before = rules.HIDDEN_LINKS_NOT_CONTENT_KINDS
    try:
        rules.HIDDEN_LINKS_NOT_CONTENT_KINDS = frozenset()  # type: ignore[misc]
        assert "Your cart is empty" in partition(_page(body, head), url).main_text
    finally:
        rules.HIDDEN_LINKS_NOT_CONTENT_KINDS = before  # type: ignore[misc]


def test_hidden_text_stays_out_when_the_page_shows_more() -> None:
    head = '<meta property="og:type" content="product"><style>.tab-panel{display:none}</style>'
    body = (
        f"<div class='product-description'><h1>Trail shoe</h1><p>{PROSE}</p><p>{PROSE}</p></div>"
        "<div class='tab-panel'><p>Shipping takes three days.</p></div>"
    )
    page = partition(_page(body, head), "https://shop.example/products/trail-shoe")
    assert "Shipping" not in page.main_text


def test_listing_items_links_are_content() -> None:
    items = "".join(
        f"<li class='search-result'><a href='/item/{i}'>Result title number {i}</a>"
        f" <span>short text {i}</span></li>"
        for i in range(40)
    )
    page = partition(_page(f"<ul class='results'>{items}</ul>"), "https://example.org/search?q=x")
    assert page.kind == "listing"
    assert "Result title number 7" in page.main_text
    items_links = [link for link in page.links if "/item/" in link.url]
    assert len(items_links) == 40
    assert all(not link.noise and link.block_kind == "text" for link in items_links)
    nav = [link for link in page.links if link.url.endswith("/about")]
    assert nav and all(link.noise for link in nav)


def test_thin_evidence_is_other_not_article() -> None:
    assert page_kind({}) == ("other", 0.0)
    assert page_kind({"article": 0.5})[0] == "other"
    kind, confidence = page_kind({"product": 6.0, "listing": 2.0})
    assert kind == "product" and 0.7 < confidence <= 1.0
    page = partition("<html><body><div>hello there</div></body></html>", "https://x.example/")
    assert page.kind == "other"
    assert page.main_text == "hello there"


def test_noscript_is_read_when_the_page_shows_nothing_else() -> None:
    html = (
        "<html><body><div id='app'></div><noscript><div class='posts'>"
        + f"<p>{PROSE}</p>" * 3
        + "</div></noscript></body></html>"
    )
    page = partition(html, "https://forum.example/t/x/1")
    assert "arctic terns" in page.main_text
    # a page with its own text keeps ignoring <noscript>
    html = _page(f"<article><p>{PROSE}</p><p>{PROSE}</p></article><noscript><p>Enable JS please "
                 "to see this site in its full glory</p></noscript>")  # fmt: skip
    assert "Enable JS" not in partition(html, "https://news.example/a").main_text


def test_a_page_hidden_by_its_style_sheet_still_gives_its_text() -> None:
    html = (
        "<html><head><style>.app { display: none }</style></head><body><div class='app'>"
        + f"<p>{PROSE}</p>" * 2
        + "</div></body></html>"
    )
    page = partition(html, "https://example.org/a")
    assert "arctic terns" in page.main_text


def test_fallbacks_step_by_step() -> None:
    link = Link("https://x.example/a", "a")
    blocks = [
        Block(0, "noise", "site menu", rules.WEIGHT_NOISE),  # cue-marked boilerplate
        Block(1, "link", "item one item two", 0.3, links=[link]),
        Block(2, "noise", "hidden text", 0.0),
    ]
    page = Page("https://x.example/", blocks=blocks, links=[link])
    assert fit_to_kind(page, "article") == "uncued"
    assert page.main_text == "item one item two"
    assert link.block_kind == "text" and not link.noise
    page = Page("https://x.example/", blocks=[Block(0, "noise", "menu", rules.WEIGHT_NOISE)])
    assert fit_to_kind(page, "article") == "visible"
    assert page.main_text == "menu"
    page = Page("https://x.example/", blocks=[Block(0, "noise", "hidden", 0.0)])
    assert fit_to_kind(page, "article") == "hidden"
    assert page.main_text == "hidden"
    page = Page("https://x.example/")
    assert fit_to_kind(page, "other") == "hidden"
    assert page.main_text == ""


def test_every_kind_is_a_known_kind() -> None:
    for table in (rules.SCHEMA_KIND_EVIDENCE, rules.OG_KIND_EVIDENCE):
        assert {kind for kind, _ in table.values()} <= set(rules.PAGE_KINDS)
    for rows in (rules.NAME_KIND_EVIDENCE, rules.URL_KIND_EVIDENCE):
        assert {kind for _, kind, _ in rows} <= set(rules.PAGE_KINDS)
    assert set(rules.PAGE_KINDS) >= rules.BROAD_CONTENT_KINDS


TERNS = (
    "Each bird flies about seventy thousand kilometres a year, the longest migration known, "
    "following the winds over the Atlantic rather than the shortest route between the poles. ",
    "Young terns stay on the wintering grounds for two or three years before they make their "
    "first journey north, where they nest in colonies on bare gravel near the shore. ",
    "A pair defends its nest fiercely and dives at anyone who comes close, walkers included, "
    "striking the head with a sharp beak until the intruder leaves the colony behind. ",
    "Ringing studies show that one bird can live thirty years, so over a lifetime it covers a "
    "distance equal to three return trips from the Earth to the Moon and back again. ",
)


def _widget_article(paragraphs: list[str]) -> str:
    # A page builder's layout: every paragraph in its own widget, whose class words ("widget")
    # are negative, so no container collects the story's votes and the choice misses it.
    widgets = "".join(
        "<div class='elementor-widget elementor-widget-text-editor'>"
        f"<div class='elementor-widget-container'><p>{t}</p></div></div>"
        for t in paragraphs
    )
    head = '<script type="application/ld+json">{"@type": "BlogPosting"}</script>'
    return _page(f"<article class='post'><h1>Terns</h1>{widgets}</article>", head)


def test_an_article_the_chosen_container_missed_is_read_broadly(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    html = _widget_article([PROSE, *TERNS])
    page = partition(html, "https://blog.example/2024/terns/")
    assert page.kind == "article"
    for text in (PROSE, *TERNS):
        assert text.split(",")[0] in page.main_text
    assert "Copyright" not in page.main_text and "About us" not in page.main_text
    # without the rule the choice keeps the heading alone
    monkeypatch.setattr(rules, "MISSED_PROSE_OVER_CHOSEN", float("inf"))
    assert "seventy thousand" not in partition(html, "https://blog.example/2024/terns/").main_text


def _sliver_page(items: int) -> Page:
    # The one best container took a short intro; the page's content is many short cards
    # outside it that no cue marks (a news index, a trail list).
    blocks = [Block(0, "text", "Latest stories from our newsroom today", 0.9, "p")]
    for i in range(items):
        text = f"Card {i} headline with a short line"
        blocks.append(Block(len(blocks), "noise", text, rules.WEIGHT_NOISE_OUTSIDE, "div"))
    blocks.append(
        Block(len(blocks), "noise", "About us Careers Contact", 0.1, "nav", noise_cue="nav")
    )
    return Page(url="https://news.example/technology", blocks=blocks)


def test_a_weakly_told_article_whose_choice_took_a_sliver_is_read_broadly(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    page = _sliver_page(10)
    fit_to_kind(page, "article", 0.2)
    assert "Card 9 headline" in page.main_text and "Latest stories" in page.main_text
    assert "Careers" not in page.main_text  # a cue still marks boilerplate
    # told with confidence, or with little outside the choice, the article's choice stands
    page = _sliver_page(10)
    fit_to_kind(page, "article", 0.6)
    assert "Card" not in page.main_text
    page = _sliver_page(1)
    fit_to_kind(page, "article", 0.2)
    assert "Card" not in page.main_text
    monkeypatch.setattr(rules, "WEAK_KIND_CONFIDENCE", 0.0)  # without the rule
    page = _sliver_page(10)
    fit_to_kind(page, "article", 0.2)
    assert "Card" not in page.main_text


def test_a_hidden_copy_of_the_story_is_not_missed_prose(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A hidden copy of the whole story (kept for a script) is longer than the story as shown:
    # it is a copy, not an article the choice missed, and the story is read once.
    story = "<article><h1>Terns</h1>" + "".join(f"<p>{t}</p>" for t in (PROSE, *TERNS))
    copy = "<div style='display:none'><p>" + " ".join((PROSE, *TERNS) * 3) + "</p></div>"
    head = '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
    html = _page(story + "</article>" + copy, head)
    page = partition(html, "https://news.example/2024/05/terns")
    assert page.kind == "article"
    assert page.main_text.count("seventy thousand") == 1
    monkeypatch.setattr(rules, "COPY_PAIR_SHARE", float("inf"))  # every paragraph is new
    page = partition(html, "https://news.example/2024/05/terns")
    assert page.main_text.count("seventy thousand") > 1


def test_an_article_a_script_reveals_is_read() -> None:
    # The story sits in a wrapper hidden until a script runs; the page shows only a short
    # newsletter box: the hidden paragraphs are read.
    head = (
        '<script type="application/ld+json">{"@type": "BlogPosting"}</script>'
        "<style>.reveal-on-load{visibility:hidden}</style>"
    )
    story = "".join(f"<p>{t}</p>" for t in (PROSE, *TERNS))
    body = (
        f"<div class='reveal-on-load'><article><h1>Terns</h1>{story}</article></div>"
        "<div><p>Get our weekly letter with the best stories, sent every Friday morning.</p></div>"
    )
    page = partition(_page(body, head), "https://blog.example/2024/terns/")
    assert "seventy thousand" in page.main_text
    assert "Copyright" not in page.main_text


def test_an_unclosed_button_does_not_swallow_the_page() -> None:
    # A menu button left unclosed (<button><div> with no </button>) makes the parser nest the
    # rest of the page in the button, whose subtree the walk skips: read as a div instead.
    html = (
        "<html><body><header><a href='#main'>Skip to content</a>"
        "<button class='menu-button'><div class='menu-button-inner'><div></button></div>"
        "<main id='main'><article><h1>Terns</h1>"
        + "".join(f"<p>{t}</p>" for t in (PROSE, *TERNS))
        + "</article></main></header></body></html>"
    )
    page = partition(html, "https://news.example/terns")
    assert "seventy thousand" in page.main_text
    # a page with its own text keeps its buttons' labels out of the text
    html = _page(f"<article><p>{PROSE}</p><p>{TERNS[0]}</p><button><span>Save story</span>"
                 "</button></article>")  # fmt: skip
    page = partition(html, "https://news.example/a")
    assert "Save story" not in page.main_text
    assert "Save story" in page.labels


def test_another_section_of_the_article_is_read_other_stories_are_not(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The story's second section sits in another layout cell, past an advert, so the choice
    # keeps the first one alone. Paragraphs on the story's topic outside it (its longer words
    # recur) are read from a lower bar; as many words of other stories are not.
    second = (
        "On their migration the arctic terns follow the winds of the Atlantic, resting on the "
        "water at night, and they reach the southern ocean within three months of flight. ",
        "Back on the breeding grounds in the north, the terns build no real nest: the eggs lie "
        "on bare gravel, and both birds guard them against gulls, foxes and walkers. ",
        "Counting the terns on the breeding grounds each summer shows how the colonies grow or "
        "shrink, and ringing tells how far each bird travels during its long migration. ",
    )
    other = (
        "Ten easy weeknight dinners that need only one pan and about twenty minutes of your "
        "evening, from lemon pasta to a quick curry with chickpeas and spinach leaves. ",
        "Our readers pick their favourite budget laptops of the year, with long battery life, "
        "bright screens and keyboards that are pleasant for typing during long sessions. ",
        "The city council votes next week on a new cycling lane along the river, after months "
        "of meetings with shop owners, residents and the local bus company about parking. ",
    )

    def html(paragraphs: tuple[str, ...]) -> str:
        part1 = "".join(f"<p>{t}</p>" for t in (PROSE, TERNS[0]))
        part2 = "".join(f"<p>{t}</p>" for t in paragraphs)
        body = (
            f"<div class='story'><div class='story-body'><h1>Terns</h1>{part1}</div></div>"
            "<div class='advert'>Advertisement</div><div class='layout'><div class='grid'>"
            f"<div class='cell'><section>{part2}</section></div></div></div>"
        )
        return _page(body, '<script type="application/ld+json">{"@type": "NewsArticle"}</script>')

    url = "https://news.example/2024/terns"
    page = partition(html(second), url)
    assert "seventy thousand" in page.main_text
    assert "both birds guard them" in page.main_text
    assert "Copyright" not in page.main_text and "Advertisement" not in page.main_text
    page = partition(html(other), url)
    assert "seventy thousand" in page.main_text
    assert "weeknight dinners" not in page.main_text
    monkeypatch.setattr(rules, "RELATED_PROSE_OVER_CHOSEN", float("inf"))
    assert "both birds guard them" not in partition(html(second), url).main_text
