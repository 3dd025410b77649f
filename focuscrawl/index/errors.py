"""What the index backends raise (both: SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3

from focuscrawl.faults import StorageFault


class IndexStoreError(Exception):
    """One index operation failed on the database (its message has no credential): the item at
    hand is the problem (bad data, a constraint), not the database."""


class IndexUnavailable(StorageFault):
    """The index database could not be reached (or kept failing) for longer than the retry
    timeout: the crawl stops, resumable; nothing acknowledged was lost."""


#: what a write to either backend raises when it fails (the pipeline undoes, holds or stops)
WRITE_ERRORS: tuple[type[BaseException], ...] = (
    sqlite3.Error,
    OSError,
    StorageFault,
    IndexStoreError,
)
#: what opening or reading either backend raises when the index is not there or not readable
READ_ERRORS: tuple[type[BaseException], ...] = (
    FileNotFoundError,
    ValueError,
    sqlite3.Error,
    StorageFault,
    IndexStoreError,
)
