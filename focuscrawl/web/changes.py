"""The changes page: the significant changes the last recrawl found, each with its diff.

It lists the pages in the index, that is the relevant ones (irrelevant pages are not indexed),
and says so; the dashboard's counts are over every page the recrawl revisited, so the page also
gives that crawl's count over all pages (``all_significant``) to show how the two relate.

What changed comes from the index (each page's last significant change, stored by the index
pipeline: :meth:`focuscrawl.index.store.PageIndex.last_changes`). Fragments added are shown green,
fragments removed red, moved fragments grey; content links added and removed as links (only
``http(s)`` targets are linked). Every string from a crawled page is escaped here.
"""

from __future__ import annotations

import time
from html import escape
from typing import Any

from focuscrawl.index.backend import IndexStore
from focuscrawl.web.data import counted_crawl
from focuscrawl.web.pages import page, safe_href

MAX_PAGES = 200  # pages listed at most (the newest changes first)

STYLE = """
.change{margin:1.2rem 0;padding-top:.4rem;border-top:1px solid #e5e7eb}
.change .url{color:#555;font-size:.85rem;word-break:break-all}
ul.diff{list-style:none;padding-left:0;margin:.4rem 0}
ul.diff li{margin:.15rem 0;padding:.1rem .4rem;border-radius:3px;white-space:pre-wrap}
li.added{background:#dcfce7;color:#14532d} li.added::before{content:"+ ";font-weight:bold}
li.removed{background:#fee2e2;color:#991b1b} li.removed::before{content:"\\2212  ";font-weight:bold}
li.removed .text{text-decoration:line-through}
li.moved{background:#f3f4f6;color:#4b5563} li.moved::before{content:"\\2195  "}
li.item-added a{color:#14532d} li.item-removed a{color:#991b1b}
"""


def changes_data(index: IndexStore | None, limit: int = MAX_PAGES) -> dict[str, Any]:
    """The last crawl's significant changes and that crawl's record (JSON-ready)."""
    if index is None:
        return {"index": False, "crawl": None, "total": 0, "all_significant": 0, "changes": []}
    crawl_id, changes = index.last_changes(limit)
    crawls = index.crawls(50)
    crawl = next((c for c in crawls if c["id"] == crawl_id), None)
    total = index.count_changes(crawl_id) if crawl_id else 0
    # no indexed page changed: the dashboard's crawl may still have found changes elsewhere
    counted = ((crawl if crawl_id else counted_crawl(crawls)) or {}).get("counts") or {}
    try:  # the crawl's count over every page it revisited, relevant or not
        every = max(total, int(counted.get("change/significant", 0)))
    except (TypeError, ValueError):
        every = total
    return {
        "index": True,
        "crawl": crawl,
        "total": total,
        "all_significant": every,
        "changes": changes,
    }


def _when(t: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(t)))
    except (TypeError, ValueError, OverflowError, OSError):
        return "–"


def _texts(diff: dict[str, Any], name: str) -> list[str]:
    value = diff.get(name) or []
    return [str(v) for v in value] if isinstance(value, list) else []


def _items(diff: dict[str, Any], name: str) -> list[tuple[str, str]]:
    value = diff.get(name) or []
    if not isinstance(value, list):
        return []
    return [(str(i.get("text", "")), str(i.get("url", ""))) for i in value if isinstance(i, dict)]


def diff_html(diff: dict[str, Any]) -> str:
    """One change's diff as an escaped list: added, removed, moved fragments; items."""
    rows = []
    for name, label in (("added", "added"), ("removed", "removed"), ("moved", "moved")):
        rows += [
            f'<li class="{name}" title="{label}"><span class="text">{escape(t)}</span></li>'
            for t in _texts(diff, name)
        ]
    for name, css, label in (
        ("items_added", "added item-added", "item added"),
        ("items_removed", "removed item-removed", "item removed"),
    ):
        for text, url in _items(diff, name):
            href = safe_href(url)
            shown = escape(text or url)
            link = f'<a href="{href}" rel="nofollow noreferrer">{shown}</a>' if href else shown
            rows.append(
                f'<li class="{css}" title="{label}"><span class="text">{link}</span>'
                f' <span class="meta">{escape(url)}</span></li>'
            )
    return f'<ul class="diff">{"".join(rows)}</ul>' if rows else ""


def changes_page(d: dict[str, Any]) -> str:
    parts = [
        f"<style>{STYLE}</style><h1>changes in the last recrawl</h1>"
        '<p class="meta"><a href="/changes.atom" id="changes-feed" type="application/atom+xml">'
        "Atom feed of these changes</a></p>"
    ]
    crawl = d.get("crawl")
    if not d.get("index"):
        parts.append('<p class="error">no index yet: run a crawl first</p>')
    elif not d["changes"]:
        every = int(d.get("all_significant") or 0)
        elsewhere = (
            f" (the last recrawl found {every} on pages that are not relevant, which are not "
            "indexed: the dashboard's count)"
            if every
            else ""
        )
        parts.append(
            '<p id="no-changes">no significant change of a relevant page (those in the index) '
            f"recorded yet{elsewhere}</p>"
        )
    else:
        started = _when(crawl["started"]) if crawl else "–"
        shown = len(d["changes"])
        more = f", the {shown} newest shown" if d["total"] > shown else ""
        noun = "page" if d["total"] == 1 else "pages"
        every = int(d.get("all_significant") or d["total"])
        scope = (
            f" (of the {every} significant changes it found on every page it revisited, "
            "relevant or not: the dashboard's count)"
            if every > d["total"]
            else ""
        )
        parts.append(
            f'<p class="meta" id="changes-summary">{d["total"]} relevant {noun} (those in the '
            f"index) changed significantly in the crawl started {escape(started)}{scope}{more}"
            '</p><ol id="changes">'
        )
        for c in d["changes"]:
            diff = c.get("change_diff") or {}
            url = str(c.get("url", ""))
            href = safe_href(url)
            title = escape(str(c.get("title") or url))
            link = f'<a href="{href}" rel="nofollow noreferrer">{title}</a>' if href else title
            kinds = ", ".join(_texts(diff, "kinds"))
            parts.append(
                f'<li class="change"><div class="title">{link}</div>'
                f'<div class="url">{escape(url)}</div>'
                f'<div class="meta">changed {escape(_when(c.get("changed_at")))}'
                f"{' · in ' + escape(kinds) if kinds else ''}</div>{diff_html(diff)}</li>"
            )
        parts.append("</ol>")
    return page("focuscrawl changes", "".join(parts))
