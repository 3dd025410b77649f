"""The user's labels of crawled pages ("on topic" / "off topic"), kept with the crawl.

A label file (``labels.jsonl`` in the data directory, ``FOCUSCRAWL_LABELS``) holds one JSON
object a line: ``{"url": ..., "on_topic": true|false, "t": <unix time>, "by": "review"|"cli"}``;
the last label of a URL wins. Writers (``focuscrawl label``, the review page of
``focuscrawl serve``) append one line each with a single ``O_APPEND`` write, so a running crawl
and several writers share the file; the crawl reads what was added since it last looked
(:class:`LabelBook`). Everything read is hostile: a line that is not a label (not JSON, not an
http(s) URL, too long) is skipped and counted; at most :data:`MAX_LABELS` URLs are kept.

:func:`uncertain_pages` orders a crawl log's pages for review: the ones the judge was least
sure about first (relevance nearest the crawl's threshold, estimated from the log). No Scrapy.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

LABELS_FILE = "labels.jsonl"
MAX_LABELS = 100_000  # URLs kept; later new URLs are counted, not kept
MAX_LINE = 8192  # bytes of one label line
MAX_URL = 4096
READ_CHUNK = 1 << 20  # bytes read per poll at most


class LabelError(ValueError):
    """A label that cannot be stored (not an http(s) URL, too long)."""


@dataclass(frozen=True)
class Label:
    url: str
    on_topic: bool
    t: float
    by: str


def check_label_url(url: Any) -> str:
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise LabelError("a label's URL is a string of at most 4096 characters")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise LabelError("malformed URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LabelError("only http(s) URLs are labelled")
    return url


def add_label(path: str | Path, url: str, on_topic: bool, by: str = "cli") -> Label:
    """Append one label (one write with ``O_APPEND``: writers never interleave a line)."""
    label = Label(check_label_url(url), bool(on_topic), round(time.time(), 3), by[:20])
    line = json.dumps(
        {"url": label.url, "on_topic": label.on_topic, "t": label.t, "by": label.by},
        ensure_ascii=False,
    )
    data = (line + "\n").encode("utf-8")
    if len(data) > MAX_LINE:
        raise LabelError("label too long")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return label


def parse_label(line: bytes) -> Label | None:
    """A label line as :func:`add_label` writes it, else None."""
    if len(line) > MAX_LINE:
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("on_topic"), bool):
        return None
    try:
        url = check_label_url(obj.get("url"))
    except LabelError:
        return None
    t = obj.get("t")
    by = obj.get("by")
    return Label(
        url,
        obj["on_topic"],
        float(t) if isinstance(t, int | float) else 0.0,
        by[:20] if isinstance(by, str) else "",
    )


def admit(labels: dict[str, bool], label: Label, cap: int) -> bool | None:
    """``label`` into a book's ``labels`` (URL → on topic): True when it changed the book, False
    when the book said so already, None when the book holds ``cap`` URLs and this one is new
    (not kept)."""
    known = labels.get(label.url)
    if known is None and len(labels) >= cap:
        return None
    if known == label.on_topic:
        return False
    labels[label.url] = label.on_topic
    return True


class LabelBook:
    """The labels of one label file, read as they are added (:meth:`poll`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.labels: dict[str, bool] = {}
        self.skipped = 0  # lines that were not labels
        self.dropped = 0  # new URLs past MAX_LABELS
        self.offset = 0
        self._partial = b""

    def __len__(self) -> int:
        return len(self.labels)

    def get(self, url: str) -> bool | None:
        return self.labels.get(url)

    def poll(self) -> list[Label]:
        """The labels added since the last call that change what is known (new URLs, or a
        URL's label turned), at most :data:`READ_CHUNK` bytes a call; a file that shrank (cut
        or replaced) is read again from its start."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return []
        if size < self.offset:
            self.offset, self._partial = 0, b""
        if size == self.offset:
            return []
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                chunk = f.read(READ_CHUNK)
        except OSError:
            return []
        self.offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()  # an unfinished last line waits for its end
        if len(self._partial) > MAX_LINE:  # no line this long is a label: skip to the next
            self._partial = b""
            self.skipped += 1
        changed: list[Label] = []
        for line in lines:
            if not line.strip():
                continue
            label = parse_label(line)
            if label is None:
                self.skipped += 1
                continue
            took = admit(self.labels, label, MAX_LABELS)
            if took is None:
                self.dropped += 1
            elif took:
                changed.append(label)
        return changed


def read_labels(path: str | Path) -> LabelBook:
    """Every label of the file (read to its end)."""
    book = LabelBook(path)
    while True:
        before = book.offset
        book.poll()
        if book.offset == before:
            return book


def estimate_threshold(records: Iterable[dict[str, Any]]) -> float | None:
    """The relevance at which the crawl's judgements turned (midway between the highest page
    judged irrelevant and the lowest judged relevant, over their overlap's median), from the
    crawl log's ``relevance`` and ``relevant``."""
    rel = sorted(r["relevance"] for r in records if r.get("relevant") and _num(r))
    irr = sorted(r["relevance"] for r in records if not r.get("relevant") and _num(r))
    if not rel or not irr:
        return None
    lo, hi = rel[0], irr[-1]
    if lo >= hi:
        return (lo + hi) / 2
    # the judge's threshold moved during the crawl: the median of the overlap
    band = sorted(x for x in rel + irr if lo <= x <= hi)
    return band[len(band) // 2]


def _num(record: dict[str, Any]) -> bool:
    value = record.get("relevance")
    return isinstance(value, int | float) and not isinstance(value, bool)


def uncertain_pages(
    records: list[dict[str, Any]], labels: LabelBook | dict[str, bool], limit: int = 20
) -> list[dict[str, Any]]:
    """The crawl log's fetched pages not labelled yet, the least certain first: relevance
    nearest the estimated threshold (relative to it); each page once (its last record)."""
    threshold = estimate_threshold(records)
    known = labels if isinstance(labels, dict) else labels.labels  # a LabelBook, or Redis's
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        url = r.get("url")
        if (
            isinstance(url, str)
            and _num(r)
            and r.get("status", 200) == 200
            and not r.get("duplicate_of")
            and url not in known
        ):
            last[url] = r
    if threshold is None or threshold <= 0:  # one side only (the index: relevant pages)
        ranked = sorted(last.values(), key=lambda r: (r["relevance"], r["url"]))
    else:
        ranked = sorted(
            last.values(), key=lambda r: (abs(r["relevance"] - threshold) / threshold, r["url"])
        )
    return [
        {
            "url": r["url"],
            "relevance": r["relevance"],
            "relevant": bool(r.get("relevant")),
            "threshold": threshold,
            "title": str(r.get("title") or "")[:300],
        }
        for r in ranked[: max(0, limit)]
    ]


MAX_LABEL_EXAMPLES = 500  # on-topic labelled pages a crawl fetches as examples at most


class UserLabels:
    """The crawl's view of the label file: the label of a judged page (the file looked at every
    ``poll_every`` pages), and the on-topic pages still to learn from as examples."""

    def __init__(self, path: str | Path, poll_every: int = 25, book: Any = None) -> None:
        """``book``: where the labels are read (a :class:`LabelBook` of ``path`` when None;
        a cluster crawl's is :class:`focuscrawl.cluster.labels.RedisLabelBook`)."""
        self.book = book if book is not None else LabelBook(path)
        self.poll_every = poll_every
        self._since = 0
        self._examples: list[str] = []
        self._taken: set[str] = set()
        self._polled = False
        self._changed: list[Label] = []  # for a model that retrains from the labels

    @classmethod
    def from_settings(cls, settings: Any, book: Any = None) -> UserLabels:
        from focuscrawl import defaults

        path = defaults.read(settings, "FOCUSCRAWL_LABELS") or os.path.join(
            defaults.read(settings, "FOCUSCRAWL_DATA_DIR"), LABELS_FILE
        )
        return cls(path, defaults.read(settings, "FOCUSCRAWL_LABELS_POLL"), book)

    def _poll(self) -> None:
        self._polled = True
        changed = self.book.poll()
        self._changed += changed
        del self._changed[: -MAX_LABEL_EXAMPLES * 20]  # bounded if nobody takes them
        for label in changed:
            if (
                label.on_topic
                and label.url not in self._taken
                and len(self._taken) < MAX_LABEL_EXAMPLES
            ):
                self._taken.add(label.url)
                self._examples.append(label.url)

    def label_of(self, url: str) -> bool | None:
        self._since += 1
        if not self._polled or (self.poll_every and self._since >= self.poll_every):
            self._since = 0
            self._poll()
        return self.book.get(url)

    def take_changed(self) -> list[Label]:
        """The labels read since the last call that changed what is known (each once)."""
        out, self._changed = self._changed, []
        return out

    def take_examples(self) -> list[str]:
        """The on-topic labelled URLs not handed out yet (each once)."""
        if not self._polled:
            self._poll()
        out, self._examples = self._examples, []
        return out
