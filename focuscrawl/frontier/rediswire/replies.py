"""What the frontier's scripts answer, decoded in one place.

The scripts answer in compact arrays (a pop's first element is a one-byte tag); these are the
names. Nothing here talks to Redis.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from focuscrawl.frontier.base import PushResult
from focuscrawl.frontier.quarantine import QuarantineRecord, redis_record

__all__ = ["PopKind", "PopReply", "RequeueReply", "push_result", "push_results"]

_RESULTS = {r.value.encode(): r for r in PushResult}


class PopKind(Enum):
    """What a ``popbest`` reply is (its first element)."""

    #: ``{"!", host, rest, score8, top hosts...}``: an entry popped (and leased) from ``host``;
    #: the hosts then at the top come along, to ask ``busy`` about at the next pop
    ENTRY = b"!"
    #: ``{"?", hosts...}``: the scan met a host the caller said nothing about; ask ``busy``
    #: about these hosts (in order) and call again
    ASK = b"?"
    #: ``false`` (nil): every queued host is busy, or nothing is queued. (A pop sent ahead
    #: whose reply was nil was once kept as ``[b"-"]``; it is this.)
    NOTHING = b""


class PopReply:
    """A decoded ``popbest`` reply (see :class:`PopKind`)."""

    __slots__ = ("host", "hosts", "kind", "rest", "score8")

    def __init__(
        self,
        kind: PopKind,
        hosts: list[str],
        host: str = "",
        rest: bytes = b"",
        score8: bytes = b"",
    ) -> None:
        self.kind = kind
        self.hosts = hosts  # ENTRY: the top hosts after the pop; ASK: the hosts to ask about
        self.host = host
        self.rest = rest  # ``fplen fp flags deflated`` (see focuscrawl.frontier.redis_entry)
        self.score8 = score8  # the packed score, big-endian double

    @classmethod
    def decode(cls, reply: Any) -> PopReply:
        if not reply:
            return NOTHING
        if reply[0] == b"!":
            return cls(
                PopKind.ENTRY,
                [h.decode() for h in reply[4:]],
                reply[1].decode(),
                reply[2],
                reply[3],
            )
        if reply[0] == b"?":
            return cls(PopKind.ASK, [h.decode() for h in reply[1:]])
        raise ValueError(f"not a popbest reply: {reply!r:.80}")

    @property
    def is_entry(self) -> bool:
        return self.kind is PopKind.ENTRY

    @property
    def fp8(self) -> bytes:
        """The entry's key in the lease set: the first 8 bytes of its fingerprint."""
        return self.rest[1:9]

    def __repr__(self) -> str:
        return f"PopReply({self.kind.name}, {self.host or self.hosts!r})"


NOTHING = PopReply(PopKind.NOTHING, [])


class RequeueReply:
    """A ``requeue`` reply: ``{expired leases handled, re-queued, seconds until the earliest
    lease left expires (-1: none left), fp8, quarantine value, ...}``."""

    __slots__ = ("due", "moved", "quarantined", "wait")

    def __init__(self, reply: list[Any]) -> None:
        due, moved, wait, *records = reply
        self.due = int(due)
        self.moved = int(moved)
        self.wait = float(wait)
        self.quarantined: list[QuarantineRecord] = [
            redis_record(fp8, value) for fp8, value in zip(records[::2], records[1::2], strict=True)
        ]


def push_result(reply: bytes) -> PushResult:
    """A ``push`` reply (``added``, ``upgraded``, ``queued``, ``seen``)."""
    return _RESULTS[reply]


def push_results(replies: list[Any]) -> list[PushResult]:
    """The results of ``pushack`` / ``pushmany`` replies (a list of push replies each)."""
    return [_RESULTS[r] for reply in replies for r in reply]
