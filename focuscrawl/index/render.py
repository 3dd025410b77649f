"""Search hits as terminal text, JSON-ready dicts and escaped HTML."""

from __future__ import annotations

import html
from typing import Any

from focuscrawl.index.store import HIT_END, HIT_START, Hit


def snippet_text(snippet: str, start: str = "[", end: str = "]") -> str:
    """The snippet with matched words between ``start`` and ``end``."""
    return snippet.replace(HIT_START, start).replace(HIT_END, end)


def snippet_html(snippet: str) -> str:
    """The snippet HTML-escaped, matched words in ``<mark>``: safe to put in a page."""
    # escaping first cannot touch the markers (private-use characters, not HTML-special)
    return html.escape(snippet).replace(HIT_START, "<mark>").replace(HIT_END, "</mark>")


def hit_dict(hit: Hit) -> dict[str, Any]:
    return {
        "url": hit.url,
        "title": hit.title,
        "snippet": snippet_text(hit.snippet, "", ""),
        "highlighted": snippet_text(hit.snippet, "<<", ">>"),
        "relevance": round(hit.relevance, 4),
        "authority": round(hit.authority, 4),
        "bm25": round(hit.bm25, 4),
        "score": round(hit.score, 4),
        "fetched_at": hit.fetched_at,
    }
