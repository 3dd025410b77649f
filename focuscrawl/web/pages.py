"""HTML of the search page and the dashboard. Everything from crawled pages is escaped here."""

from __future__ import annotations

import time
from html import escape
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.index.render import snippet_html
from focuscrawl.index.store import SearchResult

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:1.5rem auto;padding:0 1rem;color:#222}
nav a{margin-right:1rem} .hit{margin:1.1rem 0} .hit .url{color:#166534;font-size:.85rem;word-break:break-all}
.meta{color:#666;font-size:.8rem} mark{background:#fde68a} .error{color:#b91c1c}
table{border-collapse:collapse} td,th{padding:.2rem .8rem;border-bottom:1px solid #ddd;text-align:left}
input[type=search]{width:60%;font-size:1rem;padding:.3rem}
"""


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        '<nav><a href="/">search</a><a href="/dashboard">dashboard</a>'
        '<a href="/changes" id="nav-changes">changes</a><a href="/review">review</a></nav>'
        f"{body}</body></html>"
    )


def safe_href(url: str) -> str | None:
    """The URL for an ``href`` if it is http(s), else None (no ``javascript:`` links)."""
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return escape(url, quote=True) if scheme in ("http", "https") else None


def search_page(
    query: str, result: SearchResult | None, error: str | None, n_pages: int | None
) -> str:
    parts = [
        "<h1>focuscrawl search</h1>",
        '<form action="/" method="get" role="search">',
        f'<input type="search" id="q" name="q" value="{escape(query, quote=True)}" autofocus>',
        ' <button type="submit" id="go">Search</button></form>',
    ]
    if n_pages is None:
        parts.append('<p class="error">no index yet: run a crawl first</p>')
    else:
        parts.append(f'<p class="meta">{n_pages} pages indexed</p>')
    if error:
        parts.append(f'<p class="error" id="error">{escape(error)}</p>')
    if result is not None:
        if not result.hits:
            parts.append(f'<p id="none">no results for <b>{escape(query)}</b></p>')
        elif result.mode == "or":
            parts.append('<p class="meta">no page holds every word; pages with any of them:</p>')
        parts.append('<ol id="results">')
        for hit in result.hits:
            href = safe_href(hit.url)
            title = escape(hit.title or hit.url)
            link = f'<a href="{href}">{title}</a>' if href else title
            parts.append(
                f'<li class="hit"><div class="title">{link}</div>'
                f'<div class="url">{escape(hit.url)}</div>'
                f'<div class="snippet">{snippet_html(hit.snippet)}</div>'
                f'<div class="meta">relevance {hit.relevance:.3f} · score {hit.score:.3f}</div></li>'
            )
        parts.append("</ol>")
    return page(f"{query} – focuscrawl" if query else "focuscrawl search", "".join(parts))


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def _rows(pairs: list[tuple[str, Any]]) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in pairs)


def dashboard_page(d: dict[str, Any]) -> str:
    fetched, relevant = d["fetched"], d["relevant"]
    rate = f"{relevant / fetched:.3f}" if fetched else "–"
    queue = "–" if d["queue_size"] is None else d["queue_size"]
    summary = _rows(
        [
            ("pages fetched", fetched),
            ("relevant pages", relevant),
            ("harvest rate", rate),
            ("pages in the index", "–" if d["indexed"] is None else d["indexed"]),
            ("queue size", queue),
            ("malformed log lines skipped", d["bad_lines"]),
        ]
    )
    changes = _rows(list(d["changes"].items()))
    indexed = d.get("indexed_changes")
    significant = d["changes"].get("significant", 0)
    on_indexed = (
        f"{indexed} of the {significant} significant changes are on relevant pages (those in "
        f"the index): "
        if indexed is not None and significant
        else ""
    )
    fresh = d["freshness"]
    freshness = _rows(
        [
            ("newest fetch", _age(fresh["newest_age"])),
            ("mean age", _age(fresh["mean_age"])),
            ("oldest fetch", _age(fresh["oldest_age"])),
        ]
    )
    recent = "".join(
        f"<tr><td>{escape(str(r.get('seq', '')))}</td><td>{escape(str(r.get('url', '')))}</td>"
        f"<td>{escape(str(r.get('status', '')))}</td><td>{_fmt(r.get('relevance'))}</td></tr>"
        for r in d["recent"]
    )
    body = (
        "<h1>crawl dashboard</h1>"
        f'<p class="meta">as of {escape(time.strftime("%Y-%m-%d %H:%M:%S"))}</p>'
        f'<table id="summary">{summary}</table>'
        "<h2>harvest rate</h2>"
        '<img id="harvest-plot" src="/plot/harvest.png" width="800" height="360" alt="harvest rate plot">'
        "<h2>changes in the last recrawl</h2>"
        '<p class="meta" id="changes-scope">every page the recrawl revisited, relevant or not</p>'
        f'<table id="changes">{changes}</table>'
        f'<p id="changes-indexed">{escape(on_indexed)}'
        '<a href="/changes" id="changes-link">what changed: the diffs</a></p>'
        f'<h2>freshness of the index</h2><table id="freshness">{freshness}</table>'
        "<h2>last fetched pages</h2>"
        f'<table id="recent"><tr><th>#</th><th>URL</th><th>status</th><th>relevance</th></tr>{recent}</table>'
    )
    return page("focuscrawl dashboard", body)


def _fmt(value: Any) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "–"
