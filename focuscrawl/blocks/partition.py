"""``partition(html, url) -> Page``: decode, parse once, walk once, classify, resolve links."""

from __future__ import annotations

import codecs
import gc
import logging
import re
from itertools import chain, islice
from urllib.parse import urljoin

from lxml import etree

from focuscrawl.blocks import rules
from focuscrawl.blocks.classify import classify
from focuscrawl.blocks.compiled import cwalk
from focuscrawl.blocks.css import StyleRules, parse_sheets
from focuscrawl.blocks.cues import button_labels, noise_cue
from focuscrawl.blocks.decode import decode_html_as, is_binary, sniff_encoding
from focuscrawl.blocks.fit import fit_to_kind
from focuscrawl.blocks.frames import Segment, Walk
from focuscrawl.blocks.kind import evidence_parts, page_kind
from focuscrawl.blocks.kind_features import kind_features
from focuscrawl.blocks.kind_model import KindModel, tell_kind
from focuscrawl.blocks.learned import BlockModel, apply_model, block_features, walk_features
from focuscrawl.blocks.markup import cap_markup
from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.blocks.parse import parse, parse_html, parse_utf8
from focuscrawl.blocks.segment import walk
from focuscrawl.blocks.structured import declared_text, facts_as_text, facts_of
from focuscrawl.blocks.survey import Survey, survey_python

__all__ = ["main_text", "parse_html", "parse_utf8", "partition"]

_compiled = cwalk()
if _compiled is not None:  # the compiled module loaded and is current (compiled.py)
    _compiled_assemble = _compiled.assemble
    _compiled_classify = _compiled.classify
    _compiled_release = _compiled.release
    _compiled_utf8_valid = _compiled.utf8_valid
    _compiled_markup_cuts = _compiled.markup_cuts
    survey = _compiled.survey
else:
    _compiled_assemble = None
    _compiled_utf8_valid = None
    survey = survey_python

logger = logging.getLogger(__name__)

# ζ = 3 and a 20-word window predict best whether a link's target is on topic (mean ROC AUC
# 0.762 over six Wikispeedia topics; bench/bench_link_context.py, table in docs/blocks.md).
DEFAULT_CONTEXT_LEVELS = 3
DEFAULT_CONTEXT_WORDS = 20


def _resolver(base: str):  # type: ignore[no-untyped-def]
    cache: dict[str, str] = {}
    # Root-relative hrefs without dot segments ("/a/b?c") are the common case: origin + href,
    # which is what urljoin returns for them, at a fraction of its cost.
    origin = ""
    if base.startswith(("http://", "https://")):
        slash = base.find("/", base.index("//") + 2)
        origin = base if slash < 0 else base[:slash]
        if "?" in origin or "#" in origin:
            origin = ""

    def resolve(href: str) -> str:
        hit = cache.get(href)
        if hit is not None:
            return hit
        raw = href
        href = href.strip()
        if not href or href.lower().startswith(rules.NON_LINK_SCHEMES):
            url = ""
        elif href.startswith(("http://", "https://")):
            url = href
        elif origin and href[0] == "/" and href[1:2] != "/" and "/." not in href:
            url = origin + href
        else:
            try:
                url = urljoin(base, href)
            except ValueError:  # e.g. an invalid IPv6 host
                url = ""
        url = url.split("#", 1)[0]
        if not url.startswith(("http://", "https://")):
            url = ""  # a relative URL on a non-HTTP base, or another scheme: not followable
        cache[raw] = url
        return url

    resolve.cache = cache  # type: ignore[attr-defined]  # callers may look hits up inline
    return resolve


