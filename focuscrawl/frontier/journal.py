"""The JOBDIR frontier journal file: whole records or nothing, and one process at a time.

Records are JSON lines appended with ``os.write`` (each reaches the kernel before the call
returns: a SIGKILL loses nothing written). A write can be short (a disk filling up): the rest is
written, and when the disk refuses it the file is cut back to where the record began, so two
records never run together; the journal then refuses every later write (sticky), so nothing
written after a lost record can contradict it (a page's ack after its lost links). The caller
changes its memory only after :meth:`Journal.append` returned.

A small reserve file is kept next to the journal and deleted to make room for the release
records of a graceful close on a full disk (:meth:`Journal.append_final`): the pages in flight
then come back at resume without an attempt counted against them.

:func:`claim_jobdir` holds ``JOBDIR/focuscrawl.lock`` (``fcntl.flock``) for the process: a second
process on the same JOBDIR is refused (:class:`JobdirBusy`), and so is a second frontier of the
same process on it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from dataclasses import dataclass

logger = logging.getLogger(__name__)

LOCK_FILE = "focuscrawl.lock"
RESERVE_SUFFIX = ".reserve"
RESERVE_BYTES = 64 * 1024


class JournalBroken(OSError):
    """A journal write failed earlier: it takes no more records (the crawl is stopping)."""


class Journal:
    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = 0
        self.broken: OSError | None = None

    def open(self) -> None:
        """Open the (compacted) journal for appending; make the reserve if it is missing."""
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._size = os.fstat(self._fd).st_size
        self.broken = None
        reserve = self.path + RESERVE_SUFFIX
        if not os.path.exists(reserve):
            try:
                with open(reserve, "wb") as fh:
                    fh.write(b"\0" * RESERVE_BYTES)
            except OSError as exc:  # a full disk at start: go on without one
                logger.warning("frontier journal: no reserve file (%s)", exc)
                with contextlib.suppress(OSError):
                    os.unlink(reserve)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def append(self, data: bytes) -> None:
        """Append whole records (``data`` ends with a newline) or raise ``OSError``."""
        if self.broken is not None:
            raise JournalBroken(
                self.broken.errno or errno.EIO, f"journal write failed earlier: {self.broken}"
            )
        self._write(data)

    def append_final(self, data: bytes) -> bool:
        """The last records of a graceful close: written even after a failure, using the
        reserve's room if need be; False when even that failed."""
        for attempt in range(2):
            try:
                self._write(data)
                return True
            except OSError as exc:
                if attempt or not self._free_reserve():
                    logger.error("frontier journal: the close records were not written: %s", exc)
                    return False
        return False

    def _free_reserve(self) -> bool:
        try:
            os.unlink(self.path + RESERVE_SUFFIX)
            return True
        except OSError:
            return False

    def _write(self, data: bytes) -> None:
        assert self._fd is not None, "journal not open"
        start, done = self._size, 0
        try:
            while done < len(data):
                n = os.write(self._fd, data[done:])
                if n <= 0:
                    raise OSError(errno.EIO, "write returned nothing")
                done += n
        except OSError as exc:
            if done:  # a partial record: cut it off so the next record starts on a new line
                try:
                    os.ftruncate(self._fd, start)
                except OSError as cut:
                    logger.error("frontier journal: cannot cut a partial record: %s", cut)
            self.broken = exc
            raise
        self._size = start + done


@dataclass
class _Held:
    fd: int
    claimed: bool = False


_HELD: dict[str, _Held] = {}


class JobdirBusy(RuntimeError):
    """Another process (or another crawl of this process) uses this JOBDIR."""


def lock_jobdir(jobdir: str) -> None:
    """Hold ``JOBDIR/focuscrawl.lock`` for this process (idempotent); :class:`JobdirBusy`
    when another process holds it, ``OSError`` when the directory cannot be written."""
    path = os.path.realpath(jobdir)
    if path in _HELD:
        return
    os.makedirs(path, exist_ok=True)
    fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise JobdirBusy(
            f"JOBDIR {jobdir} is in use by another crawl (pid {holder}); one JOBDIR serves one "
            "crawl at a time: wait for it to end, or give this crawl its own JOBDIR"
        ) from None
    with contextlib.suppress(OSError):  # the pid is for the message above; a full disk is ok
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    _HELD[path] = _Held(fd)


def claim_jobdir(jobdir: str) -> None:
    """Lock ``jobdir`` (see :func:`lock_jobdir`) for the one frontier of this process that
    may use it; :class:`JobdirBusy` if another frontier of this process holds it."""
    lock_jobdir(jobdir)
    held = _HELD[os.path.realpath(jobdir)]
    if held.claimed:
        raise JobdirBusy(
            f"JOBDIR {jobdir} is in use by another crawl of this process; give each crawl its "
            "own JOBDIR"
        )
    held.claimed = True


def release_jobdir(jobdir: str) -> None:
    """The frontier is done with ``jobdir``; the lock goes with the process (or this call,
    when the process holds nothing else there)."""
    held = _HELD.pop(os.path.realpath(jobdir), None)
    if held is not None:
        os.close(held.fd)  # closing the descriptor releases the flock
