"""The partitioned page: what every later stage (relevance, frontier, change, index) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["text", "link", "noise"]


@dataclass(slots=True)
class Link:
    """An out-link with what the frontier needs to score it."""

    url: str  # absolute, fragment removed
    anchor: str  # anchor text (or image alt / title)
    context: str = ""  # ζ-IDOM link context: text around the anchor, bounded by a word window
    block_id: int = -1  # id of the enclosing block (index into Page.blocks), -1 when none
    block_kind: BlockKind = "text"
    block_weight: float = 0.5  # how strongly the enclosing block looks like content (0..1)
    noise: bool = False  # navigation, footer, ads, template links: marked, not dropped
    nofollow: bool = False
    template: bool = False  # repeated on most pages of its host (blocks.template.TemplateLinks)


@dataclass(slots=True)
class Block:
    id: int
    kind: BlockKind
    text: str
    weight: float  # content-likeness in [0, 1]
    tag: str = ""
    links: list[Link] = field(default_factory=list)
    # Which cue marks a noise block as boilerplate (blocks.cues.noise_cue), chrome cues first:
    # the tag of its noise section ("nav", "aside", "header", "footer", "form", "menu",
    # "dialog"; "section" when deeper than the climb), "name" (a class/id word: cookie, banner,
    # promo, advert …), "hidden" (hidden, no chrome cue) or "" (not noise, or noise only for
    # lying outside the main content). Kept when blocks.fit reads the block as text after all
    # (a fallback, hidden tabs read as content).
    noise_cue: str = ""


@dataclass(slots=True)
class Page:
    url: str
    title: str = ""
    blocks: list[Block] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    base_url: str = ""  # <base href> when present, else the page URL
    error: str = ""  # why the page could not be parsed (binary, empty, …); "" when fine
    # Budgets the page hit (blocks.rules): name -> how much was cut (links, attributes, CSS
    # characters …; 1 where not counted). Empty for a page read whole.
    cuts: dict[str, int] = field(default_factory=dict)
    # What kind of page this is (blocks.kind): article, forum, product, listing, collection,
    # service, documentation or other (evidence too thin), with a confidence in [0, 1].
    kind: str = "other"
    kind_confidence: float = 0.0
    # Short labels of the buttons that sit in content, not in chrome (blocks.cues): "Add to
    # cart", "Pre-order", "Sold out". Not part of main_text / text (buttons are not page text);
    # for change detection. In document order, at most rules.MAX_LABELS buttons read.
    labels: list[str] = field(default_factory=list)
    # Product facts the page declares in JSON-LD, microdata <meta>/<link> and OpenGraph
    # (blocks.structured): "price: 999.00", "availability: InStock", "memory: 16 GB" … Not part
    # of main_text / text unless the page shows no text of its own; for change detection.
    facts: list[str] = field(default_factory=list)

    @property
    def main_text(self) -> str:
        """The topic text: the text blocks in document order."""
        return "\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)

    @property
    def text(self) -> str:
        """All visible text of the page, every block kind."""
        return "\n".join(b.text for b in self.blocks if b.text)
