"""Change classification of two versions of one URL, and the per-technique detectors.

Statuses: ``new`` (no earlier version), ``unchanged`` (same body, or a 304), ``insignificant``
(the body changed but not what a reader sees of the content: markup, attributes, spacing and
encodings, scripts and styles, page chrome, masked ids and clocks, or the same items re-ordered),
``significant`` (words or numbers of the content changed, by at least the thresholds; see
docs/change.md for the definition), ``deleted`` (404/410 or gone from its site). A significant
change says what changed: fragments added and removed, items (content links) added and removed,
fragments moved and the block kinds touched (:mod:`focuscrawl.change.diff`).

A link whose target moved under the same anchor is reported apart (``links_changed``) and does
not make a change significant. Records stored before the content was kept (no
``Fingerprints.content``) are compared by their document index, as before; a crawl's records
now keep the content and no document index, so the first visit after such a record is reported
``significant`` (re-indexed once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from focuscrawl.blocks.partition import partition
from focuscrawl.change.diff import ContentDiff, diff_content
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, Thresholds, fingerprint
from focuscrawl.change.simhash import hamming
from focuscrawl.change.terms import index_distance

__all__ = [
    "STATUSES",
    "TECHNIQUES",
    "Change",
    "Thresholds",
    "classify",
    "classify_doc_index",
    "compare",
]

STATUSES = ("new", "unchanged", "insignificant", "significant", "deleted")
GONE = frozenset({404, 410})


@dataclass(frozen=True, slots=True)
class Change:
    status: str  # one of STATUSES
    text_changed: bool = False
    links_changed: bool = False
    text_distance: int = 0  # words and numbers added + removed (moves not counted)
    simhash_distance: int = 0  # differing bits of the two simhashes
    url: str = ""
    # what changed (bounded: at most 20 of each, fragments of at most 200 characters)
    added: tuple[str, ...] = ()  # text fragments of the new version that were not there
    removed: tuple[str, ...] = ()  # text fragments of the old version that are gone
    moved: tuple[str, ...] = ()  # fragments found at another place (a re-ordering)
    items_added: tuple[tuple[str, str], ...] = ()  # content links (anchor, url) that came
    items_removed: tuple[tuple[str, str], ...] = ()  # … and that went
    kinds: tuple[str, ...] = ()  # block kinds where words changed or moved: title, text, …

    def to_dict(self) -> dict[str, Any]:
        """What the export carries (``PageItem.change_diff``): the non-empty parts."""
        out: dict[str, Any] = {"status": self.status}
        for name in ("added", "removed", "moved", "kinds"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        for name in ("items_added", "items_removed"):
            if getattr(self, name):
                out[name] = [{"text": t, "url": u} for t, u in getattr(self, name)]
        return out


def classify(
    old: Fingerprints | None,
    new: Fingerprints,
    url: str = "",
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Change:
    """The change from ``old`` to ``new`` (two versions of ``url``)."""
    if old is None:
        return Change("new", text_changed=True, links_changed=True, url=url)
    if new.body_hash and new.body_hash == old.body_hash:
        return Change("unchanged", url=url)
    links_changed = new.links_hash != old.links_hash
    sim = hamming(old.simhash, new.simhash)
    if not (old.content_hash and new.content_hash):
        return classify_doc_index(old, new, url, thresholds)  # a record of an older version
    if new.content_hash == old.content_hash:
        return Change("insignificant", False, links_changed, 0, sim, url)
    old_content, new_content = old.content, new.content  # read back only now
    if old_content is None or new_content is None:
        return classify_doc_index(old, new, url, thresholds)  # unreadable: compare terms
    d = diff_content(old_content, new_content)
    total = max(1, len(old_content.tokens()))
    significant = (
        not d.moved_only
        and d.changed_tokens >= thresholds.min_terms
        and d.changed_tokens / total >= thresholds.min_fraction
    ) or (d.beyond_cap and not (d.added or d.removed or d.moved))
    return _change("significant" if significant else "insignificant", d, links_changed, sim, url)


def _change(status: str, d: ContentDiff, links: bool, sim: int, url: str) -> Change:
    return Change(
        status,
        status == "significant",
        links,
        d.changed_tokens,
        sim,
        url,
        tuple(d.added),
        tuple(d.removed),
        tuple(d.moved),
        tuple(d.items_added),
        tuple(d.items_removed),
        tuple(d.kinds),
    )


def classify_doc_index(
    old: Fingerprints, new: Fingerprints, url: str = "", thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> Change:
    """The document-index technique (issue 6): significant when the content terms of the title,
    the text blocks and the unmarked noise blocks changed by at least the thresholds."""
    if new.body_hash and new.body_hash == old.body_hash:
        return Change("unchanged", url=url)
    links_changed = new.links_hash != old.links_hash
    sim = hamming(old.simhash, new.simhash)
    if (old.content_hash and not new.text_hash) or (new.content_hash and not old.text_hash):
        # one record keeps only the content, the other (an older version's) only the terms:
        # nothing to compare, so the page is reported (and re-indexed) once
        return Change("significant", True, links_changed, 0, sim, url)
    if new.text_hash == old.text_hash:
        return Change("insignificant", False, links_changed, 0, sim, url)
    distance = index_distance(old.doc_index, new.doc_index)
    total = max(1, sum(old.doc_index.values()))
    significant = distance >= thresholds.min_terms and distance / total >= thresholds.min_fraction
    status = "significant" if significant else "insignificant"
    return Change(status, significant, links_changed, distance, sim, url)


def status_for_http(status: int) -> str | None:
    """``deleted`` for 404/410, ``unchanged`` for 304, else ``None`` (compare the bodies)."""
    if status in GONE:
        return "deleted"
    if status == 304:
        return "unchanged"
    return None


def compare(
    old: str | bytes, new: str | bytes, url: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> Change:
    """Compare two bodies of ``url`` (``str`` or ``bytes``): no Scrapy, no store.

    ``Change.status`` is ``unchanged``, ``insignificant`` or ``significant``.
    """
    fps = [fingerprint(partition(body, url), body, thresholds=thresholds) for body in (old, new)]
    return classify(fps[0], fps[1], url, thresholds)


# --- the detection techniques of the recrawl experiment -----------------------------------
# Each says whether a page must be re-indexed, from the stored and the fresh fingerprints.
Detector = Callable[[Fingerprints, Fingerprints, Thresholds], bool]

TECHNIQUES: dict[str, Detector] = {
    "last-modified": lambda o, n, t: not n.last_modified or n.last_modified != o.last_modified,
    "size": lambda o, n, t: n.size != o.size,
    "hash": lambda o, n, t: n.body_hash != o.body_hash,
    "doc-index": lambda o, n, t: classify_doc_index(o, n, thresholds=t).status == "significant",
    "content-diff": lambda o, n, t: classify(o, n, thresholds=t).status == "significant",
    "simhash": lambda o, n, t: hamming(o.simhash, n.simhash) > t.simhash_bits,
    "refetch-all": lambda o, n, t: True,
}
