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

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_NAMES = re.compile(r"([.#])([\w-]+)")
_SIMPLE = re.compile(r"^([a-zA-Z][\w-]*)?((?:[.#][\w-]+)*)$")
_MAX_SHEET_CHARS = 500_000  # bounded work on giant inline sheets


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


_AT_BLOCK = re.compile(r"@[^{};]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}")  # one nesting level
_AT_LINE = re.compile(r"@[^{};]*;")
# Lower-case text, no re.I: case-insensitive alternations are ~20x slower in ``re``.
_CUE = re.compile(
    r"(?:display|visibility|float|position)\s*:\s*(?:none|hidden|left|right|fixed|absolute|sticky)"
)
_sheet_cache: dict[str, list[tuple[str, str]]] = {}
_SHEET_CACHE_SIZE = 64  # pages of one site share their sheets: parse each once


def parse_sheets(
    sheets: list[str], names_in_use: Callable[[], tuple[set[str], set[str]]] | None = None
) -> StyleRules:
    """Collect hiding and sidebar rules from ``<style>`` texts.

    ``names_in_use`` gives the class names and ids the page's elements carry: hiding rules for
    other names can match nothing, so they are dropped before the (costly, on big sheets)
    check that no other rule shows them again. The page's blocks come out the same either way.
    """
    out = StyleRules()
    for sheet in sheets:
        for selectors, body in _cue_rules(sheet):
            hidden = rules.HIDDEN_STYLE_RE.search(body) is not None
            if not hidden and not rules.SIDEBAR_STYLE_RE.search(body):
                continue  # e.g. "display: hidden" (not a value) or "float: none"
            for selector in selectors.split(","):
                _add_selector(out, selector, hidden)
    if (out.hidden_classes or out.hidden_ids) and names_in_use is not None:
        classes, ids = names_in_use()
        out.hidden_classes &= classes
        out.hidden_ids &= ids
    if out.hidden_classes or out.hidden_ids:
        text = "\n".join(sheets)
        names = {"." + n for n in out.hidden_classes} | {"#" + n for n in out.hidden_ids}
        if len(names) > _ONE_PASS_NAMES:
            shown = _shown_names(text, names)
        else:
            shown = {name for name in names if _shown(text, name)}
        out.hidden_classes = {n for n in out.hidden_classes if "." + n not in shown}
        out.hidden_ids = {n for n in out.hidden_ids if "#" + n not in shown}
    return out


_SHOWN = re.compile(r"display\s*:\s*(?!none)[a-z]|visibility\s*:\s*visible", re.I)


def _shown(text: str, name: str) -> bool:
    """True when some rule naming ``name`` (a later one, a media query, a descendant selector)
    shows it again: the cascade may undo the hiding, so the page is not taken as hiding it."""
    pos = text.find(name)
    seen = 0
    while pos >= 0 and seen < _MAX_OCCURRENCES:
        seen += 1
        end = pos + len(name)
        if end >= len(text) or not (text[end].isalnum() or text[end] in "-_"):
            open_at = text.find("{", end)
            close_at = text.find("}", open_at)
            if open_at >= 0 and close_at >= 0 and _SHOWN.search(text, open_at, close_at):
                return True
        pos = text.find(name, end)
    return False


# More hidden names than this are looked up in one pass over the sheets (a pass costs about as
# much as four _shown scans).
_ONE_PASS_NAMES = 8
_MAX_OCCURRENCES = 50  # occurrences of a name looked at by _shown


def _shown_names(text: str, names: set[str]) -> set[str]:
    """``{name for name in names if _shown(text, name)}`` in one pass over ``text``.

    A prefix-factored pattern of the names finds, at each place, the longest name there; the
    names that are its prefixes are there too (a name is ``[.#]`` and word characters, so two
    places never overlap). Each name's first occurrences are then checked as ``_shown`` does.
    """
    ordered = sorted(names)
    pattern = re.compile(trie_pattern(ordered))
    covers = {m: [m[:k] for k in range(2, len(m) + 1) if m[:k] in names] for m in ordered}
    places: dict[str, list[int]] = {}
    for m in pattern.finditer(text):
        for name in covers[m.group()]:
            found = places.setdefault(name, [])
            if len(found) < _MAX_OCCURRENCES:
                found.append(m.start())
    shown: set[str] = set()
    size = len(text)
    for name, found in places.items():
        for pos in found:
            end = pos + len(name)
            if end >= size or not (text[end].isalnum() or text[end] in "-_"):
                open_at = text.find("{", end)
                close_at = text.find("}", open_at)
                if open_at >= 0 and close_at >= 0 and _SHOWN.search(text, open_at, close_at):
                    shown.add(name)
                    break
    return shown


