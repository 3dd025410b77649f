"""Markup capped before the parse: attributes per start tag, start tags per page.

libxml2 checks every attribute of a start tag against the ones before it, so one tag with
100,000 attributes costs minutes; and its tree costs ~300 bytes per element. Neither can be
bounded inside lxml, so the page text is scanned first, as the HTML5 tokenizer reads it (which
libxml2 2.14 follows): comments, raw-text elements (``script``, ``style``, ``title`` …), quoted
attribute values that hide ``>``. Attributes of a start tag past ``max_attributes`` are removed,
and the text is cut before the start tag past ``max_elements``. Ordinary pages come back as they
were (the same object).

The scan is linear: each construct is read once, and one that runs to the end of the text (an
unclosed comment, quote or ``<script>``) ends the scan. ``_cwalk.markup_cuts`` is the same scan
compiled; ``markup_cuts_python`` is the reference (tests check that both agree). One
simplification: a ``<script>`` ends at the first ``</script``, even inside ``<!--<script>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from focuscrawl.blocks import rules
from focuscrawl.blocks.compiled import cwalk

_WS = "\t\n\f\r "
# One attribute as the tokenizer reads it: a name (its first character may be "="), then maybe
# "= value", quoted (to the closing quote or the end of the text) or not. Possessive and atomic:
# no backtracking, whatever the text.
_ATTRIBUTE = (
    rf"[^{_WS}/>][^{_WS}/>=]*+"
    rf"(?:[{_WS}]*+=[{_WS}]*+(?:\"[^\"]*+(?:\"|\Z)|'[^']*+(?:'|\Z)|[^{_WS}>]*+))?+"
)
# A start or end tag from "<": its name, then separators and attributes, then ">" (or the end).
_TAG = re.compile(rf"</?([a-zA-Z][^{_WS}/>]*+)(?:[{_WS}/]++|(?>{_ATTRIBUTE}))*+>?")
_PART = re.compile(rf"([{_WS}/]++)|{_ATTRIBUTE}")
_COMMENT_END = re.compile(r"--!?>")
# Elements whose content is text up to their end tag (libxml2 2.14, measured), and plaintext,
# whose content is the rest of the page.
RAW_TEXT = ("script", "style", "xmp", "iframe", "noembed", "noframes", "title", "textarea")
_RAW_END = {name: re.compile(rf"</{name}(?=[{_WS}/>])", re.I | re.A) for name in RAW_TEXT}
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def markup_cuts_python(
    text: str, max_attributes: int, max_elements: int
) -> tuple[list[tuple[int, int]], int, int]:
    """``(spans, end, dropped)``: the ``[start, stop)`` spans of attributes to remove, where
    to cut the text (-1: nowhere) and how many attributes the spans hold."""
    spans: list[tuple[int, int]] = []
    dropped = 0
    tags = 0
    n = len(text)
    pos = 0
    find = text.find
    while True:
        lt = find("<", pos)
        if lt < 0 or lt + 1 >= n:
            return spans, -1, dropped
        c = text[lt + 1]
        if c in _LETTERS:
            tags += 1
            if tags > max_elements:
                return spans, lt, dropped
            m = _TAG.match(text, lt)
            pos = m.end()  # type: ignore[union-attr]  # always matches: "<" and a letter
            if pos - lt > 2 * max_attributes:  # each attribute takes two characters at least
                count = _excess(text, m.end(1), pos, max_attributes)  # type: ignore[union-attr]
                if count:
                    stop = pos - 1 if text[pos - 1] == ">" else pos
                    spans.append((count[1], stop))
                    dropped += count[0]
            name = m.group(1).lower()  # type: ignore[union-attr]
            if name == "plaintext":
                return spans, -1, dropped
            raw = _RAW_END.get(name)
            if raw is not None:
                end = raw.search(text, pos)
                if end is None:
                    return spans, -1, dropped
                pos = end.start()
        elif c == "/":
            c2 = text[lt + 2 : lt + 3]
            if c2 and c2 in _LETTERS:
                pos = _TAG.match(text, lt).end()  # type: ignore[union-attr]
            elif c2 == ">":
                pos = lt + 3
            elif not c2:
                return spans, -1, dropped
            else:
                pos = _past(text, ">", lt + 2)
        elif c == "!":
            if text.startswith("<!--", lt):
                if text.startswith(">", lt + 4):
                    pos = lt + 5
                elif text.startswith("->", lt + 4):
                    pos = lt + 6
                else:
                    end = _COMMENT_END.search(text, lt + 4)
                    pos = -1 if end is None else end.end()
            else:
                pos = _past(text, ">", lt + 2)
        elif c == "?":
            pos = _past(text, ">", lt + 2)
        else:
            pos = lt + 1
        if pos < 0:  # a comment that never ends: the rest is inside it
            return spans, -1, dropped


def _past(text: str, what: str, start: int) -> int:
    at = text.find(what, start)
    return at + 1 if at >= 0 else -1


def _excess(text: str, start: int, stop: int, limit: int) -> tuple[int, int] | None:
    """(attributes past ``limit``, where the first of them starts) in ``text[start:stop]``."""
    count = 0
    first = -1
    for m in _PART.finditer(text, start, stop):
        if m.group(1) is None:
            count += 1
            if count == limit + 1:
                first = m.start()
    return (count - limit, first) if count > limit else None


def apply_cuts(text: str, spans: list[tuple[int, int]], end: int) -> str:
    """``text`` without ``spans`` and cut at ``end`` (-1: not cut)."""
    if end < 0:
        end = len(text)
    pieces = []
    last = 0
    for start, stop in spans:
        pieces.append(text[last:start])
        last = stop
    pieces.append(text[last:end])
    return "".join(pieces)


def cap_markup(
    text: str, max_attributes: int | None = None, max_elements: int | None = None
) -> tuple[str, int, bool]:
    """``(text, attributes removed, cut before a start tag)``: ``text`` itself when uncut.
    The budgets default to ``rules.MAX_ATTRIBUTES`` and ``rules.MAX_ELEMENTS``."""
    if max_attributes is None:
        max_attributes = rules.MAX_ATTRIBUTES
    if max_elements is None:
        max_elements = rules.MAX_ELEMENTS
    spans, end, dropped = _markup_cuts()(text, max_attributes, max_elements)
    if not spans and end < 0:
        return text, 0, False
    return apply_cuts(text, spans, end), dropped, end >= 0


_impl: Callable[[str, int, int], tuple[list[tuple[int, int]], int, int]] | None = None


def _markup_cuts() -> Callable[[str, int, int], tuple[list[tuple[int, int]], int, int]]:
    global _impl
    if _impl is None:  # looked up on first use, as css.py does
        compiled = cwalk()
        _impl = compiled.markup_cuts if compiled is not None else markup_cuts_python
    return _impl
