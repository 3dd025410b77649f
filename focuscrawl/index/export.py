"""Export the page index as Elasticsearch / OpenSearch bulk JSON lines, with its mapping.

Each page is two lines, an action and a document::

    {"index": {"_index": "focuscrawl", "_id": "<sha1 of the URL>"}}
    {"url": ..., "title": ..., "text": ..., "relevance": 0.83, "authority": 0.0, "depth": 2,
     "fetched_at": 1764500000000, "indexed_at": 1764500001000, "change": "new"}

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
        yield json.dumps(doc, ensure_ascii=False)


def export_index(index: PageIndex, out: Any, index_name: str = "focuscrawl") -> int:
    """Write the bulk file for ``index`` to the text stream ``out``; pages written."""
    n = 0
    for i, line in enumerate(bulk_lines(index.pages(), index_name)):
        out.write(line + "\n")
        n += i % 2
    return n
