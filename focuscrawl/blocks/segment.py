"""One walk over the parsed tree: blocks of text, the frames that hold them, links and words.

The walk is :func:`lxml.etree.iterwalk` (iterative, so depth costs no Python recursion) with one
start and one end event per element. It keeps:

* a stack of *frames*, one per open block element (``div``, ``td``, ``nav`` …), carrying what the
  classifier reads: class/id weight, inherited hidden / unlikely / noise-section flags, and the
  subtree totals (characters, link characters, commas, counts of ``p``/``img``/``li`` …);
* *segments*: runs of inline text between block boundaries, in document order (a block of the
  page is one segment);
* the page's words in document order, with the word span of every open element, so the ζ-IDOM
  context of a link is two slices of that list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lxml import etree

from focuscrawl.blocks import rules
from focuscrawl.blocks.caches import attr_info, pair_cache
from focuscrawl.blocks.compiled import cwalk
from focuscrawl.blocks.css import StyleRules
from focuscrawl.blocks.frames import UNRECORDED, Frame, RawLink, Segment, Walk
from focuscrawl.blocks.sheet import declares_hidden, declares_sidebar


def main_path(root: etree._Element, mains: Sequence[etree._Element]) -> set[etree._Element]:
    """The page's main regions (``Survey.mains``) and their ancestors up to ``root``: each
    climb stops after ``rules.MAX_MAIN_CLIMB`` ancestors or at an element already reached. A
    region in a chrome section (``rules.CHROME_SECTION_TAGS``: a ``<main>`` the parser nested
    in an unclosed menu) is left out, it and its ancestors."""
    path: set[etree._Element] = set()
    for el in mains[: rules.MAX_MAIN_REGIONS]:
        climb: list[etree._Element] = []
        node: etree._Element | None = el
        climbed = 0
        while node is not None and node not in path:
            if node.tag in rules.CHROME_SECTION_TAGS:
                climb = []
                break
            climb.append(node)
            if node is root or climbed == rules.MAX_MAIN_CLIMB:
                break
            node = node.getparent()
            climbed += 1
        path.update(climb)
    return path


def walk_python(  # noqa: C901, PLR0913
    root: etree._Element,
    css: StyleRules,
    levels: int,
    max_links: int = rules.MAX_LINKS_PER_PAGE,
    max_elements: int = rules.MAX_ELEMENTS,
    mains: Sequence[etree._Element] = (),
) -> Walk:
    """Segment the tree under ``root`` (see the module docstring): the reference walk.

    Links past ``max_links`` are not recorded (``cuts["links"]``: how many); after
    ``max_elements`` elements the walk closes the open ones and stops (``cuts["elements"]``).
    ``mains`` (``Survey.mains``) and their ancestors are not unlikely by their class/id names.
    """
    out = Walk()
    frames, segments, links, words = out.frames, out.segments, out.links, out.words
    block_tags, skip_tags, break_tags = rules.BLOCK_TAGS, rules.SKIP_TAGS, rules.BREAK_TAGS
    noise_tags, counted = rules.NOISE_SECTION_TAGS, rules.COUNTED_TAGS
    label_tags, max_labels = rules.LABEL_TAGS, rules.MAX_LABELS
    modal_roles, chrome_roles = rules.MODAL_ROLES, rules.CHROME_ROLES
    use_css = bool(css)
    # Names any style rule mentions: an element naming none of them needs no ``css.cues`` call.
    css_tags = css.hidden_tags
    css_classes = css.hidden_classes | css.sidebar_classes
    css_ids = css.hidden_ids | css.sidebar_ids
    pair_get = pair_cache.get
    in_main_path = main_path(root, mains) if mains else None

    fstack: list[Frame] = []
    starts: list[int] = []  # start word of every open element
    # [start, end] word spans of the open elements some link aggregates to, by stack index:
    # made only for those (a link's ζ-level ancestor), not for every element.
    spans: dict[int, list[int]] = {}
    lstack: list[RawLink | None] = []  # open anchors (None for an anchor that is not a link)
    seg: Segment | None = None
    glue = False  # the last text ended inside a word: the next text may continue it
    in_link = 0
    # The pieces of the last word while texts keep continuing it, joined once it is complete:
    # ``words[-1] += piece`` would copy the growing word for every piece ("a<i></i>" x 10^6).
    pending: list[str] | None = None
    unrecorded = 0
    elements = 0

    def add_text(text: str) -> None:
        nonlocal seg, glue, pending
        ws = text.split()
        if not ws:
            glue = False
            return
        if seg is None:
            seg = Segment(fstack[-1], len(words))
            segments.append(seg)
        if glue and not text[0].isspace() and seg.w1 > seg.w0:
            if pending is None:
                pending = [words[-1]]
            pending.append(ws[0])
            del ws[0]
        if pending is not None and ws:  # a new word starts: the last one is complete
            words[-1] = "".join(pending)
            pending = None
        words.extend(ws)
        seg.w1 = len(words)
        n = len(text)
        commas = text.count(",")
        frame = seg.frame
        seg.chars += n
        frame.chars += n
        seg.commas += commas
        frame.commas += commas
        if in_link:
            seg.link_chars += n
            frame.link_chars += n
        glue = not text[-1].isspace()

    walker = etree.iterwalk(root, events=("start", "end"))
    for event, el in walker:
        tag = el.tag
        if event == "start":
            elements += 1
            if elements > max_elements:
                _close_open(el, root, starts, spans, lstack, fstack, frames, len(words))
                out.cuts["elements"] = 1
                break
            starts.append(len(words))
            if tag.__class__ is not str or tag in skip_tags:
                # a comment / processing instruction left in the tree, or script, style, …
                if tag in label_tags and fstack and len(out.buttons) < max_labels:
                    out.buttons.append((el, fstack[-1]))
                walker.skip_subtree()
                continue
            # One items() call instead of several get()s; no loop for attribute-less elements.
            cls = el_id = style = href = src = rel = None
            hidden = modal = chrome_role = False
            attrs = el.items()
            if attrs:
                for key, value in attrs:
                    if key == "class":
                        cls = value
                    elif key == "href":
                        href = value
                    elif key == "id":
                        el_id = value
                    elif key == "style":
                        style = value
                    elif key == "rel":
                        rel = value
                    elif key == "src":
                        src = value
                    elif key == "hidden" or (key == "aria-hidden" and value == "true"):
                        hidden = True
                    elif key == "role":
                        role = value.strip().lower()
                        modal = modal or role in modal_roles
                        chrome_role = role in chrome_roles
                    elif key == "aria-modal" and value == "true":
                        modal = True
            if cls or el_id:
                info = pair_get((cls or "", el_id or ""))
                if info is None:
                    info = attr_info(cls or "", el_id or "")
                weight, unlikely, classes = info
                if unlikely and in_main_path and el in in_main_path:
                    unlikely = False  # it holds the page's main region: not boilerplate whole
            else:
                weight, unlikely, classes = 0.0, False, ()
            unlikely = unlikely or modal or chrome_role
            hidden = hidden or modal
            sidebar = False
            if style:
                hidden = hidden or declares_hidden(style)
                sidebar = declares_sidebar(style)
            if use_css and (
                tag in css_tags
                or (el_id and el_id in css_ids)
                or (classes and not css_classes.isdisjoint(classes))
            ):
                h, sb = css.cues(tag, classes, el_id)
                hidden = hidden or h
                sidebar = sidebar or sb
            if sidebar:
                weight += rules.SIDEBAR_STYLE_WEIGHT
            parent = fstack[-1] if fstack else None
            if tag in counted and parent is not None:
                if tag == "p":
                    parent.n_p += 1
                elif tag == "img":
                    parent.n_img += 1
                elif tag == "li":
                    parent.n_li += 1
                elif tag == "input":
                    parent.n_input += 1
                else:
                    parent.n_embed += 1
            if tag in block_tags or hidden or unlikely or not fstack:
                frame = Frame(tag, len(frames), parent, weight)
                if parent is not None:
                    parent.leaf = False
                    parent.children.append(frame)
                    frame.hidden = hidden or parent.hidden
                    frame.unlikely = (unlikely and tag != "body") or parent.unlikely
                    frame.noise = tag in noise_tags or parent.noise
                else:
                    frame.hidden = hidden
                frame.depth = len(starts)
                frames.append(frame)
                fstack.append(frame)
                seg = None
                glue = False
            elif tag in break_tags:
                glue = False
            if tag == "a" or tag == "area" or tag == "frame":
                if tag == "frame":
                    href = src
                if href and len(links) >= max_links:
                    unrecorded += 1
                    if seg is None:  # (as a recorded link would)
                        seg = Segment(fstack[-1], len(words))
                        segments.append(seg)
                    lstack.append(UNRECORDED)
                    in_link += 1
                elif href:
                    at = len(starts) - 1 - levels
                    if at < 0:
                        at = 0
                    agg = spans.get(at)
                    if agg is None:
                        agg = spans[at] = [starts[at], 0]
                    link = RawLink(href, el, len(words), agg, rel is not None and "nofollow" in rel)
                    if seg is None:
                        seg = Segment(fstack[-1], len(words))
                        segments.append(seg)
                    link.segment = seg
                    seg.links.append(link)
                    links.append(link)
                    lstack.append(link)
                    in_link += 1
                else:
                    lstack.append(None)
            text = el.text
            if text:
                if text.isspace():  # indentation: most text nodes, no call needed
                    glue = False
                else:
                    add_text(text)
        else:
            starts.pop()
            if spans:
                span = spans.pop(len(starts), None)
                if span is not None:
                    span[1] = len(words)
            if tag.__class__ is str:
                if (tag == "a" or tag == "area" or tag == "frame") and lstack:
                    link = lstack.pop()
                    if link is not None:
                        in_link -= 1
                        link.w1 = len(words)
                if fstack and fstack[-1].depth == len(starts) + 1:
                    _close_frame(fstack.pop(), len(frames))
                    seg = None
                    glue = False
                elif tag in break_tags:
                    glue = False
            tail = el.tail
            if tail and fstack:
                if tail.isspace():
                    glue = False
                else:
                    add_text(tail)
    if pending is not None:
        words[-1] = "".join(pending)
    if unrecorded:
        out.cuts["links"] = unrecorded
    return out


def _close_frame(frame: Frame, n_frames: int) -> None:
    """The end of a frame's element: its subtree totals go to its parent (unless hidden)."""
    frame.post = n_frames - 1
    parent = frame.parent
    if parent is not None and not frame.hidden:
        parent.chars += frame.chars
        parent.link_chars += frame.link_chars
        parent.commas += frame.commas
        parent.n_p += frame.n_p
        parent.n_img += frame.n_img
        parent.n_li += frame.n_li
        parent.n_input += frame.n_input
        parent.n_embed += frame.n_embed


