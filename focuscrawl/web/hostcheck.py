"""The ``Host`` header check of ``focuscrawl serve``: no answers to a rebound DNS name.

A page on any site can make a browser resolve its own name to 127.0.0.1 (DNS rebinding) and
then read ``http://evil.example:8300/api/search`` as same-origin: the request reaches our
loopback server with ``Host: evil.example:8300``. Answering only requests whose Host names the
address we are bound to, ``localhost``, or a name the user listed stops that: the browser
always sends the name it resolved.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

LOCAL_NAMES = ("localhost",)


def allowed_hosts(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Host names (lower case, no port, IPv6 without brackets) the server answers to."""
    names = {_normal(bound), *LOCAL_NAMES}
    try:
        ip = ipaddress.ip_address(_normal(bound))
    except ValueError:
        ip = None
    if ip is not None and ip.is_loopback:
        names.add("::1" if ip.version == 6 else "127.0.0.1")
    names.update(_normal(n) for n in extra if n.strip())
    return frozenset(names)


def host_name(header: str) -> str:
    """The name of a ``Host`` header value: ``[::1]:8300`` → ``::1``, ``Local.Host.:80`` →
    ``local.host``; "" when it is not a host name."""
    value = header.strip()
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1 :] if end > 0 else "?"
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return ""
        return _normal(value[1:end])
    if value.count(":") > 1:  # a bare IPv6 address is not a valid Host value
        return ""
    name, _, port = value.partition(":")
    if port and not port.isdigit():
        return ""
    return _normal(name)


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    if not header:
        return False
    name = host_name(header)
    return bool(name) and name in allowed


def _normal(name: str) -> str:
    return name.strip().strip("[]").rstrip(".").lower()
