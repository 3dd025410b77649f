"""Does a page's HTML look like an empty script shell, a page whose text scripts write?

A single-page application sends a ``<div id="root"></div>``, a few script tags and perhaps a
``<noscript>`` asking for JavaScript; its text and links exist only once the scripts ran. An
ordinary page, server-rendered with or without scripts, has its text in the HTML. The verdict
reads the HTML once, left to right (one ``find`` per tag, no backtracking), and stops as soon
as the page shows more words than a shell would: linear, whatever the page. A page larger than
:data:`MAX_SCAN` is no shell (its text may start past any cap: pages with a megabyte of
``<head>`` exist). Text in ``<noscript>`` counts as visible: the partition reads it when the
rest of the page is empty (pages that serve crawlers their content there need no browser).

Pure: no Scrapy, no parser; bytes or text in, a :class:`ShellVerdict` out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: bytes (or characters) of the largest page judged; a shell is small
MAX_SCAN = 512 * 1024
#: a page with fewer visible words than this may be a shell; more is an ordinary page
MAX_WORDS = 60
#: with fewer words than this and any script, a page is a shell without another sign
BARE_WORDS = 8
#: with fewer words than this, one sign (a root element, many scripts, …) makes a shell; up
#: to MAX_WORDS only a ``<noscript>`` asking for JavaScript does
FEW_WORDS = 25
#: many scripts, or this much inline script against the visible text, is a sign
MANY_SCRIPTS = 4
SCRIPT_TEXT_RATIO = 20

#: ids and attributes of the elements single-page frameworks mount into
ROOT_MARKERS = re.compile(
    r"""<app-root\b|\b(?:id\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|react-root|"""
    r"""app-root|main-app|application|ember-app|q-app|appmount)["'\s>/]|ng-app\b|"""
    r"""data-reactroot\b|ng-version\b)""",
    re.IGNORECASE,
)
NOSCRIPT_HINT = re.compile(
    r"(?:enable|turn on|activate|requires?|need|without)\s+(?:\w+\s+){0,3}javascript|"
    r"javascript\s+(?:is\s+)?(?:required|disabled|needed|must be enabled)",
    re.IGNORECASE,
)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)|<!--|<!|<\?")
_WORD = re.compile(r"[^\W\d_]{2,}")  # words of letters: numbers and markup debris do not count
_ENTITY = re.compile(r"&#?\w{1,8};")
_SKIPPED = ("script", "style", "template", "title", "textarea", "svg")


@dataclass(frozen=True, slots=True)
class ShellVerdict:
    """What the scan found, and whether it adds up to a shell (``reasons`` say why)."""

    shell: bool
    words: int
    scripts: int
    script_chars: int
    root: bool
    noscript_hint: bool
    reasons: tuple[str, ...] = ()


def scan(html: bytes | str, max_words: int = MAX_WORDS) -> ShellVerdict:
    """The verdict on ``html`` (bytes are read as UTF-8 with errors replaced)."""
    if len(html) > MAX_SCAN:  # a shell is small; a page this large is judged no shell
        return ShellVerdict(False, 0, 0, 0, False, False, ("too large to judge",))
    if isinstance(html, bytes):
        html = html.decode("utf-8", "replace")
    lower = html.lower()
    words = scripts = script_chars = 0
    noscript = False
    pos, end = 0, len(html)
    while pos < end:
        lt = html.find("<", pos)
        if lt < 0:
            lt = end
        if lt > pos:
            words += _count_words(html, pos, lt)
            if words > max_words:
                break  # an ordinary page: no need to read on
        if lt >= end:
            break
        tag = _TAG.match(html, lt)
        if tag is None:  # a lone "<" in text
            pos = lt + 1
            continue
        token = tag.group(0)
        if token == "<!--":
            close = lower.find("-->", lt + 4)
            pos = end if close < 0 else close + 3
            continue
        if token in ("<!", "<?"):
            close = lower.find(">", lt)
            pos = end if close < 0 else close + 1
            continue
        name = tag.group(2).lower()
        gt = lower.find(">", tag.end())
        if gt < 0:
            break
        pos = gt + 1
        if tag.group(1):
            continue
        if name == "noscript" and not noscript:  # its text counts: the partition reads it
            noscript = NOSCRIPT_HINT.search(html, pos, min(end, pos + 1000)) is not None
        if name not in _SKIPPED:
            continue
        close = lower.find("</" + name, pos)
        if name == "script":
            scripts += 1
            script_chars += (end if close < 0 else close) - pos
        if close < 0:
            break
        gt = lower.find(">", close)
        pos = end if gt < 0 else gt + 1
    root = words <= max_words and ROOT_MARKERS.search(html) is not None
    return _verdict(words, scripts, script_chars, root, noscript, max_words)


def looks_like_shell(html: bytes | str, max_words: int = MAX_WORDS) -> bool:
    return scan(html, max_words).shell


def _count_words(html: str, start: int, stop: int) -> int:
    segment = html[start:stop]
    if "&" in segment:
        segment = _ENTITY.sub(" ", segment)
    return len(_WORD.findall(segment))


def _verdict(
    words: int, scripts: int, script_chars: int, root: bool, noscript: bool, max_words: int
) -> ShellVerdict:
    signs: list[str] = []
    if root:
        signs.append("root element")
    if noscript:
        signs.append("noscript asks for JavaScript")
    if scripts >= MANY_SCRIPTS:
        signs.append(f"{scripts} scripts")
    if script_chars > SCRIPT_TEXT_RATIO * max(words, 1) * 6:
        signs.append("more script than text")
    if not scripts or words > max_words:
        shell = False
    elif words < BARE_WORDS:  # scripts and next to no text: nothing to read without them
        signs.append(f"{words} visible words")
        shell = True
    elif words < FEW_WORDS:  # a little text (a header, "Loading…") and a sign of an app
        shell = bool(signs)
    else:  # a short page: only when it says itself that it needs JavaScript
        shell = noscript
    return ShellVerdict(
        shell=shell,
        words=words,
        scripts=scripts,
        script_chars=script_chars,
        root=root,
        noscript_hint=noscript,
        reasons=tuple(signs) if shell else (),
    )
