"""Storage faults: a full disk, a read-only data directory, a failing device.

The stores a crawl writes around its frontier (the JOBDIR journal, the SQLite change store and
index) meet these as ``OSError`` (``ENOSPC``, ``EROFS``, …) or as ``sqlite3.OperationalError``
("database or disk is full", "attempt to write a readonly database", …).
:func:`storage_fault` names the fault, or says that an error is not one; a component that meets
one logs one line (:func:`fault_message`), stops the crawl (``CloseSpider`` reason
``storage_full`` or ``storage_error``) and raises :class:`StorageFault` for the item or page at
hand, which is then *not* acknowledged in the frontier: a resumed crawl fetches it again.
"""

from __future__ import annotations

import errno
import sqlite3

#: errno values that mean "the data directory cannot take this write"
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READONLY = {errno.EROFS, errno.EACCES, errno.EPERM}
_IO = {errno.EIO}
#: SQLite's texts for the same faults (sqlite3.OperationalError has no errno in Python 3.10)
_SQLITE_FULL = ("database or disk is full", "disk is full")
_SQLITE_READONLY = ("readonly database", "unable to open database file", "read-only")
_SQLITE_IO = ("disk i/o error",)


class StorageFault(RuntimeError):
    """A write the crawl's stores need failed on the disk: the crawl stops, resumable.

    ``kind`` is ``full``, ``readonly`` or ``io``; ``reason`` the close reason of the spider."""

    def __init__(self, message: str, kind: str = "io") -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def reason(self) -> str:
        return "storage_full" if self.kind == "full" else "storage_error"


def storage_fault(exc: BaseException) -> str | None:
    """``full``, ``readonly`` or ``io`` when ``exc`` is a storage fault, else None."""
    if isinstance(exc, StorageFault):
        return exc.kind
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in _FULL:
            return "full"
        if exc.errno in _READONLY:
            return "readonly"
        if exc.errno in _IO:
            return "io"
        return None
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if any(t in text for t in _SQLITE_FULL):
            return "full"
        if any(t in text for t in _SQLITE_READONLY):
            return "readonly"
        if any(t in text for t in _SQLITE_IO):
            return "io"
    return None


_WHAT = {
    "full": "the disk is full",
    "readonly": "the data directory is read-only (or not writable by this user)",
    "io": "the disk failed (I/O error)",
}


def fault_message(where: str, exc: BaseException) -> str:
    """One line for the log: what failed, why, and that the crawl can be resumed."""
    kind = storage_fault(exc) or "io"
    return (
        f"{where}: cannot write: {_WHAT[kind]} ({exc}); stopping the crawl. Nothing written "
        "so far is lost: free space (or fix the permissions) and run the same command again "
        "to resume (with JOBDIR)"
    )


def as_fault(where: str, exc: BaseException) -> StorageFault | None:
    """``exc`` as a :class:`StorageFault` (message from :func:`fault_message`), or None."""
    kind = storage_fault(exc)
    if kind is None:
        return None
    if isinstance(exc, StorageFault):
        return exc
    return StorageFault(fault_message(where, exc), kind)