def partition(
    html: str | bytes,
    url: str,
    *,
    context_levels: int = DEFAULT_CONTEXT_LEVELS,
    context_words: int = DEFAULT_CONTEXT_WORDS,
    encoding: str | None = None,
    max_links: int = rules.MAX_LINKS_PER_PAGE,
    block_model: BlockModel | None = None,
    kind_model: KindModel | None = None,
) -> Page:
    """Partition ``html`` (served at ``url``) into text, link and noise blocks.

    ``context_levels`` is ζ of the ζ-IDOM link context, ``context_words`` the word window on each
    side of an anchor; ``encoding`` is the HTTP header charset when ``html`` is bytes. Never
    raises on bad input: an unusable body gives an empty ``Page`` whose ``error`` says why
    (``"empty"``, ``"binary"``, ``"unparsable"``).

    The work is linear in the page, and capped where a page asks for more than any real page
    needs (the budgets in :mod:`rules`; ``max_links`` links are recorded, in document order).
    A page cut down by a budget says so in ``Page.cuts``: ``elements``, ``attributes``,
    ``links``, ``css``, ``depth``, ``text`` and how much was cut (1 where that is not counted).

    ``block_model``: a learned block classifier (:mod:`learned`) that re-reads the rules'
    blocks (``FOCUSCRAWL_BLOCK_MODEL``); ``None``, the default, keeps the rules' reading.
    ``kind_model``: a learned page kind (:mod:`kind_model`, ``FOCUSCRAWL_KIND_MODEL``) that
    tells the kind in place of the rules' evidence; ``None``: the rules tell it.
    """
    # The partition allocates thousands of small objects and frees them all before it returns
    # (the walk's only cycles are broken at the end): the cyclic collector has nothing to find
    # in them, but each of the collections their allocation would trigger traverses the young
    # heap of the whole process (in a process holding other libraries, ≈ 0.15 ms a page on the
    # article benchmark, 118 collections in 181 pages). It is paused meanwhile.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        page, extra = _partition(
            html, url, context_levels, context_words, encoding, max_links,
            block_model is not None, kind_model,
        )  # fmt: skip
        if block_model is not None and extra is not None:
            apply_model(page, block_model, extra)
        return page
    finally:
        if gc_was_enabled:
            gc.enable()


