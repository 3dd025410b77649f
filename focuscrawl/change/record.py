"""A page's change record and its compact history form: what every change store backend and the
recrawl policy share (kept apart from :mod:`focuscrawl.change.store`, which chooses a backend, so
that the backends and the policy import it without an import circle).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.change.classify import STATUSES
from focuscrawl.change.fingerprint import Fingerprints

#: the layout both backends write; a store written by a NEWER version is refused
SCHEMA_VERSION = 2
DEFAULT_MAX_HISTORY = 64

_CODE = {"new": "n", "unchanged": "u", "insignificant": "i", "significant": "s", "deleted": "d"}
_STATUS = {v: k for k, v in _CODE.items()}


class StoreError(RuntimeError):
    """The change store cannot be used: wrong schema, lost data, unreachable server."""


def encode_visit(fetched_at: float, status: str) -> str:
    if status not in _CODE:
        raise ValueError(f"unknown change status {status!r}; expected one of {STATUSES}")
    return f"{fetched_at:.3f} {_CODE[status]}"


def decode_history(text: str) -> list[tuple[float, str]]:
    """Visits from the compact form; malformed entries are skipped (never a crash)."""
    visits: list[tuple[float, str]] = []
    for entry in (text or "").split(";"):
        parts = entry.split()
        if len(parts) == 2 and parts[1] in _STATUS:
            try:
                visits.append((float(parts[0]), _STATUS[parts[1]]))
            except ValueError:
                continue
    return visits


def append_history(text: str, visit: str, max_history: int) -> str:
    entries = [e for e in (text or "").split(";") if e]
    entries.append(visit)
    return ";".join(entries[-max_history:])


@dataclass(slots=True)
class PageRecord:
    url: str
    fingerprints: Fingerprints | None = None  # of the latest version with a body
    history: list[tuple[float, str]] = field(default_factory=list)  # (fetched_at, status)
    features: dict[str, Any] = field(default_factory=dict)  # for clustering: depth, size, …

    @property
    def last_fetched(self) -> float:
        return self.history[-1][0] if self.history else 0.0

    @property
    def status(self) -> str:
        return self.history[-1][1] if self.history else ""

    @property
    def last_changed(self) -> float:
        for t, s in reversed(self.history):
            if s in ("new", "significant", "deleted"):
                return t
        return 0.0

    @property
    def deleted(self) -> bool:
        return self.status == "deleted"


def parse_fingerprints(text: str | bytes | None) -> Fingerprints | None:
    if not text:
        return None
    return Fingerprints.from_dict(json.loads(text))


def dump_fingerprints(fp: Fingerprints | None) -> str:
    return json.dumps(fp.to_dict(), separators=(",", ":")) if fp is not None else ""


def keeps_fingerprints(status: str) -> bool:
    """Whether a visit of this status carries a body whose fingerprints replace the stored."""
    return status not in ("unchanged", "deleted")
