"""Main content that fits the page's kind, with fallbacks so a page showing text never comes
out empty: the kind's rules → all visible text minus what a cue marks as boilerplate → all
visible text → the text a style sheet hides until a script runs. A broad kind also reads its
hidden blocks when they hold more words than its main text (tabs, accordions, "read more").

The partition's classification (:mod:`classify`) picks one best container, as Readability does:
right for an article, too narrow for a forum thread (every post), a product (description,
specs), a listing (its items) or a docs page (every section). For those kinds, the blocks
outside that container that no cue marks (no nav/aside/footer tag, no "unlikely" class or id,
not hidden) join the main text, each text once (a repeated copy is left out); on listings and
collections the link blocks of the items too. A page read as an article whose paragraphs lie
mostly outside the chosen container (the choice missed the article) is read broadly as well,
and so is a page told as an article with little confidence whose container took a sliver of it.
A product page's hidden spec and comparison tables (tabs) are read too, and so are a forum's
posts inside a ``<form>`` (forum software's moderation form wraps the thread), and a docs page's
title header that a ``header``-named wrapper inside the content holds. An article keeps
the lists and tables between its paragraphs that Readability's choice left out.
A pass over the blocks and their links: linear in the page.
"""

from __future__ import annotations

from focuscrawl.blocks import rules
from focuscrawl.blocks.model import Block, Page


def _uncued(block: Block) -> bool:
    """Outside the chosen container, but marked as boilerplate by no cue."""
    return block.kind == "noise" and block.weight == rules.WEIGHT_NOISE_OUTSIDE


def _take(block: Block, weight: float) -> None:
    block.kind = "text"
    block.weight = max(block.weight, weight)
    for link in block.links:
        link.block_kind = "text"
        link.block_weight = block.weight
        link.noise = False


def fit_to_kind(page: Page, kind: str, confidence: float = 1.0) -> str:
    """Re-mark ``page``'s blocks so its main text fits ``kind`` (told with ``confidence``); the
    step that gave the main text: ``"kind"``, ``"uncued"`` (fallback: all visible text minus what
    a cue marks as boilerplate), ``"visible"`` (all visible text) or ``"hidden"`` (all text, when
    the style sheets hide the whole page)."""
    broad = kind in rules.BROAD_CONTENT_KINDS and (
        kind == "other" or confidence >= rules.MIN_BROAD_CONFIDENCE
    )
    if broad and kind == "listing" and _prose_words(page) >= rules.LISTING_MAX_PROSE_WORDS:
        kind, broad = "article", False
    if not broad and (
        _missed_prose(page) or (confidence < rules.WEAK_KIND_CONFIDENCE and _chose_a_sliver(page))
    ):
        broad = True  # the chosen container is not the article: read the page broadly
    items = kind in rules.ITEM_LINK_KINDS
    if broad:
        # A block that repeats a text already read (a layout's desktop and mobile copies, a
        # carousel's cloned slides, a size table per colour) is read once.
        seen = {b.text for b in page.blocks if b.kind == "text"}
        for block in page.blocks:
            if _uncued(block):
                if block.text in seen:
                    continue
                seen.add(block.text)
                _take(block, rules.WEIGHT_KIND_CONTENT)
            elif items and block.kind == "link":
                _take(block, rules.WEIGHT_ITEM_LINKS)
        _read_hidden(page, seen, kind not in rules.HIDDEN_LINKS_NOT_CONTENT_KINDS)
        if kind in rules.FORM_POST_KINDS:
            _read_form_posts(page, seen)
        if kind == "product":
            _read_hidden_specs(page, seen)
        if kind in rules.TITLE_HEADER_KINDS:
            _read_title_header(page, seen)
    else:
        _read_article_insets(page)
    if _has_main_words(page):
        return "kind"
    for block in page.blocks:
        if _uncued(block) or block.kind == "link":
            _take(block, rules.WEIGHT_KIND_CONTENT)
    if _has_main_words(page):
        return "uncued"
    for block in page.blocks:
        if block.text and block.weight > 0:  # hidden blocks weigh 0
            _take(block, rules.WEIGHT_NOISE)
    if _has_main_words(page):
        return "visible"
    # Everything is hidden by the page's CSS: pages that show their body only once a script has
    # run (a style sheet hides it until then). Their text is what a reader would see.
    for block in page.blocks:
        if block.text:
            _take(block, rules.WEIGHT_NOISE)
    return "hidden"


