"""The processes and the disk of the chaos soak (``tests/chaos_soak.py``): a ``topical_redis``
worker with the soak's shared data dir and its log kept live in a file, its peak RSS, and the
data dir on a tmpfs of its own that can be filled and freed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import subprocess
from pathlib import Path

from tests.fault_crawl import CrawlProcess
from tests.test_cluster_workers import CLUSTER_COMPONENTS


class Worker(CrawlProcess):
    """``scrapy crawl topical_redis`` on the cluster, with the soak's shared data dir (as
    :class:`tests.test_cluster_workers.Worker`, which gives each worker a data dir of its own)."""

    def __init__(self, cwd: Path, name: str, redis_url: str, *args: str, log: Path) -> None:
        argv = [*args, "-s", f"REDIS_URL={redis_url}", "-s", f"USER_AGENT={name}"]

        argv += [*CLUSTER_COMPONENTS, "-s", "FOCUSCRAWL_CLUSTER_STATS_INTERVAL=1"]
        argv += ["-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]
        self.name = name
        self.log_file = log.open("a", encoding="utf-8", buffering=1)  # kept live, for a look
        super().__init__(cwd, "topical_redis", argv)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log_file.write(line)
            with self._lock:
                self.lines.append(line)
                for pattern, event in self._waits:
                    if pattern.search(line):
                        event.set()
        with self._lock:
            for _, event in self._waits:
                event.set()
        self.log_file.close()

    def wait_for_line(self, text: str, timeout: float = 120) -> bool:
        return self.wait_for(re.escape(text), timeout)


def peak_rss_kb(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class DataDisk:
    """The shared data dir on a tmpfs of its own (root only), which can be filled and freed."""

    def __init__(self, path: Path, size_mb: int) -> None:
        self.path = path
        self.size_mb = size_mb
        self.mounted = False
        self.filler = path / ".chaos-filler"

    def __enter__(self) -> DataDisk:
        self.path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m", "tmpfs", str(self.path)],
                capture_output=True,
                text=True,
            )
            self.mounted = done.returncode == 0
        return self

    def fill(self) -> int:
        """Write a file until the filesystem is full; the bytes written. The index's WAL is
        checkpointed and truncated first (what any other user of the index may do): else its
        next commits reuse the WAL's pages, need no new block, and the full disk goes unseen
        (a first soak's 15 s of full disk stopped no worker)."""
        index = self.path / "index.sqlite"
        if index.exists():
            db = sqlite3.connect(index, timeout=10)
            try:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                db.close()
        written = 0
        chunk = b"\0" * (1 << 20)
        with self.filler.open("wb", buffering=0) as f:
            while True:
                try:
                    n = f.write(chunk)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    if len(chunk) == 1:
                        return written
                    chunk = chunk[: len(chunk) // 2]
                    continue
                written += n or 0

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def __exit__(self, *exc: object) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=False)
