"""What marks a block as boilerplate, and the labels of the content's own buttons.

Change detection reads both beside the main text: ``Block.noise_cue`` tells a block that a cue
marks as chrome (hidden, inside nav/aside/header/footer/form/menu/dialog, an "unlikely" or
negative class/id such as cookie, banner, promo, advert) from text that is noise only because it
lies outside the chosen content (``""``); ``Page.labels`` are the short texts of the buttons
that sit in content ("Pre-order", "Sold out"), which are not page text. Both are read from the
walk's frames, the same for the compiled and the pure-Python walk (``_cwalk`` mirrors
:func:`noise_cue`); the work is capped per block and per page (:mod:`rules`).
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from lxml import etree

from focuscrawl.blocks import rules
from focuscrawl.blocks.sheet import declares_hidden


def noise_cue(kind: str, frame: Any) -> str:
    """The cue that marks a block of ``kind`` owned by ``frame`` as boilerplate, the chrome cues
    first: the tag of the nearest noise section (``"nav"``, ``"footer"``, ``"form"`` …;
    ``"section"`` past ``rules.MAX_CUE_CLIMB`` frames), ``"name"`` (class/id words),
    ``"hidden"`` (hidden, and no chrome cue), or ``""`` (not noise, or noise only for lying
    outside the main content)."""
    if kind != "noise":
        return ""
    if frame.noise:
        f = frame
        for _ in range(rules.MAX_CUE_CLIMB):
            if f is None:
                break
            if f.tag in rules.NOISE_SECTION_TAGS:
                return str(f.tag)
            f = f.parent
        return "section"
    if frame.unlikely or frame.weight < 0:
        return "name"
    if frame.hidden:
        return "hidden"
    return ""


def _in_chrome(frame: Any) -> bool:
    f = frame
    while f is not None:  # frames nest at most as deep as the parser allows (256)
        if f.tag in rules.CHROME_SECTION_TAGS:
            return True
        f = f.parent
    return False


def _label(el: etree._Element) -> str:
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return ""
    style = el.get("style")
    if style and declares_hidden(style):
        return ""
    texts = islice(el.itertext(), rules.MAX_LABEL_TEXT_NODES)
    words: list[str] = []
    for text in texts:
        words.extend(text.split()[: rules.MAX_LABEL_WORDS + 1])
        if len(words) > rules.MAX_LABEL_WORDS:
            return ""
    return " ".join(words)


def button_labels(buttons: list[tuple[etree._Element, Any]]) -> list[str]:
    """The labels of the walk's buttons (element, enclosing frame) that sit in content."""
    out: list[str] = []
    for el, frame in buttons:
        if frame.hidden or frame.unlikely or _in_chrome(frame):
            continue
        label = _label(el)
        if label:
            out.append(label)
    return out
