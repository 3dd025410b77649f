"""Crawl processes for the fault-injection tests: started, read line by line, killed, resumed.

A :class:`CrawlProcess` is ``scrapy crawl`` in a subprocess whose stderr is read by a thread, so
a test waits for a log line (an event, never a sleep) and then kills or signals the process.
:func:`crawl_args` builds the arguments of a crawl of a test web (loopback hosts allowed, a crawl
log, a stats file, the data dir and JOBDIR given). :func:`crawl_facts` reads back what a crawl
left: every fetch in its crawl logs, the relevant pages, the index and the change store.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.netguard import allow_private_args

ROOT = Path(__file__).resolve().parents[1]
PROGRESS = re.compile(r"Crawled (\d+) pages")
CONCURRENCY = 8
# breadth-first: which pages a whole crawl fetches does not depend on the order
BFS = ["-s", "FOCUSCRAWL_STRATEGY=bfs", "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}"]


def comparable(urls: set[str]) -> set[str]:
    """Leave out the trap's query variants: which of them pass the cap depends on the order."""
    return {u for u in urls if "/trap/" not in u}


class CrawlProcess:
    """``scrapy crawl <spider> <args>`` in ``cwd``; its stderr lines can be waited for."""

    def __init__(self, cwd: Path, spider: str, args: list[str], env: dict[str, str] | None = None):
        full_env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
        full_env["PYTHONPATH"] = str(ROOT)
        full_env.update(env or {})
        cmd = [sys.executable, "-m", "scrapy", "crawl", spider, *args]
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self._waits: list[tuple[re.Pattern[str], threading.Event]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._lock:
                self.lines.append(line)
                for pattern, event in self._waits:
                    if pattern.search(line):
                        event.set()
        with self._lock:  # the process ended: nobody waits for a line that cannot come
            for _, event in self._waits:
                event.set()

    def wait_for(self, pattern: str, timeout: float = 180) -> bool:
        """True once a line matching ``pattern`` was logged (False: timeout or the end)."""
        regex = re.compile(pattern)
        event = threading.Event()
        with self._lock:
            if any(regex.search(line) for line in self.lines):
                return True
            if self.proc.poll() is not None and not self._reader.is_alive():
                return False
            self._waits.append((regex, event))
        event.wait(timeout)
        with self._lock:
            return any(regex.search(line) for line in self.lines)

    def count(self, pattern: str) -> int:
        """Lines logged so far that match ``pattern``."""
        regex = re.compile(pattern)
        with self._lock:
            return sum(1 for line in self.lines if regex.search(line))

    def wait_for_count(self, pattern: str, n: int, timeout: float = 180) -> bool:
        """True once ``n`` lines matching ``pattern`` were logged."""
        regex = re.compile(pattern)
        event = threading.Event()

        def enough() -> bool:
            return sum(1 for line in self.lines if regex.search(line)) >= n

        class Counting:  # a pattern object whose search() says when there are n matches
            def search(self, line: str) -> bool:
                return enough()

        with self._lock:
            if enough():
                return True
            if self.proc.poll() is not None and not self._reader.is_alive():
                return False
            self._waits.append((Counting(), event))  # type: ignore[arg-type]
        event.wait(timeout)
        with self._lock:
            return enough()

    def wait_for_pages(self, n: int, timeout: float = 180) -> bool:
        """True once a progress line says at least ``n`` pages were crawled."""
        return self.wait_for(rf"Crawled ([1-9]\d{{{len(str(n))},}}|{_at_least(n)}) pages", timeout)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    def finish(self, timeout: float = 300) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"crawl still running after {timeout:.0f}s:\n{self.log[-6000:]}")
        self._reader.join(timeout=30)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return code

    @property
    def log(self) -> str:
        with self._lock:
            return "".join(self.lines)


def _at_least(n: int) -> str:
    """A regex of the decimal numbers ``>= n`` that have as many digits as ``n``."""
    digits = str(n)
    alts = []
    for i, d in enumerate(digits):
        if d != "9":
            rest = len(digits) - i - 1
            alts.append(digits[:i] + f"[{int(d) + 1}-9]" + r"\d" * rest)
    alts.append(digits)
    return "|".join(alts)


def crawl_args(web: Any, topic: Path, work: Path, run: int, *extra: str) -> list[str]:
    """A crawl of ``web`` keeping its stores under ``work`` (data dir, JOBDIR unless ``extra``
    says otherwise), its crawl log and stats file numbered by ``run``."""
    return [
        "-a", f"topic={topic}",
        "-s", f"FOCUSCRAWL_DATA_DIR={work / 'data'}",
        "-s", f"FOCUSCRAWL_CRAWL_LOG={work / f'log{run}.jsonl'}",
        "-s", f"FOCUSCRAWL_STATS_FILE={work / f'stats{run}.json'}",
        "-s", "FOCUSCRAWL_PROGRESS_INTERVAL=0.2",
        "-s", "LOG_LEVEL=INFO",
        "-s", "TELNETCONSOLE_ENABLED=False",
        *extra,
        *allow_private_args(web.hosts),
    ]  # fmt: skip


@dataclass
class CrawlFacts:
    fetches: Counter[str] = field(default_factory=Counter)  # URL → times fetched (status 200)
    relevant: set[str] = field(default_factory=set)  # judged relevant at their last fetch
    indexed: set[str] = field(default_factory=set)
    recorded: set[str] = field(default_factory=set)  # URLs in the change store
    judged: dict[str, set[bool]] = field(default_factory=dict)  # URL → every judgement of it
    # fetched (status 200) and found a near-duplicate of a page fetched before, so not judged:
    # which of two copies (the about pages of two hosts) comes first depends on the order
    copies: set[str] = field(default_factory=set)

    @property
    def fetched(self) -> set[str]:
        return set(self.fetches)

    @property
    def reached(self) -> set[str]:
        """Every page fetched, judged or found a near-duplicate."""
        return self.fetched | self.copies

    @property
    def repeated(self) -> int:
        return sum(n - 1 for n in self.fetches.values())


def crawl_facts(work: Path) -> CrawlFacts:
    """What the crawls under ``work`` left: their crawl logs, index and change store."""
    facts = CrawlFacts()
    relevance: dict[str, bool] = {}
    for log in sorted(work.glob("log*.jsonl"), key=lambda p: int(p.stem[3:] or 0)):
        for line in log.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # the line being written at a kill
                continue
            if record.get("status") == 200 and record.get("duplicate_of"):
                facts.copies.add(record["url"])
            if record.get("status") == 200 and record.get("relevance") is not None:
                facts.fetches[record["url"]] += 1
                relevance[record["url"]] = bool(record["relevant"])
                facts.judged.setdefault(record["url"], set()).add(bool(record["relevant"]))
    facts.relevant = {url for url, relevant in relevance.items() if relevant}
    facts.indexed = table_urls(work / "data" / "index.sqlite", "pages")
    facts.recorded = table_urls(work / "data" / "change.sqlite3", "pages")
    return facts


def table_urls(path: Path, table: str) -> set[str]:
    if not path.exists():
        return set()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", path
        return {row[0] for row in db.execute(f"SELECT url FROM {table}")}  # noqa: S608
    finally:
        db.close()


def topic_file(work: Path, web: Any, topic: str = "birds") -> Path:
    seeds = ", ".join(json.dumps(u) for u in web.seeds[topic])
    path = work / f"{topic}.toml"
    path.write_text(f'name = "{topic}"\nkeywords = ["{topic}"]\nseeds = [{seeds}]\n')
    return path