def trie_pattern(words: list[str]) -> str:
    """An alternation of ``words`` factored by common prefixes (``foot(?:er)?|…``).

    It matches what the longest-first alternation ``footer|foot|…`` matches (a word that ends
    where a longer one goes on is an optional, greedy continuation), but ``re`` no longer tries
    every word at every position.
    """
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:  # type: ignore[type-arg]
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return build(trie)


def _cue_rules(sheet: str) -> list[tuple[str, str]]:
    """``(selectors, declarations)`` of the top-level rules that hide or float something.

    Rules inside ``@media`` / ``@supports`` apply only to some screens, so they are not taken as
    the page's state (a phone layout hiding the sidebar says nothing about the article).
    """
    hit = _sheet_cache.get(sheet)
    if hit is not None:
        return hit
    text = sheet[:_MAX_SHEET_CHARS]
    if "/*" in text:
        text = _COMMENT.sub("", text)
    if "@" in text:
        text = _AT_BLOCK.sub("}", text)
        if "@" in text:  # (no "@" left: no at-rule line to remove)
            text = _AT_LINE.sub("", text)
    starts = _folded_cue_starts(text)
    if starts is None:
        lowered = text.lower()
        if len(lowered) != len(text):  # a non-ASCII case mapping changed the length
            text = lowered  # (only U+0130 does): offsets shift, so read the lowered text
        starts = _cue_starts(lowered)
    found: list[tuple[str, str]] = []
    last_open = -1
    for pos in starts:
        open_at = text.rfind("{", 0, pos)
        if open_at <= last_open or open_at < text.rfind("}", 0, pos):
            continue  # same rule as the previous cue, or not inside a rule body
        last_open = open_at
        close_at = text.find("}", pos)
        selectors = text[text.rfind("}", 0, open_at) + 1 : open_at].strip()
        found.append((selectors, text[open_at + 1 : close_at if close_at >= 0 else len(text)]))
    if len(_sheet_cache) >= _SHEET_CACHE_SIZE:
        _sheet_cache.clear()
    _sheet_cache[sheet] = found
    return found


def cue_starts_python(text: str) -> list[int]:
    """Where the hiding / floating declarations (``_CUE``) start in ``text``."""
    return [m.start() for m in _CUE.finditer(text)]


def _load_cue_starts() -> Callable[..., list[int]]:
    global _cue_starts_impl
    if _cue_starts_impl is None:  # imported on first use: _cwalk imports this module's users
        from focuscrawl.blocks.segment import compiled_walk

        if compiled_walk is not None:  # the compiled module loaded and is current
            from focuscrawl.blocks._cwalk import cue_starts
        else:
            cue_starts = cue_starts_python
        _cue_starts_impl = cue_starts
    return _cue_starts_impl


def _cue_starts(text: str) -> list[int]:
    return _load_cue_starts()(text)


def _folded_cue_starts(text: str) -> list[int] | None:
    """``_cue_starts(text.lower())`` without lower-casing ``text``; None without the compiled
    scan or when ``text`` holds U+0130 (the one character whose lower case is longer)."""
    impl = _load_cue_starts()
    return None if impl is cue_starts_python else impl(text, True)


_cue_starts_impl: Callable[..., list[int]] | None = None


def _add_selector(out: StyleRules, selector: str, hidden: bool) -> None:
    parts = selector.split()
    if not parts or ":" in parts[-1] or "[" in parts[-1]:
        return  # pseudo-classes (:hover …) and attribute selectors: not static page state
    if len(parts) > 1 and hidden:
        return  # ".menu .sub {display:none}" hides a descendant only in context: skip
    m = _SIMPLE.match(parts[-1])
    if m is None:
        return
    tag, rest = m.group(1), m.group(2)
    names = _NAMES.findall(rest)
    if not names:
        if tag and hidden and tag.lower() not in ("html", "body", "div", "p", "span", "a"):
            out.hidden_tags.add(tag.lower())
        return
    if len(names) > 1:
        return  # compound ".a.b": too specific to apply to a single name
    kind, name = names[0]
    if kind == ".":
        (out.hidden_classes if hidden else out.sidebar_classes).add(name)
    else:
        (out.hidden_ids if hidden else out.sidebar_ids).add(name)


def inline_hidden(style: str) -> bool:
    return rules.HIDDEN_STYLE_RE.search(style) is not None


def inline_sidebar(style: str) -> bool:
    return rules.SIDEBAR_STYLE_RE.search(style) is not None
