"""What a walk of the tree records: frames, segments, raw links, and the :class:`Walk`.

A leaf module (lxml only): the pure-Python walk (:mod:`focuscrawl.blocks.segment`) builds these,
the compiled one (``_cwalk.pyx``) returns a :class:`Walk` of its own typed twins, and
:mod:`focuscrawl.blocks.classify` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree


class Frame:
    """An open (then closed) block element and its subtree totals."""

    __slots__ = (
        "tag", "pre", "post", "parent", "children", "weight", "hidden", "unlikely", "noise",
        "chars", "link_chars", "commas", "n_p", "n_img", "n_li", "n_input", "n_embed", "leaf",
        "score", "candidate", "removed", "depth",
    )  # fmt: skip

    def __init__(self, tag: str, pre: int, parent: Frame | None, weight: float) -> None:
        self.tag = tag
        self.pre = pre  # preorder index among frames
        self.post = pre  # last preorder index inside this subtree (set at close)
        self.parent = parent
        self.children: list[Frame] = []
        self.weight = weight  # class/id (and CSS) weight of this element
        self.hidden = False
        self.unlikely = False  # class/id says "not the article" (this element or an ancestor)
        self.noise = False  # inside nav/aside/header/footer/form (this element or an ancestor)
        self.chars = 0
        self.link_chars = 0
        self.commas = 0
        self.n_p = self.n_img = self.n_li = self.n_input = self.n_embed = 0
        self.leaf = True  # no block element inside
        self.score = 0.0
        self.candidate = False
        self.removed = False
        self.depth = 0  # element depth, to recognise this frame's end event


class Segment:
    """A run of inline text (a block of the page) owned by one frame."""

    __slots__ = ("frame", "w0", "w1", "chars", "link_chars", "commas", "links")

    def __init__(self, frame: Frame, w0: int) -> None:
        self.frame = frame
        self.w0 = w0  # word span [w0, w1) in Walk.words
        self.w1 = w0
        self.chars = 0
        self.link_chars = 0
        self.commas = 0
        self.links: list[RawLink] = []


class RawLink:
    __slots__ = ("href", "el", "w0", "w1", "agg", "segment", "nofollow")

    def __init__(self, href: str, el: etree._Element, w0: int, agg: list[int], nofollow: bool):
        self.href = href
        self.el = el
        self.w0 = w0  # word span of the anchor text
        self.w1 = w0
        self.agg = agg  # [start, end] word span of the ζ-level aggregation node
        self.segment: Segment | None = None
        self.nofollow = nofollow


@dataclass(slots=True)
class Walk:
    frames: list[Frame] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    links: list[RawLink] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    cuts: dict[str, int] = field(default_factory=dict)  # budgets the walk hit (Page.cuts)
    # <button>s met (their subtrees are skipped) with their enclosing frame (blocks.cues)
    buttons: list[tuple[etree._Element, Frame]] = field(default_factory=list)


# An anchor past the page's link budget: its text still counts as link text, it makes no link.
UNRECORDED = RawLink("", None, 0, [0, 0], False)  # type: ignore[arg-type]