def _close_open(  # noqa: PLR0913
    el: etree._Element,
    root: etree._Element,
    starts: list[int],
    spans: dict[int, list[int]],
    lstack: list[RawLink | None],
    fstack: list[Frame],
    frames: list[Frame],
    n_words: int,
) -> None:
    """The end events of the elements open around ``el`` (not yet started), innermost first,
    without their tails: the walk stops at ``el`` as if the page ended there."""
    node = el.getparent() if el is not root else None
    while node is not None and starts:
        starts.pop()
        span = spans.pop(len(starts), None)
        if span is not None:
            span[1] = n_words
        tag = node.tag
        if (tag == "a" or tag == "area" or tag == "frame") and lstack:
            link = lstack.pop()
            if link is not None:
                link.w1 = n_words
        if fstack and fstack[-1].depth == len(starts) + 1:
            _close_frame(fstack.pop(), len(frames))
        node = node.getparent() if node is not root else None


# The same walk compiled (_cwalk.pyx, built by ``pip install -e .`` when a compiler is there);
# without it, or with one built from an older _cwalk.pyx, the pure-Python walk (same output).
_cwalk = cwalk()
compiled_walk = _cwalk.walk if _cwalk is not None else None

walk: Callable[..., Walk] = compiled_walk or walk_python
