"""Which pages a crawl may render: the hosts allowed to render, and a budget per host.

Pure: no Scrapy. :class:`RenderPolicy` answers ``admit(host)`` with ``None`` (render it; the
host's budget is charged) or the reason it is not rendered, a stats key suffix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from focuscrawl.netguard import normalize_host

#: hosts whose renders are counted; past it a new host is not rendered (the counter of a
#: crawl of millions of hosts stays small)
MAX_HOSTS = 100_000

MODES = ("never", "auto", "always")


@dataclass(slots=True)
class RenderPolicy:
    """``hosts``: host names (a name allows its subdomains too) or addresses; empty: every
    host. ``budget``: renders per host, 0 for no limit."""

    hosts: frozenset[str] = frozenset()
    budget: int = 0
    max_hosts: int = MAX_HOSTS
    rendered: Counter[str] = field(default_factory=Counter)

    @classmethod
    def parse(cls, hosts: str | Iterable[str] | None, budget: int = 0) -> RenderPolicy:
        if hosts is None:
            hosts = []
        elif isinstance(hosts, str):
            hosts = hosts.split(",")
        names = frozenset(normalize_host(h.strip("[] ")) for h in hosts if h.strip("[] "))
        return cls(names, budget)

    def host_allowed(self, host: str) -> bool:
        if not self.hosts:
            return True
        name = normalize_host(host.strip("[]"))
        while name:
            if name in self.hosts:
                return True
            name = name.partition(".")[2]
        return False

    def refusal(self, host: str) -> str | None:
        """Why ``host`` may not render now (``"host"``, ``"budget"``, ``"hosts_cap"``), or
        ``None``; charges nothing."""
        if not self.host_allowed(host):
            return "host"
        key = normalize_host(host)
        if self.budget and self.rendered[key] >= self.budget:
            return "budget"
        if key not in self.rendered and len(self.rendered) >= self.max_hosts:
            return "hosts_cap"
        return None

    def admit(self, host: str) -> str | None:
        """:meth:`refusal`, and when there is none one render charged to ``host``."""
        why = self.refusal(host)
        if why is None:
            self.rendered[normalize_host(host)] += 1
        return why
