"""Export the page index as Elasticsearch / OpenSearch bulk JSON lines, with its mapping.

Each page is two lines, an action and a document::

    {"index": {"_index": "focuscrawl", "_id": "<sha1 of the URL>"}}
    {"url": ..., "title": ..., "text": ..., "relevance": 0.83, "authority": 0.0, "depth": 2,
     "fetched_at": 1764500000000, "indexed_at": 1764500001000, "change": "significant",
     "changed_at": 1764500000000, "change_diff": {"status": "significant", "added": [...], ...}}

``changed_at`` and ``change_diff`` (the page's last significant change: fragments added, removed
and moved, content links added and removed, block kinds) are there when the index has one.

``_id`` is the SHA-1 of the URL (Elasticsearch caps ids at 512 bytes; URLs may be longer), so
re-exporting after a recrawl replaces documents instead of duplicating them. Times are epoch
milliseconds. The same files load into Elasticsearch 7/8 and OpenSearch 1/2 with
``POST _bulk`` (``Content-Type: application/x-ndjson``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from focuscrawl.index.store import PageIndex

_ITEMS = {
    "properties": {
        "text": {"type": "text", "analyzer": "focuscrawl_text"},
        "url": {"type": "keyword", "ignore_above": 8191},
    }
}
_DIFF_FIELDS = ("status", "added", "removed", "moved", "kinds", "items_added", "items_removed")


def _known(diff: dict[str, Any]) -> dict[str, Any]:
    """The diff's fields that the mapping declares (it is strict: an unknown field would fail)."""
    out: dict[str, Any] = {k: diff[k] for k in _DIFF_FIELDS if k in diff}
    for name in ("items_added", "items_removed"):
        if name in out:
            out[name] = [
                {"text": str(i.get("text", "")), "url": str(i.get("url", ""))}
                for i in out[name]
                if isinstance(i, dict)
            ]
    return out


def es_mapping() -> dict[str, Any]:
    """Index settings and mapping (``PUT /<index>`` body) matching the exported documents."""
    return {
        "settings": {
            "analysis": {
                "analyzer": {
                    # close to the FTS5 side: unicode words, lower case, accents folded, Porter stems
                    "focuscrawl_text": {
                        "type": "custom",
                        "tokenizer": "standard",
                        "filter": ["lowercase", "asciifolding", "porter_stem"],
                    }
                }
            }
        },
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "url": {"type": "keyword", "ignore_above": 8191},
                "title": {
                    "type": "text",
                    "analyzer": "focuscrawl_text",
                    "fields": {"raw": {"type": "keyword", "ignore_above": 512}},
                },
                "text": {"type": "text", "analyzer": "focuscrawl_text"},
                "relevance": {"type": "float"},
                "authority": {"type": "float"},
                "depth": {"type": "integer"},
                "fetched_at": {"type": "date", "format": "epoch_millis"},
                "indexed_at": {"type": "date", "format": "epoch_millis"},
                "change": {"type": "keyword"},
                "changed_at": {"type": "date", "format": "epoch_millis"},
                "change_diff": {
                    "properties": {
                        "status": {"type": "keyword"},
                        "added": {"type": "text", "analyzer": "focuscrawl_text"},
                        "removed": {"type": "text", "analyzer": "focuscrawl_text"},
                        "moved": {"type": "text", "analyzer": "focuscrawl_text"},
                        "kinds": {"type": "keyword"},
                        "items_added": _ITEMS,
                        "items_removed": _ITEMS,
                    }
                },
            },
        },
    }


def doc_id(url: str) -> str:
    return hashlib.sha1(url.encode("utf-8", "surrogatepass")).hexdigest()


def bulk_lines(pages: Iterable[dict[str, Any]], index_name: str = "focuscrawl") -> Iterator[str]:
    """Action and document lines (no trailing newlines) for every page."""
    for page in pages:
        yield json.dumps({"index": {"_index": index_name, "_id": doc_id(page["url"])}})
        doc = {
            "url": page["url"],
            "title": page.get("title") or "",
            "text": page.get("text") or "",
            "relevance": float(page.get("relevance") or 0.0),
            "authority": float(page.get("authority") or 0.0),
            "depth": int(page.get("depth") or 0),
            "fetched_at": int(float(page.get("fetched_at") or 0.0) * 1000),
            "indexed_at": int(float(page.get("indexed_at") or 0.0) * 1000),
            "change": page.get("change") or "",
        }
        if page.get("change_diff"):  # the last significant change: what, and when
            doc["changed_at"] = int(float(page.get("changed_at") or 0.0) * 1000)
            doc["change_diff"] = _known(page["change_diff"])
        yield json.dumps(doc, ensure_ascii=False)


def export_index(index: PageIndex, out: Any, index_name: str = "focuscrawl") -> int:
    """Write the bulk file for ``index`` to the text stream ``out``; pages written."""
    n = 0
    for i, line in enumerate(bulk_lines(index.pages(), index_name)):
        out.write(line + "\n")
        n += i % 2
    return n
