"""Relevance feedback: the pages to review (least certain first) and the review page's HTML.

The pages come from the crawl log (every judged page, with its relevance and judgement) and
the index (relevant pages, with their titles); :func:`focuscrawl.relevance.labels.
uncertain_pages` orders them. The review page posts each label to ``/api/label`` with the
server's token (a form field: another site's page cannot read it, so it cannot label).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from focuscrawl.relevance.labels import LabelBook, uncertain_pages
from focuscrawl.web import data, pages

MAX_INDEX_PAGES = 50_000  # index rows read for review candidates at most


def review_candidates(
    crawl_log: Path | None, index_path: Path | str | None, labels: LabelBook, limit: int = 20
) -> list[dict[str, Any]]:
    records, _ = data.read_crawl_log(crawl_log)
    titles: dict[str, str] = {}
    indexed: list[dict[str, Any]] = []
    if index_path is not None:
        from focuscrawl.index.backend import READ_ERRORS
        from focuscrawl.index.backend import open_index as open_store

        try:
            index = open_store(index_path, readonly=True)
        except READ_ERRORS:
            index = None
        if index is not None:
            try:
                for i, row in enumerate(index.pages()):
                    if i >= MAX_INDEX_PAGES:
                        break
                    titles[row["url"]] = row.get("title") or ""
                    indexed.append(
                        {"url": row["url"], "relevance": row["relevance"], "relevant": True}
                    )
            finally:
                index.close()
    rows = records if records else indexed
    for r in rows:
        if isinstance(r.get("url"), str) and r["url"] in titles:
            r["title"] = titles[r["url"]]
    return uncertain_pages(rows, labels, limit)


def review_page(candidates: list[dict[str, Any]], labels: LabelBook, token: str) -> str:
    on = sum(1 for v in labels.labels.values() if v)
    off = len(labels.labels) - on
    rows = []
    for i, c in enumerate(candidates):
        href = pages.safe_href(c["url"])
        link = f'<a href="{href}">{escape(c["url"])}</a>' if href else escape(c["url"])
        title = escape(c.get("title") or "")
        judged = "on topic" if c["relevant"] else "off topic"
        rows.append(
            f'<tr id="r{i}"><td>{title}<div class="meta">{link}</div></td>'
            f"<td>{c['relevance']:.3f}</td><td>{judged}</td><td>"
            f'<form method="post" action="/api/label">'
            f'<input type="hidden" name="token" value="{escape(token, quote=True)}">'
            f'<input type="hidden" name="url" value="{escape(c["url"], quote=True)}">'
            '<button name="label" value="on" class="on">on topic</button> '
            '<button name="label" value="off" class="off">off topic</button>'
            "</form></td></tr>"
        )
    threshold = candidates[0]["threshold"] if candidates else None
    head = (
        "<h1>Review</h1><p>The crawled pages the relevance judge was least sure about, first"
        + (f" (nearest its threshold, {threshold:.3f})" if threshold else "")
        + f". Labelled so far: <span id=on-count>{on}</span> on topic, "
        f"<span id=off-count>{off}</span> off topic; a running crawl learns them as it goes, "
        "a later crawl starts from them.</p>"
    )
    if not rows:
        body = head + "<p id=empty>Nothing to review: no crawl log or index with pages.</p>"
    else:
        body = (
            head
            + "<table><tr><th>page</th><th>relevance</th><th>judged</th><th></th></tr>"
            + "".join(rows)
            + "</table>"
        )
    return pages.page("review", body)
