"""Visual cues from CSS: inline ``style`` attributes and the page's own ``<style>`` sheets.

Only the rules that can be matched without a selector engine are read: simple selectors by tag,
class or id (``div``, ``.nav``, ``#ad``, ``div.promo``; in a group ``a, .b``; the last compound
of a descendant selector). That covers the usual hiding rules and sidebar floats at the cost of a
dict look-up per element, with no per-node selector matching at run time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from focuscrawl.blocks import rules
from focuscrawl.blocks.compiled import cwalk
from focuscrawl.blocks.sheet import (
    ONE_PASS_NAMES,
    Braces,
    declares_hidden,
    declares_sidebar,
    shown,
    shown_names,
    strip_at_rules,
    strip_comments,
)

_NAMES = re.compile(r"([.#])([\w-]+)")
_SIMPLE = re.compile(r"^([a-zA-Z][\w-]*)?((?:[.#][\w-]+)*)$")


@dataclass(slots=True)
class StyleRules:
    """What the page's style sheets say about tags, classes and ids."""

    hidden_tags: set[str] = field(default_factory=set)
    hidden_classes: set[str] = field(default_factory=set)
    hidden_ids: set[str] = field(default_factory=set)
    sidebar_classes: set[str] = field(default_factory=set)
    sidebar_ids: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(
            self.hidden_tags
            or self.hidden_classes
            or self.hidden_ids
            or self.sidebar_classes
            or self.sidebar_ids
        )

    def cues(self, tag: str, classes: tuple[str, ...], el_id: str | None) -> tuple[bool, bool]:
        """(hidden, sidebar) of an element by its tag, class names and id."""
        hidden = (
            tag in self.hidden_tags
            or (el_id is not None and el_id in self.hidden_ids)
            or not self.hidden_classes.isdisjoint(classes)
        )
        sidebar = (el_id is not None and el_id in self.sidebar_ids) or not (
            self.sidebar_classes.isdisjoint(classes)
        )
        return hidden, sidebar

    def hidden(self, tag: str, classes: list[str], el_id: str | None) -> bool:
        if tag in self.hidden_tags or (el_id and el_id in self.hidden_ids):
            return True
        return any(c in self.hidden_classes for c in classes)

    def sidebar(self, classes: list[str], el_id: str | None) -> bool:
        if el_id and el_id in self.sidebar_ids:
            return True
        return any(c in self.sidebar_classes for c in classes)


# Lower-case text, no re.I: case-insensitive alternations are ~20x slower in ``re``.
_CUE = re.compile(
    r"(?:display|visibility|float|position)\s*:\s*(?:none|hidden|left|right|fixed|absolute|sticky)"
)
_sheet_cache: dict[str, list[tuple[str, bool]]] = {}
_SHEET_CACHE_SIZE = 64  # pages of one site share their sheets: parse each once
_SHEET_CACHE_CHARS = 4_000_000  # ... but a few giant sheets must not stay in memory for ever
_sheet_cache_chars = 0


def parse_sheets(
    sheets: list[str],
    names_in_use: Callable[[], tuple[set[str], set[str]]] | None = None,
    cuts: dict[str, int] | None = None,
) -> StyleRules:
    """Collect hiding and sidebar rules from ``<style>`` texts.

    ``names_in_use`` gives the class names and ids the page's elements carry: hiding rules for
    other names can match nothing, so they are dropped before the (costly, on big sheets)
    check that no other rule shows them again. The page's blocks come out the same either way.
    Sheets are read up to ``rules.MAX_CSS_CHARS`` characters and ``rules.MAX_CSS_SELECTORS``
    sheets and selectors in all; what is not read (and names over ``rules.MAX_CSS_NAME_CHARS``)
    is added to ``cuts["css"]`` in characters (a sheet read in part counts 1).
    """
    out = StyleRules()
    sheets, skipped = _within_budget(sheets)
    skipped += _read_rules(out, sheets)
    if skipped and cuts is not None:
        cuts["css"] = cuts.get("css", 0) + skipped
    if (out.hidden_classes or out.hidden_ids) and names_in_use is not None:
        classes, ids = names_in_use()
        out.hidden_classes &= classes
        out.hidden_ids &= ids
    if out.hidden_classes or out.hidden_ids:
        text = "\n".join(sheets)
        names = {"." + n for n in out.hidden_classes} | {"#" + n for n in out.hidden_ids}
        if len(names) > ONE_PASS_NAMES:
            again = shown_names(text, names)
        else:
            again = {name for name in names if shown(text, name)}
        out.hidden_classes = {n for n in out.hidden_classes if "." + n not in again}
        out.hidden_ids = {n for n in out.hidden_ids if "#" + n not in again}
    return out


