"""Write turns: processes sharing one index file take turns at writing it, fairly.

SQLite's own wait for the write lock (``busy_timeout``) is not fair: it sleeps and retries, so a
writer that commits and begins again at once can keep another out for as long as it writes (a
worker of a shared data directory once waited 60 s and stopped). :class:`WriteTurns` is a lock
file beside the index (``<index>.turns``, ``flock``) taken for each short write transaction:

* the holder writes one batch and lets go; before its next turn it leaves a gap (``gap``
  seconds) in which a waiting process, trying every ``poll`` seconds, takes the lock;
* a process killed while holding it loses it at once (the kernel drops its ``flock``);
* the wait happens in the caller's thread (the index writer's own, never the reactor's):
  :meth:`take` returns the seconds waited, or raises :class:`TurnTimeout` past ``timeout``.

Readers (``focuscrawl serve``, search) need no turn: the index is in WAL mode.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

POLL = 0.001  # seconds between two tries of a waiting writer
GAP = 0.005  # seconds a writer leaves the lock free between two turns of its own


class TurnTimeout(RuntimeError):
    """Another process held the write turn longer than the timeout."""


class WriteTurns:
    def __init__(self, path: str, timeout: float = 60.0, *, poll: float = POLL, gap: float = GAP):
        self.path = path
        self.timeout = timeout
        self.poll = poll
        self.gap = gap
        self._fd: int | None = None
        self._held = False
        self._released_at = 0.0
        self.longest_wait = 0.0  # seconds: the longest a turn was waited for

    @classmethod
    def beside(cls, index_path: str, timeout: float = 60.0) -> WriteTurns | None:
        """The turns of the index at ``index_path`` (None for an in-memory index)."""
        if not index_path or index_path == ":memory:":
            return None
        return cls(str(Path(index_path).with_name(Path(index_path).name + ".turns")), timeout)

    def open(self) -> None:
        if self._fd is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def close(self) -> None:
        if self._fd is not None:
            if self._held:
                self.release()
            os.close(self._fd)
            self._fd = None

    def take(self) -> float:
        """Wait for the turn (in this thread); the seconds waited."""
        self.open()
        assert self._fd is not None
        since_mine = time.monotonic() - self._released_at
        if since_mine < self.gap:  # our own turn just ended: let a waiting process in first
            time.sleep(self.gap - since_mine)
        start = time.monotonic()
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                if self.timeout and waited > self.timeout:
                    raise TurnTimeout(
                        f"{self.path}: another process held the index write turn for more "
                        f"than {self.timeout:g}s"
                    ) from None
                time.sleep(self.poll)
        self._held = True
        waited = time.monotonic() - start
        self.longest_wait = max(self.longest_wait, waited)
        return waited

    def release(self) -> None:
        if self._fd is not None and self._held:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self._held = False
            self._released_at = time.monotonic()