def _missed_prose(page: Page) -> bool:
    """The paragraphs outside the chosen text (marked by no cue, or hidden until a script runs)
    hold more than ``rules.MISSED_PROSE_OVER_CHOSEN`` times its words: the choice of one best
    container missed the article (its paragraphs sit in widget wrappers whose class is
    negative, in several sibling sections, or in a wrapper a script reveals). A paragraph that
    copies the chosen text (most of its word pairs are in it) is not counted. Paragraphs on
    the chosen text's topic (``rules.RELATED_WORD_SHARE`` of their longer words occur in it:
    the article's other sections) count from a lower bar, ``rules.RELATED_PROSE_OVER_CHOSEN``.
    Linear in the page's words; the word pairs and words of the chosen text are collected only
    when the outside paragraphs are long enough to pass the lower bar (block texts are words
    joined by single spaces, so a text's spaces count its words)."""
    chosen = 0
    candidates: list[str] = []
    outside_words = 0
    for b in page.blocks:
        text = b.text
        if not text:
            continue
        if b.kind == "text":
            chosen += text.count(" ") + 1
        elif _uncued(b) or b.noise_cue == "hidden":
            n = text.count(" ") + 1
            if n >= rules.MISSED_PROSE_PARAGRAPH_WORDS:
                candidates.append(text)
                outside_words += n
    # related <= outside <= outside_words: below both bars, nothing more to read
    bar = min(rules.MISSED_PROSE_OVER_CHOSEN, rules.RELATED_PROSE_OVER_CHOSEN) * chosen
    if outside_words <= bar:
        return False
    pairs: set[tuple[str, str]] = set()
    vocab: set[str] = set()
    for b in page.blocks:
        if b.kind == "text" and b.text:
            words = b.text.lower().split()
            pairs.update(zip(words, words[1:], strict=False))
            vocab.update(w for w in words if len(w) >= rules.RELATED_WORD_CHARS)
    outside = related = 0
    for text in candidates:
        words = text.lower().split()
        copied = sum(pair in pairs for pair in zip(words, words[1:], strict=False))
        if copied > rules.COPY_PAIR_SHARE * len(words):
            continue
        outside += len(words)
        longw = {w for w in words if len(w) >= rules.RELATED_WORD_CHARS}
        if longw and len(longw & vocab) >= rules.RELATED_WORD_SHARE * len(longw):
            related += len(words)
    return (
        outside > rules.MISSED_PROSE_OVER_CHOSEN * chosen
        or related > rules.RELATED_PROSE_OVER_CHOSEN * chosen
    )


def _chose_a_sliver(page: Page) -> bool:
    """The blocks outside the chosen text that no cue marks hold more than
    ``rules.MISSED_PROSE_OVER_CHOSEN`` times its words, whatever their size: on a page whose
    kind was told with little confidence, the one best container took a sliver of a page made
    of short items (a listing's cards, a news index, a trail list) or of short sections."""
    chosen = outside = 0
    for b in page.blocks:
        if b.text:
            if b.kind == "text":
                chosen += b.text.count(" ") + 1
            elif _uncued(b):
                outside += b.text.count(" ") + 1
    return outside > rules.MISSED_PROSE_OVER_CHOSEN * chosen


def _prose_words(page: Page) -> int:
    """Words of the chosen text in long paragraphs."""
    n = 0
    for b in page.blocks:
        if b.kind == "text" and b.text.count(" ") >= rules.LONG_PARAGRAPH_WORDS - 1:
            n += b.text.count(" ") + 1
    return n


def _has_main_words(page: Page) -> bool:
    """At least ``rules.MIN_MAIN_WORDS`` words in the text blocks (block texts are words joined
    by single spaces)."""
    n = 0
    for b in page.blocks:
        if b.kind == "text" and b.text:
            n += b.text.count(" ") + 1
            if n >= rules.MIN_MAIN_WORDS:
                return True
    return False


