"""What the local test web serves: a :class:`Site` of :class:`Resource` objects per host.

The server (:mod:`focuseval.server`) serves any object that follows the
:class:`Site` protocol; the synthetic web, the Wikispeedia rendering and the evolving web of the
change-detection evaluation are all sites. A site answers ``get(host, path)`` with a ready-made
:class:`Resource` (body already rendered to bytes, so serving costs no rendering) or ``None``
for a 404, and ``robots(host)`` with the text of that host's ``/robots.txt``.

Hosts are loopback addresses (``127.0.0.2``, ``127.0.0.3``, …): each host its own address on one
shared port, so URLs look like ``http://127.0.0.2:8123/wiki/Bird``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Protocol, runtime_checkable

HTML = "text/html; charset=utf-8"

#: A fixed "last modified" time for static corpora: 2024-01-01T00:00:00Z.
EPOCH_2024 = 1704067200.0


def etag_for(body: bytes) -> str:
    """A strong ETag (quoted) from the body's content."""
    return '"' + hashlib.blake2b(body, digest_size=10).hexdigest() + '"'


@dataclass(slots=True)
class Resource:
    """One response the test web can serve.

    ``last_modified`` is a unix time; ``etag`` is a quoted strong ETag (computed from the body
    when left empty). ``headers`` carries extra response headers (e.g. ``Location`` for 3xx).
    A resource with ``status`` 3xx and a ``Location`` header is a redirect. ``behaviour``
    names what the server does instead of sending ``body`` (the hostile web's wire tricks):
    ``endless`` (a chunked body without end) or ``drip`` (one byte at a time, slowly).
    """

    body: bytes
    content_type: str = HTML
    status: int = 200
    last_modified: float = EPOCH_2024
    etag: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    behaviour: str = ""

    def __post_init__(self) -> None:
        if not self.etag:
            self.etag = etag_for(self.body)

    @property
    def last_modified_http(self) -> str:
        """``Last-Modified`` header value (RFC 7231 IMF-fixdate)."""
        return formatdate(self.last_modified, usegmt=True)


@runtime_checkable
class Site(Protocol):
    """A multi-host web site the test server can serve."""

    hosts: list[str]

    def get(self, host: str, path: str) -> Resource | None:
        """The resource at ``path`` (with query string, if any) on ``host``; ``None`` → 404."""
        ...

    def robots(self, host: str) -> str:
        """The text of ``http://<host>/robots.txt``."""
        ...


def loopback_hosts(n: int, first: int = 2) -> list[str]:
    """``n`` loopback addresses ``127.0.0.<first>`` … (127.0.0.1 is left to other services)."""
    if not 1 <= n <= 250:
        raise ValueError(f"hosts must be between 1 and 250, got {n}")
    return [f"127.0.0.{first + i}" for i in range(n)]
