"""The dashboard's figures, from the crawl log (JSON lines), a stats JSON and the page index."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CHANGE_KINDS = ("new", "significant", "insignificant", "unchanged", "deleted")
WINDOW = 100  # pages in the moving harvest-rate window


@dataclass
class HarvestSeries:
    """Harvest rate after each fetched page: cumulative and over the last ``window`` pages."""

    fetched: list[int] = field(default_factory=list)
    cumulative: list[float] = field(default_factory=list)
    moving: list[float] = field(default_factory=list)
    elapsed: list[float] = field(default_factory=list)  # seconds since the first fetch
    window: int = WINDOW


def read_crawl_log(path: str | Path | None) -> tuple[list[dict[str, Any]], int]:
    """Records of the crawl log (fetch order) and how many lines were skipped as malformed."""
    if not path or not Path(path).is_file():
        return [], 0
    records, bad = [], 0
    with Path(path).open(encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(rec, dict):
                records.append(rec)
            else:
                bad += 1
    if bad:
        logger.warning("crawl log %s: %d malformed lines skipped", path, bad)
    records.sort(key=lambda r: _num(r.get("seq")))
    return records, bad


def _num(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def harvest_series(records: list[dict[str, Any]], window: int = WINDOW) -> HarvestSeries:
    series = HarvestSeries(window=window)
    relevant = 0
    recent: list[int] = []
    t0 = _num(records[0].get("t")) if records else 0.0
    for n, rec in enumerate(records, 1):
        hit = 1 if rec.get("relevant") else 0
        relevant += hit
        recent.append(hit)
        if len(recent) > window:
            relevant_recent = sum(recent[-window:])
            recent = recent[-window:]
        else:
            relevant_recent = sum(recent)
        series.fetched.append(n)
        series.cumulative.append(relevant / n)
        series.moving.append(relevant_recent / len(recent))
        series.elapsed.append(_num(rec.get("t"), t0) - t0)
    return series


def read_stats(path: str | Path | None) -> dict[str, Any]:
    """A flat JSON object of crawl stats (Scrapy's ``get_stats()`` dumped as JSON); {} if absent."""
    if not path or not Path(path).is_file():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        logger.warning("stats file %s unreadable: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def queue_size(stats: dict[str, Any]) -> int | None:
    """Requests waiting in the frontier, from the stats (None when they do not say)."""
    for key in ("focuscrawl/frontier/size", "focuscrawl/frontier/queued"):
        if key in stats:
            return int(_num(stats[key]))
    if "scheduler/enqueued" in stats:
        return int(_num(stats["scheduler/enqueued"]) - _num(stats.get("scheduler/dequeued")))
    return None


def counted_crawl(index_crawls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest crawl record of the index that counted change statuses (None: none did)."""
    for crawl in index_crawls:
        counts = crawl.get("counts") or {}
        if any(int(_num(counts.get(f"change/{k}"))) for k in CHANGE_KINDS):
            return crawl
    return None


def change_counts(index_crawls: list[dict[str, Any]], stats: dict[str, Any]) -> dict[str, int]:
    """Change counts of the last crawl over every page it fetched, relevant or not: from the
    index's crawl record, else from the stats."""
    crawl = counted_crawl(index_crawls)
    if crawl is not None:
        counts = crawl.get("counts") or {}
        return {k: int(_num(counts.get(f"change/{k}"))) for k in CHANGE_KINDS}
    return {k: int(_num(stats.get(f"focuscrawl/change/{k}"))) for k in CHANGE_KINDS}


def freshness(summary: dict[str, Any], now: float | None = None) -> dict[str, float | None]:
    """Ages (seconds) of the indexed pages' last fetch: newest, mean, oldest."""
    now = time.time() if now is None else now

    def age(t: float | None) -> float | None:
        return None if not t else max(0.0, now - float(t))

    return {
        "newest_age": age(summary.get("newest_fetch")),
        "mean_age": age(summary.get("mean_fetch")),
        "oldest_age": age(summary.get("oldest_fetch")),
    }