def _read_hidden(page: Page, seen: set[str], linked: bool = True) -> None:
    """Read the hidden blocks too when they hold more words than the main text shows: the
    content waits for a script (tabs, accordions, "read more", a wrapper revealed on load).
    Link-led hidden blocks (menus that open on hover) stay out, and without ``linked`` every
    hidden block that holds a link (a shop's drawers: mini-cart, menus, size guides and
    pop-ups that link on; its description and spec tabs are plain text); each text is read
    once."""
    shown = hidden = 0
    for b in page.blocks:
        if b.text:
            if b.kind == "text":
                shown += b.text.count(" ") + 1
            elif b.noise_cue == "hidden":
                hidden += b.text.count(" ") + 1
    if hidden <= rules.HIDDEN_OVER_SHOWN * shown:
        return
    for block in page.blocks:
        text = block.text
        if (
            block.noise_cue == "hidden"
            and text
            and text not in seen
            and (linked or not block.links)
            and not _link_led(block)
        ):
            seen.add(text)
            _take(block, rules.WEIGHT_KIND_CONTENT)


def _read_article_insets(page: Page) -> None:
    """The lists and tables between an article's paragraphs: blocks of
    ``rules.ARTICLE_INSET_TAGS`` that no cue marks and that are not link-led (a list of related
    links stays out), lying between the first and the last block of the chosen text, are read
    with it."""
    blocks = page.blocks
    first = last = -1
    for i, b in enumerate(blocks):
        if b.kind == "text" and b.text:
            if first < 0:
                first = i
            last = i
    for b in blocks[first + 1 : last]:
        if b.tag in rules.ARTICLE_INSET_TAGS and b.text and _uncued(b) and not _link_led(b):
            _take(b, rules.WEIGHT_KIND_CONTENT)


def _read_form_posts(page: Page, seen: set[str]) -> None:
    """A thread's posts inside a ``<form>`` (forum software's moderation and multi-quote
    check boxes wrap the whole thread in one): its prose blocks of ``rules.FORM_POST_WORDS``
    words or more, link-led ones left out (a form's short labels, a reply box's hints and the
    lists of links stay out), each text once."""
    for block in page.blocks:
        text = block.text
        if (
            block.noise_cue == "form"
            and block.kind != "text"
            and text.count(" ") >= rules.FORM_POST_WORDS - 1
            and text not in seen
            and not _link_led(block)
        ):
            seen.add(text)
            _take(block, rules.WEIGHT_KIND_CONTENT)


def _read_hidden_specs(page: Page, seen: set[str]) -> None:
    """A product page's spec and comparison tables are its content even when a tab hides them
    until a script runs: the hidden table cells and definition rows (``rules.SPEC_TAGS``) and
    link-led ones left out. A cell is read even when its text was read elsewhere ("16 GB" is the
    memory of this model and the storage of another): only a cell longer than
    ``rules.SPEC_CELL_WORDS`` words is read once."""
    for block in page.blocks:
        text = block.text
        if (
            block.noise_cue == "hidden"
            and block.tag in rules.SPEC_TAGS
            and text
            and not _link_led(block)
        ):
            if text.count(" ") >= rules.SPEC_CELL_WORDS:
                if text in seen:
                    continue
                seen.add(text)
            _take(block, rules.WEIGHT_KIND_CONTENT)


def _read_title_header(page: Page, seen: set[str]) -> None:
    """A docs page's title header: when the page's first heading before its chosen text is an
    ``<h1>`` that only a class/id name marks as boilerplate (a ``header``-named wrapper inside
    the content, holding the title, the lead and a status box), that ``<h1>`` and the
    name-marked blocks after it up to the chosen text are read, link-led ones left out, each
    text once. A chrome section (``<header>``, ``<nav>`` …) is not such a wrapper."""
    blocks = page.blocks
    start = -1
    for i, b in enumerate(blocks):
        if b.kind == "text" and b.text:
            return  # the chosen text starts before any <h1>
        if b.tag == "h1" and b.text:
            if b.noise_cue == "name":
                start = i
            break
    if start < 0:
        return
    for b in blocks[start:]:
        if b.kind == "text" and b.text:
            break
        text = b.text
        if b.noise_cue == "name" and text and text not in seen and not _link_led(b):
            seen.add(text)
            _take(b, rules.WEIGHT_KIND_CONTENT)


def _link_led(block: Block) -> bool:
    """At least half of the block's words are anchor text."""
    anchor_words = sum(link.anchor.count(" ") + 1 for link in block.links if link.anchor)
    return 2 * anchor_words >= block.text.count(" ") + 1
