"""The work mark: which page this process is working on right now (guilty-only quarantine).

A death counts against a page only when the process died *while working on it* (partition,
parse, scoring), not because the page was in flight (downloading, queued in the downloader or
the scraper): those are bystanders. The per-page work runs on the reactor thread, one page at a
time, so the mark is one slot: the fingerprint of the page whose code runs now, or nothing.

The slot is a small local file rewritten in place with one ``pwrite`` (no fsync: a killed
process's writes are in the kernel already; a machine crash is not a poison page). No round
trip, no journal record: a few microseconds per page. A graceful close removes the file; a
resume reads what a death left (:func:`read_mark`) and raises that page's death count only.
"""

from __future__ import annotations

import contextlib
import os

MARK_FILE = "working.mark"  # under JOBDIR, next to the frontier journal
MAX_FP = 64  # fingerprint bytes kept (request fingerprints are 20)
_SLOT = 1 + MAX_FP
_EMPTY = b"\0" * _SLOT


class WorkMark:
    """The slot file; :meth:`open` creates it (no I/O before)."""

    __slots__ = ("path", "_fd", "_current")

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._current: bytes | None = None

    def open(self) -> None:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        os.pwrite(self._fd, _EMPTY, 0)
        self._current = None

    def mark(self, fingerprint: bytes | None) -> None:
        """``fingerprint``'s work starts now (None: no page is being worked on)."""
        if self._fd is None or fingerprint == self._current:
            return
        fp = (fingerprint or b"")[:MAX_FP]
        try:
            os.pwrite(self._fd, bytes([len(fp)]) + fp.ljust(MAX_FP, b"\0"), 0)
        except OSError:
            return  # a full disk: the page is a bystander at worst, the crawl goes on
        self._current = fingerprint

    def clear(self) -> None:
        self.mark(None)

    def close(self) -> None:
        """A graceful end: no page was guilty of anything."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(self.path)


def read_mark(path: str) -> bytes | None:
    """The fingerprint a death left in the slot file at ``path``, or None (no file, an empty
    slot or an unreadable one: then nobody is blamed)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_SLOT)
    except OSError:
        return None
    if len(raw) < 1 or raw[0] == 0 or raw[0] > MAX_FP or len(raw) < 1 + raw[0]:
        return None
    return raw[1 : 1 + raw[0]]
