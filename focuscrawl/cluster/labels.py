"""The user's labels of a cluster crawl, in the frontier's Redis (no Scrapy).

``<prefix>:labels`` is a capped stream (``XADD … MAXLEN ~`` :data:`STREAM_MAXLEN`): one entry
per label, its field ``l`` the label's JSON line exactly as a label file holds it
(:mod:`focuscrawl.relevance.labels`), so that every worker, the review page and
``focuscrawl label`` share one store and the last label of a URL wins. A stream is the capped
list that can be read incrementally: each worker reads the entries after the last one it read
(at most :data:`READ_ENTRIES` a poll), a worker that starts later (or a later crawl) reads
them from the first one kept. Everything read is hostile: an entry that is not a label is
skipped and counted; at most :data:`~focuscrawl.relevance.labels.MAX_LABELS` URLs are kept.
Redis away: the poll returns nothing and is counted in ``errors``; the next poll goes on from
where it stopped. The Redis URL's password is never logged.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from focuscrawl.credentials import redact_text
from focuscrawl.relevance.labels import (
    MAX_LABELS,
    MAX_LINE,
    Label,
    LabelError,
    admit,
    check_label_url,
    parse_label,
)

logger = logging.getLogger(__name__)

STREAM_MAXLEN = MAX_LABELS  # entries kept (approximately: MAXLEN ~)
READ_ENTRIES = 1000  # entries read per poll at most


def labels_key(prefix: str) -> str:
    return f"{prefix}:labels"


def add_redis_label(client: Any, prefix: str, url: str, on_topic: bool, by: str = "cli") -> Label:
    """Append one label to the crawl's stream (raises :class:`LabelError` for a URL that is
    not labelled, ``redis.RedisError`` when Redis cannot take it)."""
    label = Label(check_label_url(url), bool(on_topic), round(time.time(), 3), by[:20])
    line = json.dumps(
        {"url": label.url, "on_topic": label.on_topic, "t": label.t, "by": label.by},
        ensure_ascii=False,
    )
    if len(line.encode("utf-8")) > MAX_LINE:
        raise LabelError("label too long")
    client.xadd(labels_key(prefix), {"l": line}, maxlen=STREAM_MAXLEN, approximate=True)
    return label


class RedisLabelStore:
    """A crawl's labels in its Redis as the review page and ``focuscrawl label`` use them:
    written one at a time, read whole."""

    def __init__(self, client: Any, prefix: str, url: str = "") -> None:
        self.client = client
        self.prefix = prefix
        self.url = url

    def add(self, url: str, on_topic: bool, by: str = "cli") -> Label:
        return add_redis_label(self.client, self.prefix, url, on_topic, by)

    def read(self) -> RedisLabelBook:
        return RedisLabelBook(self.client, self.prefix, self.url).read_all()

    def __str__(self) -> str:
        from focuscrawl.credentials import redact_url

        return f"{redact_url(self.url)} ({labels_key(self.prefix)})"


class RedisLabelBook:
    """The labels of a crawl's Redis stream, read as they are added (:meth:`poll`); the same
    reading interface as :class:`focuscrawl.relevance.labels.LabelBook`."""

    def __init__(self, client: Any, prefix: str, url: str = "") -> None:
        self.client = client
        self.key = labels_key(prefix)
        self.url = url  # for the log, its password masked
        self.labels: dict[str, bool] = {}
        self.skipped = 0  # entries that were not labels
        self.dropped = 0  # new URLs past MAX_LABELS
        self.errors = 0  # polls that failed (Redis away)
        self.last_id = "-"

    def __len__(self) -> int:
        return len(self.labels)

    def get(self, url: str) -> bool | None:
        return self.labels.get(url)

    def poll(self) -> list[Label]:
        """The labels added since the last call that change what is known, at most
        :data:`READ_ENTRIES` entries a call."""
        import redis

        start = "-" if self.last_id == "-" else f"({self.last_id}"
        try:
            entries = self.client.xrange(self.key, start, "+", count=READ_ENTRIES)
        except redis.RedisError as exc:
            self.errors += 1
            logger.warning(
                "labels: Redis %s did not answer (%s)",
                redact_text(self.url) if self.url else "",
                redact_text(str(exc)),
            )
            return []
        changed: list[Label] = []
        for entry_id, fields in entries or ():
            self.last_id = _text(entry_id) or self.last_id
            label = self._label_of(fields)
            if label is None:
                self.skipped += 1
                continue
            took = admit(self.labels, label, MAX_LABELS)
            if took is None:
                self.dropped += 1
            elif took:
                changed.append(label)
        return changed

    def read_all(self) -> RedisLabelBook:
        """Poll to the stream's end (or until Redis fails)."""
        while True:
            before, errors = self.last_id, self.errors
            self.poll()
            if self.last_id == before or self.errors != errors:
                return self

    @staticmethod
    def _label_of(fields: Any) -> Label | None:
        if not isinstance(fields, dict):
            return None
        raw = fields.get(b"l", fields.get("l"))
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "replace")
        if not isinstance(raw, bytes):
            return None
        return parse_label(raw)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("ascii", "replace")
    return value if isinstance(value, str) else ""
