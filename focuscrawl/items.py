"""What a crawl exports: one ``PageItem`` per fetched HTML page."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PageItem:
    url: str
    title: str = ""
    relevance: float = 0.0
    relevant: bool = False
    depth: int = 0
    parent: str | None = None
    seq: int = 0  # fetch order, from 1
    fetched_at: float = 0.0  # UNIX time
    status: int = 200
    text: str = ""  # main text (text blocks)
    blocks: dict[str, int] = field(default_factory=dict)  # block counts by kind
    kind: str = ""  # page kind (blocks.kind): article, forum, product, listing, … or other
    kind_confidence: float = 0.0
    score: float = 0.0  # frontier score the page was fetched with
    # filled by the change-detection pipeline (recrawl)
    change: str = ""  # new | unchanged | insignificant | significant | deleted
    # what changed: added / removed / moved fragments, items_added / items_removed, kinds
    change_diff: dict[str, Any] = field(default_factory=dict)
    fingerprints: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # etag, last-modified
    # near-duplicates (FOCUSCRAWL_DEDUP): the first page fetched with the same main text (within
    # FOCUSCRAWL_DUPLICATE_BITS), and the page's own rel=canonical when on its registrable domain
    duplicate_of: str = ""
    canonical: str = ""
