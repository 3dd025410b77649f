"""Copy one page index into another (a SQLite file into PostgreSQL, or back): every page with
its text, relevance, authority, depth, times, change and last change diff, and the crawls'
counts. Pages already at the destination are replaced (the copy can be run again)."""

from __future__ import annotations

from collections.abc import Callable

from focuscrawl.index.backend import IndexStore

BATCH = 500  # pages per destination transaction
MAX_CRAWLS = 100_000  # crawl records copied (newest first)


def copy_index(
    src: IndexStore,
    dst: IndexStore,
    *,
    batch: int = BATCH,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Copy every page of ``src`` into ``dst`` (committed every ``batch`` pages), and the crawls'
    records (new ids at ``dst``; each page's last change points at its copied crawl); pages
    copied."""
    crawl_ids = {
        c["id"]: dst.record_crawl(c["started"], c["finished"], c["counts"])
        for c in reversed(src.crawls(MAX_CRAWLS))
    }
    dst.commit()
    n = 0
    for page in src.pages():
        diff = page.get("change_diff") or None
        dst.upsert(
            page["url"],
            page.get("title") or "",
            page.get("text") or "",
            relevance=float(page.get("relevance") or 0.0),
            authority=float(page.get("authority") or 0.0),
            depth=int(page.get("depth") or 0),
            fetched_at=float(page.get("fetched_at") or 0.0),
            change=page.get("change") or "",
            diff=diff,
            changed_at=float(page.get("changed_at") or 0.0),
            crawl_id=crawl_ids.get(int(page.get("changed_in") or 0), 0),
        )
        n += 1
        if n % batch == 0:
            dst.commit()
            if progress is not None:
                progress(n)
    dst.commit()
    return n
