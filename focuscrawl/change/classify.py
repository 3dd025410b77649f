"""Change classification of two versions of one URL, and the per-technique detectors.

Statuses: ``new`` (no earlier version), ``unchanged`` (same body, or a 304), ``insignificant``
(the body changed but the content terms did not: layout, attributes, styles, noise blocks, ads,
masked ids and timestamps), ``significant`` (the content terms of the title or the text blocks
changed, by at least the thresholds), ``deleted`` (404/410 or gone from its site).
Link changes are reported apart (``links_changed``) and do not make a change significant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from focuscrawl.blocks.partition import partition
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, Thresholds, fingerprint
from focuscrawl.change.simhash import hamming
from focuscrawl.change.terms import index_distance

__all__ = ["STATUSES", "TECHNIQUES", "Change", "Thresholds", "classify", "compare"]

STATUSES = ("new", "unchanged", "insignificant", "significant", "deleted")
GONE = frozenset({404, 410})


@dataclass(frozen=True, slots=True)
class Change:
    status: str  # one of STATUSES
    text_changed: bool = False
    links_changed: bool = False
    text_distance: int = 0  # term occurrences added + removed
    simhash_distance: int = 0  # differing bits of the two simhashes
    url: str = ""


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
    "doc-index": lambda o, n, t: classify(o, n, thresholds=t).status == "significant",
    "simhash": lambda o, n, t: hamming(o.simhash, n.simhash) > t.simhash_bits,
    "refetch-all": lambda o, n, t: True,
}
