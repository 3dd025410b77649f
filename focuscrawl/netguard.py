"""Which network addresses the crawler may reach: the policy behind ``FOCUSCRAWL_ALLOW_PRIVATE``.

A page, a redirect or a DNS answer written by a stranger must not steer the crawler into the
network it runs in (cloud metadata at 169.254.169.254, an admin panel on 10.0.0.1, a database on
localhost). Every address that is not globally reachable is refused: private, loopback,
link-local, multicast, unspecified (0.0.0.0, ::), reserved, shared (100.64.0.0/10), benchmarking,
documentation and the other special-purpose blocks of the IANA registries, in IPv4 and IPv6, and
an IPv4 address carried inside IPv6 (``::ffff:127.0.0.1``, NAT64 ``64:ff9b::/96``, 6to4) is
judged by the IPv4 address it carries. The allow list names hosts (``intranet.example``,
``localhost``), addresses (``127.0.0.2``, ``::1``) or networks (``127.0.0.0/29``) that may be
reached anyway.

Pure: no Scrapy, no I/O. The Scrapy side is :mod:`focuscrawl.middlewares.addresses`.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SETTING = "FOCUSCRAWL_ALLOW_PRIVATE"

# Special-purpose blocks refused on top of what Python's ``ipaddress`` flags say (its lists
# change between Python versions; this one does not).
_SPECIAL: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "unspecified"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignment"),
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard"),
    ("2001::/23", "IETF protocol assignment"),  # includes Teredo 2001::/32
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing"),
    ("fc00::/7", "unique local (private)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
    ("::/8", "reserved"),  # after 64:ff9b:1::/48, inside it; holds the IPv4-compatible ::a.b.c.d
)
SPECIAL_NETWORKS: tuple[tuple[IPNetwork, str], ...] = tuple(
    (ipaddress.ip_network(net), why) for net, why in _SPECIAL
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_MAX_VERDICTS = 4096
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
_LEGACY_IPV4 = re.compile(r"^[0-9a-fx.]+$")


def parse_address(text: str) -> IPAddress:
    """``text`` as an address; brackets and an IPv6 zone (``%eth0``) are dropped."""
    return ipaddress.ip_address(text.strip().strip("[]").split("%", 1)[0])


def literal_address(host: str) -> IPAddress | None:
    """The address a URL host names without DNS, or ``None`` for a name.

    Besides the usual forms this reads the legacy IPv4 forms that ``inet_aton`` and so every
    resolver accept (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``).
    """
    text = host.strip().lower().rstrip(".")
    if ":" not in text and not _LEGACY_IPV4.match(text):
        return None  # a name (the common case; no exceptions raised to find out)
    try:
        return parse_address(host)
    except ValueError:
        pass
    if text and _LEGACY_IPV4.match(text) and text[0].isdigit():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), if any."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


@functools.lru_cache(maxsize=4096)  # a crawl meets the same addresses again and again
def refusal_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address (``"loopback"``, ``"private"``, …), or ``None``."""
    inner = embedded_ipv4(ip)
    if inner is not None:
        why = refusal_reason(inner)
        return f"{why} (it carries {inner})" if why else None
    for net, why in SPECIAL_NETWORKS:
        if ip.version == net.version and ip in net:
            return why
    for flag in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{flag}"):
            return flag.replace("_", "-")
    if not ip.is_global:
        return "not globally reachable"
    return None


def normalize_host(host: str) -> str:
    """A host name as the allow list compares it: lower case, no trailing dot, ASCII (IDNA)."""
    text = host.strip().lower().rstrip(".")
    try:
        return text.encode("idna").decode("ascii")
    except UnicodeError:
        return text


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Public addresses, plus the hosts and networks of the allow list."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()
    # (host, ip) -> verdict for non-public addresses: the test webs' every request asks again
    _verdicts: dict[tuple[str, IPAddress], str | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def parse(cls, entries: str | Iterable[str] | None) -> AddressPolicy:
        """From ``"127.0.0.2,10.1.0.0/16,intranet.example"`` or a list of such entries.

        Raises ``ValueError`` naming the entry that is neither a host name, an address nor a
        network (a port or a wildcard, say).
        """
        if entries is None:
            entries = []
        elif isinstance(entries, str):
            entries = entries.split(",")
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            if "/" in entry:
                try:
                    networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                except ValueError:
                    raise _bad_entry(raw) from None
                continue
            ip = literal_address(entry)
            if ip is not None:
                networks.append(ipaddress.ip_network(ip))
                continue
            name = normalize_host(entry)
            if not all(_LABEL.match(label) for label in name.split(".")):
                raise _bad_entry(raw)
            hosts.add(name)
        return cls(frozenset(hosts), tuple(networks))

    def listed(self, ip: IPAddress) -> bool:
        """Whether ``ip`` (or the IPv4 address it maps) is in a network of the allow list."""
        candidates = [ip]
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        return any(c.version == n.version and c in n for c in candidates for n in self.networks)

    def host_listed(self, host: str) -> bool:
        return bool(self.hosts) and normalize_host(host) in self.hosts

    def refuses(self, host: str, ip: IPAddress | str) -> str | None:
        """Why a connection to ``ip`` for ``host`` is refused, or ``None`` if it is allowed."""
        if isinstance(ip, str):
            ip = parse_address(ip)
        why = refusal_reason(ip)
        if why is None:
            return None
        key = (host, ip)
        if key not in self._verdicts:
            if len(self._verdicts) >= _MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[key] = None if self.listed(ip) or self.host_listed(host) else why
        return self._verdicts[key]

    def allows(self, host: str, ip: IPAddress | str) -> bool:
        return self.refuses(host, ip) is None


def _bad_entry(raw: str) -> ValueError:
    return ValueError(
        f"{SETTING}: {raw!r} is not a host name, an address or a network (CIDR); "
        "ports and wildcards are not supported"
    )


def allow_private_value(hosts: Iterable[str]) -> str:
    """The ``FOCUSCRAWL_ALLOW_PRIVATE`` value that lets a crawl reach exactly ``hosts``."""
    return ",".join(dict.fromkeys(h.strip("[]") for h in hosts))


def allow_private_args(hosts: Iterable[str]) -> list[str]:
    """``["-s", "FOCUSCRAWL_ALLOW_PRIVATE=<hosts>"]`` for a ``scrapy crawl`` command line."""
    return ["-s", f"{SETTING}={allow_private_value(hosts)}"]
