"""Crawled text made safe to print on a terminal (no Scrapy).

A page title or snippet is written by a stranger. Printed as is, ``\\x1b]0;evil\\x07`` retitles
the terminal window, ``\\x1b[2J`` clears the screen, a carriage return overwrites the line
before it, and the bidi overrides (U+202A–U+202E, U+2066–U+2069) show text in another order
than it is stored. :func:`terminal_safe` removes escape sequences whole, then every C0 control
(but tab and newline), DEL, C1 control and bidi override; :func:`terminal_line` also turns tabs
and newlines into spaces, for one-line fields. :func:`json_terminal_safe` escapes those
characters in JSON text instead (still the same data for a program that parses it).
"""

from __future__ import annotations

import re

# ESC sequences: CSI (ESC [ … final byte), OSC/DCS/SOS/PM/APC strings (ESC ] … BEL or ESC \),
# then any other two-character ESC sequence; the 8-bit C1 forms (U+009B CSI, U+009D OSC, …)
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x7e]?"
)
_BIDI = "\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# in JSON text, C0 controls are escaped already (json.dumps); DEL, C1 and bidi are not
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}]")


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences, control characters (tab and newline kept) and bidi
    overrides."""
    return _UNSAFE.sub("", _ESCAPES.sub("", text))


def terminal_line(text: str) -> str:
    """:func:`terminal_safe` on one line: tabs and newlines become spaces."""
    return terminal_safe(text).replace("\t", " ").replace("\n", " ")


def json_terminal_safe(json_text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with DEL, C1 controls and bidi
    overrides written as ``\\uXXXX`` escapes: the same JSON value, nothing a terminal acts on."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
