"""Style sheet text read in linear time: comments and at-rules removed, braces found.

A page's ``<style>`` is written by a stranger: an unclosed comment, an ``@`` that never ends or
a ``{`` never closed must not make any step rescan the rest of the sheet from every position
(``/*a`` x 150,000 or ``@`` x 300,000 kept a backtracking regex busy for minutes). Every
function here reads each character a bounded number of times.
"""

from __future__ import annotations

import re

from focuscrawl.blocks import rules

_BRACE = re.compile(r"[{}]")
# One at-rule from its "@": the prelude, then ";" (a line), or a block of rules one level deep
# (the usual @media), or nothing: a deeper or unclosed block, a "}", the end (the caller looks).
# Possessive: a failed block is not tried again shorter, and an "@" inside a prelude is passed
# over with it, never tried on its own (which made "@" x 300,000 quadratic).
_AT_RULE = re.compile(r"@[^{};]*+(?:;|\{(?:[^{}]*+\{[^{}]*+\})*+[^{}]*+\}|)")


def strip_comments(text: str) -> str:
    """``text`` without ``/* … */`` comments; an unclosed comment is left as it is (as the
    lazy regex ``/\\*.*?\\*/`` did: it found no end for it, nor for any comment after it)."""
    start = text.find("/*")
    if start < 0:
        return text
    pieces = []
    last = 0
    while start >= 0:
        end = text.find("*/", start + 2)
        if end < 0:
            break  # no "*/" after this one: none after any later "/*" either
        pieces.append(text[last:start])
        last = end + 2
        start = text.find("/*", last)
    pieces.append(text[last:])
    return "".join(pieces)


def strip_at_rules(text: str) -> str:
    """``text`` without its at-rules: ``@name …;`` lines are removed, ``@name … { … }`` blocks
    (nested to any depth) become ``}``, which ends the selector text before them. A block
    that is never closed runs to the end of the sheet (CSS closes it there), so the rest goes."""
    if "@" not in text:
        return text
    pieces = []
    last = 0
    size = len(text)
    m = _AT_RULE.search(text)
    while m is not None:
        start, end = m.span()
        if text[end - 1] == ";":
            pieces.append(text[last:start])
            last = end
        elif text[end - 1] == "}":
            pieces.append(text[last:start])
            pieces.append("}")
            last = end
        elif end < size and text[end] == "{":  # nested deeper: count the braces
            pieces.append(text[last:start])
            pieces.append("}")
            end = _block_end(text, end + 1)
            if end < 0:
                return "".join(pieces)
            last = end
        elif end >= size:
            break
        m = _AT_RULE.search(text, end)
    pieces.append(text[last:])
    return "".join(pieces)


def _block_end(text: str, pos: int) -> int:
    """Just past the "}" that closes the block opened before ``pos``; -1 when none does."""
    depth = 1
    for m in _BRACE.finditer(text, pos):
        depth += 1 if m.group() == "{" else -1
        if depth == 0:
            return m.end()
    return -1


class Braces:
    """The nearest ``{`` or ``}`` after or before a position, in amortised constant time.

    Asked at growing positions (as the rules of a sheet are read, left to right), each cached
    answer stays good until the position passes it, so every stretch of the text is searched
    once; ``text.find`` from every position would search the same unclosed stretch again and
    again. Any order of questions gets the right answer, only slower.
    """

    __slots__ = ("text", "_after", "_before")

    def __init__(self, text: str) -> None:
        self.text = text
        # ch -> (start, first ch at or after start, -1: none) and (end, last ch before end)
        self._after: dict[str, tuple[int, int]] = {}
        self._before: dict[str, tuple[int, int]] = {}

    def after(self, ch: str, pos: int) -> int:
        """Where the first ``ch`` at or after ``pos`` is; -1 when there is none."""
        cached = self._after.get(ch)
        if cached is not None:
            start, found = cached
            if start <= pos and (found < 0 or found >= pos):
                return found
        found = self.text.find(ch, pos)
        self._after[ch] = (pos, found)
        return found

    def before(self, ch: str, pos: int) -> int:
        """Where the last ``ch`` before ``pos`` is; -1 when there is none."""
        end, found = self._before.get(ch, (0, -1))
        if pos < end:
            return self.text.rfind(ch, 0, pos)
        hit = self.text.rfind(ch, end, pos)
        found = hit if hit >= 0 else found
        self._before[ch] = (pos, found)
        return found


