"""What a chaos soak left, checked (``tests/chaos_soak.py``): run by ``bench/bench_chaos.py`` and
``tests/test_chaos_slice.py``.

* **Reachable** pages: those of the synthetic web reachable from the crawl's seeds by content
  links (the generator's link graph, :class:`focuseval.synthetic.SyntheticWeb`): an
  uninterrupted breadth-first crawl fetches every one of them (it fetches more: host pages,
  sidebar links, traps), so a reachable page never fetched is **lost**.
* **Fetches**: every crawl log line with status 200 (one log per worker incarnation). A fetch
  beyond a page's first is a **duplicate**; it is *after a kill* when an earlier fetch of that
  page was by an incarnation that died (SIGKILL, or a stop on a full disk: its page may not
  have been acknowledged), else it is a **live-worker duplicate** (the first fetcher lived on:
  its lease expired under it, or Redis lost its ack).
* **Index and change store**: every page relevant at its last judgement is in the index;
  every indexed page has a change-store record whose version (the fetch time of its last new or
  significant visit) is the index's ``fetched_at``; ``PRAGMA integrity_check`` is ``ok``.
* **Quarantine**: entries in ``<prefix>:{tag}:quarantine`` on every master (no page of the
  synthetic web kills a worker: each one is an innocent page).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.change.record import decode_history

VERSION_STATUSES = ("new", "significant")


@dataclass(slots=True)
class Fetch:
    url: str
    t: float
    incarnation: str  # "w2-3": the third process of worker 2
    relevant: bool


def reachable(pages: list[Any], seeds: Iterable[str], url_of: Any) -> set[str]:
    """URLs of ``pages`` (``PageSpec``: ``id``, ``links``) reachable from ``seeds`` by links."""
    by_url = {url_of(p): p for p in pages}
    stack = [by_url[u].id for u in seeds if u in by_url]
    seen = set(stack)
    while stack:
        for nxt in pages[stack.pop()].links:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return {url_of(pages[i]) for i in seen}


def read_fetches(logs: dict[str, Path]) -> list[Fetch]:
    """Every status-200 fetch of the crawl logs (incarnation → path), in time order."""
    out: list[Fetch] = []
    for incarnation, path in logs.items():
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # the line being written at a kill
                continue
            if record.get("status") == 200:
                relevant = bool(record.get("relevant"))
                out.append(Fetch(record["url"], float(record.get("t", 0)), incarnation, relevant))
    out.sort(key=lambda f: f.t)
    return out


@dataclass
class Duplicates:
    total: int = 0  # fetches beyond a page's first
    after_kill: int = 0  # an earlier fetch of the page was by an incarnation that died
    live: int = 0  # the rest
    live_examples: list[tuple[str, list[str]]] = field(default_factory=list)


def duplicates(fetches: list[Fetch], died: set[str]) -> Duplicates:
    out = Duplicates()
    by_url: dict[str, list[Fetch]] = {}
    for f in fetches:
        by_url.setdefault(f.url, []).append(f)
    for url, seq in by_url.items():
        for k in range(1, len(seq)):
            out.total += 1
            if any(earlier.incarnation in died for earlier in seq[:k]):
                out.after_kill += 1
            else:
                out.live += 1
                if len(out.live_examples) < 10:
                    out.live_examples.append((url, [f"{f.incarnation}@{f.t:.3f}" for f in seq]))
    return out


def last_relevant(fetches: list[Fetch]) -> set[str]:
    """Pages judged relevant at their last fetch."""
    last: dict[str, bool] = {}
    for f in fetches:  # in time order
        last[f.url] = f.relevant
    return {u for u, r in last.items() if r}


def index_pages(path: Path) -> tuple[str, dict[str, float]]:
    """``PRAGMA integrity_check``'s answer and every indexed URL with its ``fetched_at``."""
    if not path.exists():
        return "missing", {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        check = str(db.execute("PRAGMA integrity_check").fetchone()[0])
        rows = db.execute("SELECT url, fetched_at FROM pages").fetchall()
        return check, {str(u): float(t) for u, t in rows}
    finally:
        db.close()


def change_versions(client: Any, prefix: str = "fc:chg") -> dict[str, list[float]]:
    """Every URL of the change store on a Redis Cluster → the fetch times of its versions
    (visits that found it new or significantly changed)."""
    out: dict[str, list[float]] = {}
    for master in client.get_primaries():
        node = client.get_redis_connection(master)
        keys = list(node.scan_iter(match=f"{prefix}:*:p:*", count=1000))
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            pipe = client.pipeline()  # routed by slot (a key's master, asked fresh)
            for key in chunk:
                pipe.hget(key, "h")
            for key, history in zip(chunk, pipe.execute(), strict=True):
                url = key.decode().split(":p:", 1)[1]
                text = history.decode() if isinstance(history, bytes) else history or ""
                visits = decode_history(text)
                out[url] = [t for t, status in visits if status in VERSION_STATUSES]
    return out


def quarantined(client: Any, prefix: str) -> int:
    """Entries quarantined in every frontier shard of the cluster."""
    total = 0
    for master in client.get_primaries():
        node = client.get_redis_connection(master)
        for key in node.scan_iter(match=f"{prefix}:*:quarantine", count=1000):
            total += int(node.hlen(key))
    return total


@dataclass
class StoreCheck:
    integrity: str = ""
    indexed: int = 0
    relevant: int = 0
    relevant_missing: list[str] = field(default_factory=list)
    recorded: int = 0
    unrecorded: list[str] = field(default_factory=list)  # indexed, no change record
    version_mismatch: list[tuple[str, float, list[float]]] = field(default_factory=list)


def check_stores(index: Path, client: Any, relevant: set[str]) -> StoreCheck:
    out = StoreCheck()
    out.integrity, indexed = index_pages(index)
    versions = change_versions(client)
    out.indexed, out.relevant, out.recorded = len(indexed), len(relevant), len(versions)
    out.relevant_missing = sorted(relevant - set(indexed))
    for url, fetched_at in sorted(indexed.items()):
        if url not in versions:
            out.unrecorded.append(url)
        elif not versions[url] or abs(versions[url][-1] - fetched_at) > 0.002:
            out.version_mismatch.append((url, fetched_at, versions[url]))
    return out