def _read_rules(out: StyleRules, sheets: list[str]) -> int:
    """Add the sheets' rules to ``out`` within ``rules.MAX_CSS_SELECTORS``; the characters
    not read (and of names too long to take)."""
    units = rules.MAX_CSS_SELECTORS
    skipped = 0
    for index, sheet in enumerate(sheets):
        units -= 1  # a sheet costs something even without a rule worth reading
        if units < 0:
            return skipped + sum(len(s) for s in sheets[index:])
        for selectors, hidden in _cue_rules(sheet, units + 1):
            for selector in selectors.split(","):
                units -= 1
                if units < 0:
                    return skipped + 1 + sum(len(s) for s in sheets[index + 1 :])
                skipped += _add_selector(out, selector, hidden)
    return skipped


def _within_budget(sheets: list[str]) -> tuple[list[str], int]:
    """The sheets cut to ``rules.MAX_CSS_CHARS``, and how many characters were left out."""
    total = sum(len(s) for s in sheets)
    if total <= rules.MAX_CSS_CHARS:
        return sheets, 0
    kept: list[str] = []
    left = rules.MAX_CSS_CHARS
    for sheet in sheets:
        if left <= 0:
            break
        kept.append(sheet[:left])
        left -= len(kept[-1])
    return kept, total - rules.MAX_CSS_CHARS


def _cue_rules(sheet: str, limit: int = rules.MAX_CSS_SELECTORS) -> list[tuple[str, bool]]:
    """``(selectors, hides)`` of the top-level rules that hide (True) or float (False)
    something, from the first ``limit`` rules with a cue (a list cut short is not cached).

    Read by the compiled ``_cwalk.sheet_rules`` where the compiled cue scan is used, else by
    :func:`cue_rules_python` (the same list).
    """
    hit = _sheet_cache.get(sheet)
    if hit is not None:
        return hit
    compiled = None if _load_cue_starts() is cue_starts_python else cwalk()
    read = compiled.sheet_rules(sheet, limit) if compiled is not None else None
    found, whole = read if read is not None else cue_rules_python(sheet, limit)
    if not whole:
        return found
    global _sheet_cache_chars
    if len(_sheet_cache) >= _SHEET_CACHE_SIZE or _sheet_cache_chars > _SHEET_CACHE_CHARS:
        _sheet_cache.clear()
        _sheet_cache_chars = 0
    _sheet_cache[sheet] = found
    _sheet_cache_chars += len(sheet)
    return found


