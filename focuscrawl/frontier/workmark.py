"""The work mark: which page this process is working on right now (guilty-only quarantine).

A death counts against a page only when the process died *while working on it* (partition,
parse, scoring), not because the page was in flight (downloading, queued in the downloader or
the scraper): those are bystanders. The per-page work runs on the reactor thread, one page at a
time, so the mark is one slot: the fingerprint of the page whose code runs now, or nothing.

The slot is a small local file rewritten in place with one ``pwrite`` (no fsync: a killed
process's writes are in the kernel already; a machine crash is not a poison page). No round
trip, no journal record: a few microseconds per page. A graceful close removes the file; a
resume reads what a death left (:func:`read_mark`) and raises that page's death count only.

A Redis worker's slot is ``working-<pid>.mark`` in its data directory (JOBDIR when set): the
mark holds the fingerprint and the host (the host names the shard). A worker that starts claims
the marks of dead processes there (:func:`claim_dead_marks`) and reports each to Redis (the
``blame`` script), so a worker restarted on the same machine, or a sibling sharing the data
directory, raises the count; a worker that never comes back blames nobody.
"""

from __future__ import annotations

import contextlib
import os

MARK_FILE = "working.mark"  # under JOBDIR, next to the frontier journal
MAX_FP = 255  # payload bytes kept (a 20-byte fingerprint, then the host for Redis)
WORKER_MARK = "working-{pid}.mark"  # a Redis worker's slot, in its data directory
_SLOT = 1 + MAX_FP
_EMPTY = b"\0" * _SLOT


FP_BYTES = 20  # a payload's fingerprint part (request fingerprints are SHA1)


def payload(fingerprint: bytes, host: str = "") -> bytes:
    """What a mark holds: the fingerprint (padded to FP_BYTES), then the host (Redis shards)."""
    return fingerprint[:FP_BYTES].ljust(FP_BYTES, b"\0") + host.encode("utf-8", "replace")


def host_of_payload(data: bytes) -> str:
    return data[FP_BYTES:].decode("utf-8", "replace")


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
        """``fingerprint``'s work starts now (None: no page is being worked on). Any bytes up to
        MAX_FP: the fingerprint first."""
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


def claim_dead_marks(directory: str, own_pid: int | None = None) -> list[bytes]:
    """The payloads left by dead processes' worker marks in ``directory``, each file claimed
    (renamed, so two starting workers never report one death twice) and removed."""
    own = os.getpid() if own_pid is None else own_pid
    out: list[bytes] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if not (name.startswith("working-") and name.endswith(".mark")):
            continue
        try:
            pid = int(name[len("working-") : -len(".mark")])
        except ValueError:
            continue
        if pid == own or _alive(pid):
            continue
        path = os.path.join(directory, name)
        claimed = f"{path}.claimed-{own}"
        try:
            os.rename(path, claimed)
        except OSError:
            continue  # another worker claimed it
        payload = read_mark(claimed)
        with contextlib.suppress(OSError):
            os.unlink(claimed)
        if payload:
            out.append(payload)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True