_SHOWN = re.compile(r"display\s*:\s*(?!none)[a-z]|visibility\s*:\s*visible", re.I)


def shown(text: str, name: str) -> bool:
    """True when some rule naming ``name`` (a later one, a media query, a descendant selector)
    shows it again: the cascade may undo the hiding, so the page is not taken as hiding it."""
    braces = Braces(text)
    memo: dict[int, bool] = {}
    pos = text.find(name)
    seen = 0
    while pos >= 0 and seen < MAX_OCCURRENCES:
        seen += 1
        end = pos + len(name)
        if _name_ends(text, end) and block_shows(text, braces, end, memo):
            return True
        pos = text.find(name, end)
    return False


def block_shows(text: str, braces: Braces, end: int, memo: dict[int, bool]) -> bool:
    """Whether the rule block after ``end`` (up to its "}", or a "{" nested in it) shows
    something again. Each block is searched once (``memo``), and blocks do not overlap."""
    open_at = braces.after("{", end)
    if open_at < 0:
        return False
    hit = memo.get(open_at)
    if hit is None:
        close_at = braces.after("}", open_at)
        inner = text.find("{", open_at + 1, close_at if close_at >= 0 else len(text))
        stop = inner if inner >= 0 else close_at
        hit = close_at >= 0 and _SHOWN.search(text, open_at, stop) is not None
        memo[open_at] = hit
    return hit


# More hidden names than this are looked up in one pass over the sheets (a pass costs about as
# much as four shown scans).
ONE_PASS_NAMES = 8
MAX_OCCURRENCES = 50  # occurrences of a name looked at by shown


def shown_names(text: str, names: set[str]) -> set[str]:
    """``{name for name in names if shown(text, name)}`` in one pass over ``text``.

    A prefix-factored pattern of the names finds, at each place, the longest name there; the
    names that are its prefixes are there too (a name is ``[.#]`` and word characters, so two
    places never overlap). Each name's first occurrences are then checked as ``shown`` does.
    """
    ordered = sorted(names)
    pattern = re.compile(trie_pattern(ordered))
    covers = _prefixes(ordered)
    places: dict[str, list[int]] = {}
    for m in pattern.finditer(text):
        for name in covers[m.group()]:
            found = places.setdefault(name, [])
            if len(found) < MAX_OCCURRENCES:
                found.append(m.start())
    out: set[str] = set()
    braces = Braces(text)
    memo: dict[int, bool] = {}
    # Places in text order, so that the brace look-ups move forward through the text.
    todo = sorted((pos, name) for name, found in places.items() for pos in found)
    for pos, name in todo:
        end = pos + len(name)
        if name not in out and _name_ends(text, end) and block_shows(text, braces, end, memo):
            out.add(name)
    return out


def _name_ends(text: str, end: int) -> bool:
    """No name character at ``end``: the name found before it is whole (".x" in ".x-y" is not)."""
    return end >= len(text) or not (text[end].isalnum() or text[end] in "-_")


def _prefixes(ordered: list[str]) -> dict[str, list[str]]:
    """For each of the sorted names, the names that are its prefixes (itself included).

    A name's prefixes come before it in sorted order, and every name between a prefix and the
    name starts with the prefix: a stack of the names that are prefixes of the current one
    holds them all, in time linear in the names (slicing every prefix of every name would be
    quadratic in their length).
    """
    out: dict[str, list[str]] = {}
    stack: list[str] = []
    for name in ordered:
        while stack and not name.startswith(stack[-1]):
            stack.pop()
        stack.append(name)
        out[name] = list(stack)
    return out


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


# The rules' patterns (lower case) without re.I, on lower-cased text: 4x faster on a 2 MB style.
_HIDDEN = re.compile(rules.HIDDEN_STYLE_RE.pattern)
_SIDEBAR = re.compile(rules.SIDEBAR_STYLE_RE.pattern)


def declares_hidden(declarations: str) -> bool:
    """``rules.HIDDEN_STYLE_RE`` found in ``declarations`` (a ``style`` attribute, a rule's body)."""
    return _HIDDEN.search(declarations.lower()) is not None


def declares_sidebar(declarations: str) -> bool:
    """``rules.SIDEBAR_STYLE_RE`` found in ``declarations`` (a ``style`` attribute, a rule's body)."""
    return _SIDEBAR.search(declarations.lower()) is not None
