"""How well a crawl of the mirrored web (:mod:`focuseval.mirrored`) told copies apart.

Read from the crawl log (one record per fetched response, in fetch order, ``duplicate_of`` on
the pages the crawl marked). For each group (an article and its copies) the first member
fetched is the original *for this crawl*; every later member fetched is a duplicate:

- ``duplicates``: duplicates fetched; ``marked``: those marked as a copy of their own group;
- ``missed``: duplicates not marked; ``false_marks``: pages marked as a copy of another group
  (or of a page outside every group), over ``fetched`` pages;
- ``expanded``: fetched duplicates that were not marked (their links were followed), and
  ``via_duplicates``: pages fetched whose parent was a duplicate (links followed out of a copy).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(slots=True)
class DedupMetrics:
    fetched: int = 0
    duplicates: int = 0
    marked: int = 0
    missed: int = 0
    false_marks: int = 0
    expanded: int = 0
    via_duplicates: int = 0
    tracking_urls: int = 0  # fetched URLs still carrying utm_* / click ids

    @property
    def marked_share(self) -> float:
        return self.marked / self.duplicates if self.duplicates else 1.0

    @property
    def false_share(self) -> float:
        return self.false_marks / self.fetched if self.fetched else 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["marked_share"] = round(self.marked_share, 4)
        out["false_share"] = round(self.false_share, 4)
        return out


def dedup_metrics(records: Iterable[dict[str, Any]], groups: dict[str, int]) -> DedupMetrics:
    """Score a crawl log against ``groups`` (URL → group; :meth:`MirroredWeb.groups`)."""
    m = DedupMetrics()
    first: dict[int, str] = {}
    duplicate_urls: set[str] = set()
    for rec in records:
        page = rec.get("relevance") is not None or bool(rec.get("duplicate_of"))
        if rec.get("status") != 200 or not page:
            continue  # not a page (robots.txt, a failure): not part of the count
        url = rec["url"]
        m.fetched += 1
        if "utm_" in url or "fbclid" in url:
            m.tracking_urls += 1
        if rec.get("parent") in duplicate_urls:
            m.via_duplicates += 1
        group = groups.get(url)
        dup_of = rec.get("duplicate_of")
        is_duplicate = group is not None and group in first
        if group is not None and group not in first:
            first[group] = url
        if dup_of:
            if group is not None and groups.get(dup_of) == group:
                m.marked += 1
            else:
                m.false_marks += 1
        if is_duplicate:
            duplicate_urls.add(url)
            m.duplicates += 1
            if not dup_of:
                m.missed += 1
                m.expanded += 1
    return m
