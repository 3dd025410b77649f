"""``/changes.atom``: the changes page as an Atom feed (RFC 4287), one entry per changed page.

The entries are the changes page's (:func:`focuscrawl.web.changes.changes_data`: the last
recrawl's significant changes on the pages in the index, newest first), each with the page's
title, its link (only ``http(s)``), when it changed and the diff as escaped HTML content. An
entry's id is a ``urn:sha1`` of the URL and the time of the change, so a feed reader shows a page
again when it changes again. Everything from a crawled page is escaped by the XML writer, and
characters XML 1.0 cannot hold (control characters a hostile page may carry) are dropped, so the
feed is always well-formed.
"""

from __future__ import annotations

import hashlib
import re
import time
import xml.etree.ElementTree as ET
from typing import Any

from focuscrawl.web.changes import diff_html
from focuscrawl.web.pages import safe_href

ATOM = "http://www.w3.org/2005/Atom"
MAX_TITLE = 500  # characters of a page title in an entry
# what XML 1.0 cannot carry: C0 controls but tab/newline/CR, surrogates, U+FFFE/U+FFFF
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: Any, limit: int = 0) -> str:
    text = _NOT_XML.sub("", str(value))
    return text[:limit] if limit else text


def rfc3339(t: Any) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(t)))
    except (TypeError, ValueError, OverflowError, OSError):
        return "1970-01-01T00:00:00Z"


def entry_id(url: str, changed_at: Any) -> str:
    return (
        "urn:sha1:"
        + hashlib.sha1(f"{url}\n{changed_at}".encode(), usedforsecurity=False).hexdigest()
    )


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    if text is not None:
        el.text = text
    return el


def changes_atom(d: dict[str, Any], self_url: str) -> bytes:
    """The feed of ``d`` (:func:`~focuscrawl.web.changes.changes_data`) served at ``self_url``."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _sub(feed, "title", "focuscrawl: significant changes of relevant pages")
    _sub(feed, "subtitle", "the last recrawl's significant changes on the pages in the index")
    _sub(feed, "id", "urn:focuscrawl:changes:" + hashlib.sha1(self_url.encode()).hexdigest())
    _sub(feed, "link", rel="self", href=xml_text(self_url), type="application/atom+xml")
    _sub(feed, "link", rel="alternate", href=xml_text(self_url.rsplit(".atom", 1)[0]))
    author = _sub(feed, "author")
    _sub(author, "name", "focuscrawl")
    _sub(feed, "generator", "focuscrawl")
    changes = d.get("changes") or []
    newest = max((c.get("changed_at") or 0 for c in changes), default=None)
    crawl = d.get("crawl") or {}
    _sub(feed, "updated", rfc3339(newest if newest else crawl.get("finished") or time.time()))
    for c in changes:
        url = str(c.get("url", ""))
        entry = _sub(feed, "entry")
        _sub(entry, "title", xml_text(c.get("title") or url, MAX_TITLE), type="text")
        _sub(entry, "id", entry_id(url, c.get("changed_at")))
        _sub(entry, "updated", rfc3339(c.get("changed_at")))
        href = safe_href(url)
        if href:
            _sub(entry, "link", rel="alternate", href=xml_text(url))
        _sub(entry, "summary", xml_text(url), type="text")
        diff = c.get("change_diff") or {}
        html = diff_html(diff if isinstance(diff, dict) else {}) or "<p>changed</p>"
        _sub(entry, "content", xml_text(html), type="html")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(
        feed, encoding="utf-8", xml_declaration=False
    )
