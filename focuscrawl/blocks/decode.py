"""Bytes to text: BOM, the HTTP header charset (given by the caller), ``<meta charset>``, fallback.

Also tells binary bodies (images, archives, PDFs, anything with NUL bytes) from text, so the
partition returns an empty page with ``error="binary"`` instead of parsing garbage.
"""

from __future__ import annotations

import codecs
import re

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.+-]+)""", re.I)
_MAGIC = (
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"%PDF",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\x7fELF",
    b"RIFF",
    b"OggS",
    b"ID3",
    b"\x00\x00\x01\x00",
    b"wOFF",
    b"wOF2",
    b"7z\xbc\xaf",
)
_SNIFF_BYTES = 4096
_CONTROL_BYTES = bytes((1, 2, 3, 4, 5, 6, 14, 15, 16, 17, 18, 19, 20))


def is_binary(body: bytes) -> bool:
    """True for bodies that are not text: a known magic number or NUL / control bytes."""
    head = body[:_SNIFF_BYTES]
    if head.startswith(_MAGIC):
        return True
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False  # UTF-16 text is full of NULs
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))  # one pass, not 13
    return controls > len(head) // 20


def _lookup(name: str | None) -> str | None:
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'"))
    except LookupError:
        return None
    # Browsers treat "iso-8859-1" and "ascii" as windows-1252 (WHATWG encoding standard).
    if codec.name in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    return codec.name


def sniff_encoding(body: bytes, http_charset: str | None = None) -> str:
    """The encoding to decode ``body`` with: BOM, then HTTP charset, then ``<meta>``, then UTF-8."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    found = _lookup(http_charset)
    if found:
        return found
    m = _META_CHARSET.search(body[:_SNIFF_BYTES])
    if m:
        found = _lookup(m.group(1).decode("ascii", "replace"))
        if found and not found.startswith("utf-16") and not found.startswith("utf-32"):
            return found  # a <meta> read as ASCII cannot truthfully claim UTF-16
    return "utf-8"


def decode_html(body: bytes, http_charset: str | None = None) -> str:
    """Decode ``body``; a mislabelled page falls back to UTF-8, then windows-1252, never raises."""
    return decode_html_as(body, http_charset)[0]


def decode_html_as(body: bytes, http_charset: str | None = None) -> tuple[str, str]:
    """``decode_html`` and the codec it decoded with (``"utf-8"`` for most pages)."""
    encoding = sniff_encoding(body, http_charset)
    for bom, name in _BOMS:
        if name == encoding and body.startswith(bom):
            body = body[len(bom) :]
            break
    try:
        return body.decode(encoding), encoding
    except UnicodeDecodeError:
        pass
    if encoding != "utf-8":
        try:
            return body.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    return body.decode("cp1252", errors="replace"), "cp1252"
