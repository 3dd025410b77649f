"""The frontier contract: a best-first queue of URLs with float scores, shared by every backend.

Backends (memory, memory persisted under JOBDIR, Redis) pass one contract test suite
(``tests/frontier_contract.py``). Entries are plain data, JSON-serialisable, never live
``Request`` objects and never pickles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol
from urllib.parse import urlsplit


class PushResult(Enum):
    ADDED = "added"
    UPGRADED = "upgraded"  # already queued, found again with a better score: moved up
    QUEUED = "queued"  # already queued with a score at least as good: unchanged
    SEEN = "seen"  # fetched (or popped) before: not queued again
    ABSENT = "absent"  # an upgrade of a URL that is not queued: nothing done


@dataclass(slots=True)
class FrontierEntry:
    url: str
    score: float
    fingerprint: bytes  # request fingerprint (de-duplication key)
    data: dict[str, Any] = field(default_factory=dict)  # JSON-able: scoring meta, request fields
    # deliveries that ended with their process or worker (popped, never acknowledged); see
    # focuscrawl.frontier.quarantine
    attempts: int = 0

    @property
    def host(self) -> str:
        return host_of(self.url)


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


HostBusy = Callable[[str], bool]


def never_busy(host: str) -> bool:
    return False


class Frontier(Protocol):
    """Best-first: ``pop`` returns the highest score among hosts that are not busy.

    Ties pop in insertion order (so a score of ``-depth`` gives breadth-first order).
    ``force=True`` on push bypasses de-duplication (``dont_filter`` requests).
    """

    def open(self) -> None: ...

    def close(self) -> None: ...

    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult: ...

    def pop(self, busy: HostBusy = never_busy) -> FrontierEntry | None: ...

    def ack(self, fingerprint: bytes) -> None:
        """The popped entry has been fully processed (its lease, if any, is released)."""
        ...

    def push_replacing(self, item: tuple[Any, ...], parent: bytes) -> PushResult:
        """Push ``(url, score, fingerprint, data, force)`` (a redirect or retry) and acknowledge
        the popped entry ``parent`` it replaces, so that no fault loses the new request."""
        ...

    def seen(self, fingerprint: bytes) -> bool: ...

    # URLs quarantined since the last look (the scheduler reports and clears them) and entries
    # delivered again after an unacknowledged delivery (see focuscrawl.frontier.quarantine)
    quarantined: list[Any]
    redelivered: int

    def __len__(self) -> int: ...
