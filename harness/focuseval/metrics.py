"""Harvest rate and target recall of a crawl, from its crawl log and the corpus labels.

A crawl log is JSON lines, one per fetched response in fetch order, with at least ``url`` and
``status`` (the crawler's own ``relevance`` and ``score`` are carried but NOT used to judge: the
corpus labels say what is relevant).

- *pages fetched* ``n``: the first ``n`` responses of the log, whatever their status (every
  response costs a fetch).
- *harvest rate* at ``n``: distinct relevant pages among them (status 200, labelled relevant) / ``n``.
- *target recall* at ``n``: distinct target pages among them / all targets, where the targets are
  the relevant pages reachable from the seeds in the corpus's link graph.

:func:`judge_quality` sets the crawler's own judgement (``relevant`` in the log) beside the
labels: the harvest it believes it made, and the precision and recall of its judgement over the
pages it fetched (is the page judge or the link order the cap?).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

logger = logging.getLogger(__name__)

CHECKPOINTS = (100, 250, 500, 1000, 2000)


def normalize_url(url: str) -> str:
    """Comparable form: lower-case scheme and host, percent-decoded path, query kept, no fragment."""
    parts = urlsplit(url.strip())
    path = unquote(parts.path) or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


@dataclass(slots=True)
class Labels:
    """Which URLs are relevant for a topic, and which of them a crawl should find (targets)."""

    relevant: set[str]
    targets: set[str]

    @classmethod
    def from_urls(cls, relevant: Iterable[str], targets: Iterable[str] | None = None) -> Labels:
        rel = {normalize_url(u) for u in relevant}
        tgt = {normalize_url(u) for u in targets} if targets is not None else set(rel)
        return cls(rel, tgt)


@dataclass(slots=True)
class CrawlRecord:
    url: str
    status: int


@dataclass(slots=True)
class CrawlMetrics:
    """Curves (one value per page fetched) and the values at the checkpoints."""

    fetched: int
    relevant: int
    targets: int
    harvest: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    skipped_lines: int = 0

    def at(self, n: int) -> dict[str, float] | None:
        """Harvest rate and target recall after ``n`` pages; ``None`` if the crawl stopped earlier."""
        if n < 1 or n > self.fetched:
            return None
        return {"harvest_rate": self.harvest[n - 1], "target_recall": self.recall[n - 1]}

    def checkpoints(
        self, points: Iterable[int] = CHECKPOINTS
    ) -> dict[int, dict[str, float] | None]:
        return {n: self.at(n) for n in points}

    def summary(self) -> dict[str, object]:
        return {
            "fetched": self.fetched,
            "relevant": self.relevant,
            "targets": self.targets,
            "harvest_rate": self.harvest[-1] if self.harvest else 0.0,
            "target_recall": self.recall[-1] if self.recall else 0.0,
            "skipped_lines": self.skipped_lines,
            "checkpoints": {str(k): v for k, v in self.checkpoints().items()},
        }


def read_crawl_log(path: Path) -> tuple[list[CrawlRecord], int]:
    """The records of a crawl log in fetch order (by ``seq`` when present) and the bad-line count."""
    rows: list[tuple[float, int, CrawlRecord]] = []
    skipped = 0
    with Path(path).open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                rec = CrawlRecord(str(obj["url"]), int(obj.get("status", 200)))
                seq = float(obj.get("seq", i))
            except (ValueError, KeyError, TypeError):
                skipped += 1
                continue
            rows.append((seq, i, rec))
    if skipped:
        logger.warning("%s: skipped %d malformed crawl-log lines", path, skipped)
    rows.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in rows], skipped


def evaluate(records: Iterable[CrawlRecord], labels: Labels, skipped: int = 0) -> CrawlMetrics:
    """Harvest rate and target recall after every fetched page."""
    seen_relevant: set[str] = set()
    seen_targets: set[str] = set()
    m = CrawlMetrics(fetched=0, relevant=0, targets=len(labels.targets), skipped_lines=skipped)
    for rec in records:
        m.fetched += 1
        if rec.status == 200:
            url = normalize_url(rec.url)
            if url in labels.relevant:
                seen_relevant.add(url)
            if url in labels.targets:
                seen_targets.add(url)
        m.harvest.append(len(seen_relevant) / m.fetched)
        m.recall.append(len(seen_targets) / m.targets if m.targets else 0.0)
    m.relevant = len(seen_relevant)
    return m


def evaluate_log(path: Path, labels: Labels) -> CrawlMetrics:
    records, skipped = read_crawl_log(path)
    return evaluate(records, labels, skipped)


def judge_quality(path: Path, labels: Labels) -> dict[str, float | int]:
    """The crawler's judgement of the pages it fetched (``relevant`` of the judged lines of the
    log, distinct URLs with status 200) against the labels: ``believed`` pages it called
    relevant, ``true`` pages the labels call relevant, ``both``; ``precision`` = both /
    believed, ``recall`` = both / true (0 when undefined); ``believed_harvest`` = believed /
    fetched and ``true_harvest`` = true / fetched (fetched: every response, as the harvest rate)."""
    records, _ = read_crawl_log(path)
    believed: set[str] = set()
    judged: set[str] = set()
    with Path(path).open(encoding="utf-8") as f:
        for line in f:
            try:
                obj = json.loads(line)
                if int(obj.get("status", 200)) != 200 or obj.get("relevance") is None:
                    continue
                url = normalize_url(str(obj["url"]))
            except (ValueError, KeyError, TypeError):
                continue
            judged.add(url)
            if obj.get("relevant"):
                believed.add(url)
    true = {u for u in judged if u in labels.relevant}
    both = len(believed & true)
    fetched = len(records)
    return {
        "judged": len(judged),
        "believed": len(believed),
        "true": len(true),
        "both": both,
        "precision": both / len(believed) if believed else 0.0,
        "recall": both / len(true) if true else 0.0,
        "believed_harvest": len(believed) / fetched if fetched else 0.0,
        "true_harvest": len(true) / fetched if fetched else 0.0,
    }