def partition_features(html: str | bytes, url: str) -> tuple[Page, list[dict[str, float]]]:
    """The rules' partition of ``html`` and the learned classifier's features of its blocks
    (:func:`learned.block_features`): what the classifier is trained on."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        page, extra = _partition(
            html, url, DEFAULT_CONTEXT_LEVELS, DEFAULT_CONTEXT_WORDS, None,
            rules.MAX_LINKS_PER_PAGE, True,
        )  # fmt: skip
        return page, block_features(page, extra)
    finally:
        if gc_was_enabled:
            gc.enable()


def partition_kind_features(html: str | bytes, url: str) -> tuple[Page, dict[str, float]]:
    """The rules' partition of ``html`` and the learned page kind's features of it
    (:func:`kind_features.kind_features`): what the kind model is trained on."""
    feats: dict[str, float] = {}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        page, _ = _partition(
            html, url, DEFAULT_CONTEXT_LEVELS, DEFAULT_CONTEXT_WORDS, None,
            rules.MAX_LINKS_PER_PAGE, False, None, feats,
        )  # fmt: skip
        return page, feats
    finally:
        if gc_was_enabled:
            gc.enable()


def _partition(
    html: str | bytes,
    url: str,
    context_levels: int,
    context_words: int,
    encoding: str | None,
    max_links: int,
    features: bool = False,
    kind_model: KindModel | None = None,
    kind_out: dict[str, float] | None = None,
) -> tuple[Page, list[dict[str, float]] | None]:
    page = Page(url=url, base_url=url)
    utf8: bytes | None = None  # the body, when it is valid UTF-8 that lxml can parse as it is
    as_is = False  # the body is parsed as it is, with no str made of it (_parsed_as_is)
    text = ""
    if isinstance(html, bytes | bytearray | memoryview):
        body = bytes(html)
        if not body or body.isspace():  # not strip(): that copies the whole body
            page.error = "empty"
            return page, None
        if is_binary(body):
            page.error = "binary"
            return page, None
        as_is = _parsed_as_is(body, encoding)
        if as_is:
            utf8 = body  # nothing to decode or cut
        else:
            text, codec = decode_html_as(body, encoding)
            if codec == "utf-8" and not body.startswith(codecs.BOM_UTF8) and b"\x00" not in body:
                # The same tree as parsing ``text``, without lxml converting the str back to UTF-8.
                utf8 = body
    else:
        text = html
    if not as_is:
        if not text or text.isspace():
            page.error = "empty"
            return page, None
        if utf8 is None and "\x00" in text:
            text = text.replace("\x00", "")
        text, attributes, cut = cap_markup(text)
        if attributes:
            page.cuts["attributes"] = attributes
        if cut:
            page.cuts["elements"] = 1
        if attributes or cut:
            utf8 = None  # the bytes are not what is parsed
    try:
        root, limit = parse(text if utf8 is None else utf8)
    except (etree.LxmlError, ValueError) as exc:
        logger.debug("unparsable page %s: %s", url, exc)
        root, limit = None, ""
    if limit:
        page.cuts[limit] = 1
    if root is None:
        page.error = "unparsable"
        return page, None
    parse_cuts = dict(page.cuts)
    found = survey(root)  # title, base, sheets, names, kind signals: one pass over the tree
    extra = _fill(page, root, url, context_levels, context_words, max_links, found, features)
    if _noscript_fallback(page, root):
        page = Page(url=url, base_url=url, cuts=parse_cuts)
        extra = _fill(page, root, url, context_levels, context_words, max_links, found, features)
    names = list(chain(found.classes, found.ids))
    score, mask, types = evidence_parts(found.signals, url, page, names)
    page.kind, page.kind_confidence = told = page_kind(score)
    if kind_model is not None or kind_out is not None:
        name_words = kind_model is None or kind_out is not None or kind_model.reads_names
        feats = kind_features(found.signals, url, page, names, mask, types, score, told, name_words)
        if kind_out is not None:
            kind_out.update(feats)
        if kind_model is not None:
            page.kind, page.kind_confidence = tell_kind(kind_model, feats, told)
    fit_to_kind(page, page.kind, page.kind_confidence)
    signals = found.signals
    page.facts = facts_of(
        root, signals.json_ld, page.cuts, bool(signals.og_types or signals.itemtypes),
        found.fact_meta,
    )  # fmt: skip
    if page.facts and not any(b.kind == "text" and b.text for b in page.blocks):
        # a page that shows no text of its own (rendered by a script): its declared facts
        page.blocks.append(Block(len(page.blocks), "text", facts_as_text(page.facts),
                                 rules.WEIGHT_KIND_CONTENT, "script"))  # fmt: skip
    if not any(b.kind == "text" and b.text for b in page.blocks):
        # Still no text: a thread or article a script renders (its body an empty mount point,
        # no <noscript> copy), served with its metadata only. What it declares about itself
        # (JSON-LD article / post bodies, else its description) is the best reading there is.
        text, source = declared_text(root, signals.json_ld)
        if text:
            tag = "script" if source == "json-ld" else "meta"
            page.blocks.append(
                Block(len(page.blocks), "text", text, rules.WEIGHT_KIND_CONTENT, tag)
            )
    return page, extra


# The first byte that is not whitespace to ``str.isspace`` among ASCII bytes (\x1c-\x1f are).
_NOT_ASCII_SPACE = re.compile(rb"[^\t\n\x0b\x0c\r\x1c-\x1f ]")


def _parsed_as_is(body: bytes, encoding: str | None) -> bool:
    """``body`` would be decoded as UTF-8 (no BOM), holds no NUL, shows a character that is not
    whitespace, and the markup budgets cut nothing (``markup.cap_markup``'s scan, read on the
    bytes): then the bytes are parsed as they are, and the page's ``str`` (two or four bytes a
    character as soon as one character is past Latin-1) is never made. Any other body takes
    the path through the decoded text, which gives the same page. Needs the compiled module."""
    if _compiled_utf8_valid is None or body.startswith(codecs.BOM_UTF8) or b"\x00" in body:
        return False
    first = _NOT_ASCII_SPACE.search(body)
    if first is None or body[first.start()] >= 0x80:
        return False  # maybe all whitespace to str.isspace (U+00A0, U+3000 …): decode it
    if sniff_encoding(body, encoding) != "utf-8" or not _compiled_utf8_valid(body):
        return False
    spans, end, _ = _compiled_markup_cuts(body, rules.MAX_ATTRIBUTES, rules.MAX_ELEMENTS)
    return not spans and end < 0


def _noscript_fallback(page: Page, root: etree._Element) -> bool:
    """Unwrap ``<noscript>`` and ``<button>`` elements that hold elements (read as ``div``s)
    when the rest of the page shows almost no text: pages rendered by JavaScript serve their
    content to crawlers in ``<noscript>``, and a ``<button>`` left unclosed in the markup
    (``<button><div>`` with no ``</button>``) makes the parser nest the rest of the page in
    it, which the walk skips (a menu button at the top of every page of a large publisher's
    sites: the whole article disappeared)."""
    words = 0
    for b in page.blocks:
        if b.text:  # its words joined by single spaces
            words += b.text.count(" ") + 1
            if words >= rules.NOSCRIPT_FALLBACK_WORDS:
                return False
    found = False
    for el in root.iter("noscript", "button"):
        if len(el):  # holds elements, not only a tracking pixel's text or a label
            el.tag = "div"
            found = True
    return found


def _fill(
    page: Page,
    root: etree._Element,
    url: str,
    levels: int,
    window: int,
    max_links: int,
    found: Survey,
    features: bool = False,
) -> list[dict[str, float]] | None:
    """Fill ``page`` from the walk of ``root``; the walk features of its blocks
    (:func:`learned.walk_features`) when ``features``, else ``None``."""
    title, base, sheets = found.title, found.base, found.sheets
    page.title = " ".join(title.split()) if title else ""
    if base is not None:
        try:
            page.base_url = urljoin(url, base.strip()) or url
        except ValueError:
            page.base_url = url
    cuts = page.cuts
    css = parse_sheets(sheets, lambda: (found.classes, found.ids), cuts) if sheets else StyleRules()
    w = walk(root, css, max(0, levels), max(0, max_links), rules.MAX_ELEMENTS, found.mains)
    for name, amount in w.cuts.items():
        cuts[name] = cuts.get(name, 0) + amount
    # a compiled walk (its segments are _cwalk.Segment) is classified and assembled in C
    compiled = (
        _compiled_assemble is not None and bool(w.segments) and type(w.segments[0]) is not Segment
    )
    kinds = _compiled_classify(w) if compiled else classify(w)
    resolve = _resolver(page.base_url)
    if compiled:
        long_anchors = _compiled_assemble(page, w, kinds, resolve, window, Block, Link,
                                          rules.HEADING_TAGS, _alt_text, rules.WEIGHT_NOISE,
                                          rules.MAX_ANCHOR_WORDS)  # fmt: skip
    else:
        long_anchors = _assemble(page, w, kinds, resolve, window)
    if long_anchors:
        cuts["text"] = cuts.get("text", 0) + long_anchors
    page.labels = button_labels(w.buttons) if w.buttons else []
    extra = walk_features(w, page) if features else None
    # Break the walk's only reference cycles (frame <-> children, segment <-> its links):
    # then reference counting frees the walk at once and the collector finds nothing to do.
    if compiled:
        _compiled_release(w)
    else:
        for frame in w.frames:
            frame.children.clear()
        for seg in w.segments:
            seg.links.clear()
    w.buttons.clear()
    return extra


def _assemble(page: Page, w: Walk, kinds: list[tuple[str, float]], resolve, window: int) -> int:  # type: ignore[no-untyped-def]
    """Blocks and links of ``page`` from the walk and its kinds (``_cwalk.assemble`` compiled);
    how many anchors were cut to ``rules.MAX_ANCHOR_WORDS``."""
    words = w.words
    block_of: dict[int, int] = {}
    for seg, (kind, weight) in zip(w.segments, kinds, strict=True):
        if seg.w1 == seg.w0 and not seg.links:
            continue
        block = Block(
            id=len(page.blocks),
            kind=kind,  # type: ignore[arg-type]
            text=" ".join(words[seg.w0 : seg.w1]),
            weight=weight,
            tag=seg.frame.tag,
            noise_cue=noise_cue(kind, seg.frame),
        )
        block_of[id(seg)] = block.id
        page.blocks.append(block)
        if seg.frame.tag in rules.HEADING_TAGS and block.text and not seg.frame.hidden:
            page.headings.append(block.text)
    blocks = page.blocks
    out_links = page.links
    noise_weight = rules.WEIGHT_NOISE
    cached = resolve.cache.get  # type: ignore[attr-defined]
    long_anchors = 0
    max_anchor = rules.MAX_ANCHOR_WORDS
    for raw in w.links:
        href = raw.href
        absolute = cached(href)
        if absolute is None:
            absolute = resolve(href)
        if not absolute:
            continue
        a0, a1 = raw.w0, raw.w1
        if a1 - a0 > max_anchor:
            anchor = " ".join(words[a0 : a0 + max_anchor])
            long_anchors += 1
        else:
            anchor = " ".join(words[a0:a1]) if a1 > a0 else _alt_text(raw.el)
        # The ζ-IDOM context (context.link_context), inlined: one call per link adds up.
        if window > 0:
            n0, n1 = raw.agg
            before = words[max(n0, a0 - window) : a0]
            after = words[a1 : min(n1, a1 + window)]
            if before and after:
                context = " ".join(before) + " " + " ".join(after)
            else:
                context = " ".join(before or after)
        else:
            context = ""
        bid = block_of.get(id(raw.segment), -1) if raw.segment is not None else -1
        if bid >= 0:
            block = blocks[bid]
            kind = block.kind
            link = Link(absolute, anchor, context, bid, kind, block.weight, kind == "noise",
                        raw.nofollow)  # fmt: skip
            block.links.append(link)
        else:
            link = Link(absolute, anchor, context, -1, "noise", noise_weight, True, raw.nofollow)
        out_links.append(link)
    return long_anchors


def _alt_text(el: etree._Element) -> str:
    text = el.get("title") or el.get("aria-label") or ""
    if not text:
        # The first image among the link's first elements: nested empty links around a big
        # subtree would each search all of it.
        for node in islice(el.iterdescendants(), rules.MAX_ALT_SEARCH_ELEMENTS):
            if node.tag == "img":
                text = node.get("alt") or node.get("title") or ""
                break
    return " ".join(text.split())


def main_text(html: str | bytes, url: str) -> str:
    """The topic text of ``html``: its text blocks in document order."""
    return partition(html, url).main_text
