"""HTML text to an lxml tree, one parser per thread, and what libxml2's own limits cut off.

No ``huge_tree``: libxml2 then stops a document nested 256 deep and drops a text node over
10 MB, ending the parse there. That bounds its work on hostile pages (``huge_tree`` only moves
the depth limit to 2048 and keeps 1 GB text nodes); the pages it cuts are reported, so the
partition records them as cut (``depth``, ``text``) instead of passing them off as whole.
"""

from __future__ import annotations

import threading

from lxml import etree

_local = threading.local()
# collect_ids=False: no table of id attributes (for getElementById / XPath id(), never used
# here); the tree is the same.
_PARSER_OPTIONS = {"remove_comments": True, "remove_pis": True, "no_network": True,
                   "collect_ids": False}  # fmt: skip
_RESOURCE_LIMIT = etree.ErrorTypes.ERR_RESOURCE_LIMIT


def _parser() -> etree.HTMLParser:
    # lxml parsers are not thread-safe: one per thread.
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.HTMLParser(**_PARSER_OPTIONS)
        _local.parser = parser
    return parser


def _utf8_parser() -> etree.HTMLParser:
    parser = getattr(_local, "utf8_parser", None)
    if parser is None:
        parser = etree.HTMLParser(encoding="utf-8", **_PARSER_OPTIONS)
        _local.utf8_parser = parser
    return parser


def parse(html: str | bytes) -> tuple[etree._Element | None, str]:
    """The root element of ``html`` (None when there is nothing to parse) and the limit that
    ended the parse early: ``"depth"``, ``"text"`` (a text node, or another size limit) or "".
    Bytes must be valid UTF-8 (their ``<meta charset>`` is not read)."""
    parser = _utf8_parser() if isinstance(html, bytes) else _parser()
    try:
        root = etree.fromstring(html, parser)
    except ValueError:
        if isinstance(html, bytes):
            raise
        # "Unicode strings with encoding declaration are not supported": parse the UTF-8 bytes.
        parser = etree.HTMLParser(encoding="utf-8", **_PARSER_OPTIONS)
        root = etree.fromstring(html.encode("utf-8", "replace"), parser)
    except etree.ParserError:
        return None, ""
    return root, _limit_hit(parser)


def _limit_hit(parser: etree.HTMLParser) -> str:
    # The log of the last parse: empty for almost every page (libxml2 2.14 reports little).
    for error in parser.error_log:
        if error.type == _RESOURCE_LIMIT:
            return "depth" if "depth" in error.message else "text"
    return ""


def parse_html(text: str) -> etree._Element | None:
    """The root element of ``text`` parsed as HTML, None when there is nothing to parse."""
    return parse(text)[0]


def parse_utf8(body: bytes) -> etree._Element | None:
    """The root element of ``body``, valid UTF-8 (its ``<meta charset>`` is not read)."""
    return parse(body)[0]