def cue_rules_python(sheet: str, limit: int) -> tuple[list[tuple[str, bool]], bool]:
    """``(selectors, hides)`` of the rules of ``sheet`` with a hiding or floating cue, among its
    first ``limit`` top-level rules with a ``_CUE``; and whether the sheet was read to its end.

    Rules inside ``@media`` / ``@supports`` apply only to some screens, so they are not taken as
    the page's state (a phone layout hiding the sidebar says nothing about the article).
    """
    text = strip_at_rules(strip_comments(sheet))
    starts = _folded_cue_starts(text)
    if starts is None:
        lowered = text.lower()
        if len(lowered) != len(text):  # a non-ASCII case mapping changed the length
            text = lowered  # (only U+0130 does): offsets shift, so read the lowered text
        starts = _cue_starts(lowered)
    found: list[tuple[str, bool]] = []
    count = 0
    braces = Braces(text)
    last_open = -1
    for pos in starts:
        open_at = braces.before("{", pos)
        last_close = braces.before("}", pos)
        if open_at <= last_open or open_at < last_close:
            continue  # same rule as the previous cue, or not inside a rule body
        last_open = open_at
        # The selectors start after the last brace before the rule's "{". A "{" there opens a
        # block around this rule (CSS nesting, or a stray brace): the rule then applies only
        # inside it, which the "{ " in front says (_add_selector takes no hiding rule from a
        # descendant selector). Reading from the "}" instead would read the same text again
        # for every rule inside an unclosed block.
        outer = text.rfind("{", last_close + 1, open_at)
        selectors = text[max(last_close, outer) + 1 : open_at].strip()
        if outer >= 0:
            selectors = "{ " + selectors
        # The declarations end at the next brace: a "{" in them opens a nested rule.
        stop = len(text)
        for brace in ("}", "{"):
            at = braces.after(brace, pos)
            if 0 <= at < stop:
                stop = at
        body = text[open_at + 1 : stop]
        count += 1
        hidden = declares_hidden(body)
        # (not e.g. "display: hidden", not a value, nor "float: none")
        if hidden or declares_sidebar(body):
            found.append((selectors, hidden))
        if count >= limit:
            return found, False
    return found, True


def cue_starts_python(text: str) -> list[int]:
    """Where the hiding / floating declarations (``_CUE``) start in ``text``."""
    return [m.start() for m in _CUE.finditer(text)]


def _load_cue_starts() -> Callable[..., list[int]]:
    global _cue_starts_impl
    if _cue_starts_impl is None:  # looked up on first use (tests swap it for the Python scan)
        compiled = cwalk()
        _cue_starts_impl = compiled.cue_starts if compiled is not None else cue_starts_python
    return _cue_starts_impl


def _cue_starts(text: str) -> list[int]:
    return _load_cue_starts()(text)


def _folded_cue_starts(text: str) -> list[int] | None:
    """``_cue_starts(text.lower())`` without lower-casing ``text``; None without the compiled
    scan or when ``text`` holds U+0130 (the one character whose lower case is longer)."""
    impl = _load_cue_starts()
    return None if impl is cue_starts_python else impl(text, True)


_cue_starts_impl: Callable[..., list[int]] | None = None


def _add_selector(out: StyleRules, selector: str, hidden: bool) -> int:
    """Add the rule's name, if ``selector`` is simple; the characters of a name too long to
    take (``rules.MAX_CSS_NAME_CHARS``), else 0."""
    parts = selector.split()
    if not parts or ":" in parts[-1] or "[" in parts[-1]:
        return 0  # pseudo-classes (:hover …) and attribute selectors: not static page state
    if len(parts) > 1 and hidden:
        return 0  # ".menu .sub {display:none}" hides a descendant only in context: skip
    m = _SIMPLE.match(parts[-1])
    if m is None:
        return 0
    tag, rest = m.group(1), m.group(2)
    names = _NAMES.findall(rest)
    if not names:
        if tag and hidden and tag.lower() not in ("html", "body", "div", "p", "span", "a"):
            out.hidden_tags.add(tag.lower())
        return 0
    if len(names) > 1:
        return 0  # compound ".a.b": too specific to apply to a single name
    kind, name = names[0]
    if len(name) > rules.MAX_CSS_NAME_CHARS:
        return len(name)  # each hidden name becomes part of a regular expression (shown_names)
    if kind == ".":
        (out.hidden_classes if hidden else out.sidebar_classes).add(name)
    else:
        (out.hidden_ids if hidden else out.sidebar_ids).add(name)
    return 0
