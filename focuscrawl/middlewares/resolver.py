"""A Twisted name resolver that withholds the addresses an :class:`AddressPolicy` refuses.

Every connection of Scrapy's HTTP/1.1 handler goes through the reactor's name resolver:
``HostnameEndpoint.connect`` asks ``reactor.nameResolver`` for every host, IP literals
included, and ``reactor.connectTCP`` (used for HTTPS through a proxy) asks ``reactor.resolver``,
which ``installNameResolver`` derives from the same name resolver (only IPv4 literals skip it
there; :class:`~focuscrawl.middlewares.addresses.AddressGuardMiddleware` checks literals itself).
Filtering the answer that the connection uses, rather than checking a separate lookup first,
leaves no window for DNS rebinding: an address is judged in the same step that hands it to the
connection. A host whose answer held only refused addresses fails with Twisted's
``DNSLookupError``; each such answer leaves a token (:meth:`GuardedNameResolver.take_refusal`),
so the middleware can turn exactly that many errors of the host into a clear ``AddressBlocked``
(one lookup per connection attempt, one connection per failed request; concurrent lookups of a
host that answers differently each time, as in DNS rebinding, each get their own token).

Scrapy installs its own resolver (``TWISTED_DNS_RESOLVER``) from the process settings, which an
add-on cannot change, just before the reactor starts; this one wraps whatever is installed, from
the first request on (:func:`install`), and its DNS cache stays in use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from twisted.internet.interfaces import (
    IAddress,
    IHostnameResolver,
    IHostResolution,
    IReactorPluggableNameResolver,
    IResolutionReceiver,
)
from zope.interface import implementer

from focuscrawl.netguard import AddressPolicy, normalize_host

MAX_REFUSED_HOSTS = 10_000


@implementer(IResolutionReceiver)
class _FilteringReceiver:
    def __init__(
        self, guard: GuardedNameResolver, receiver: IResolutionReceiver, host: str
    ) -> None:
        self.guard = guard
        self.receiver = receiver
        self.host = host
        self.key = normalize_host(host)
        self.kept = 0
        self.dropped: list[str] = []

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        self.receiver.resolutionBegan(resolution)

    def addressResolved(self, address: IAddress) -> None:
        ip = getattr(address, "host", None)
        why = "not an IP address" if ip is None else self.guard.policy.refuses(self.host, ip)
        if why is None:
            self.kept += 1
            self.receiver.addressResolved(address)
            return
        self.dropped.append(str(ip))
        self.guard.on_drop(self.host, str(ip), why)

    def resolutionComplete(self) -> None:
        if self.dropped and not self.kept:
            self.guard.add_refusal(self.key, self.dropped[0])
        self.receiver.resolutionComplete()


@implementer(IHostnameResolver)
class GuardedNameResolver:
    """Resolves through ``inner`` and passes on only the addresses ``policy`` allows."""

    def __init__(
        self,
        inner: IHostnameResolver | None,
        policy: AddressPolicy,
        on_drop: Callable[[str, str, str], None] = lambda host, ip, why: None,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.on_drop = on_drop
        # host (normalized) -> [a refused address, answers with only refused ones not yet taken]
        self.refused: dict[str, list[Any]] = {}

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        assert self.inner is not None, "install() the guard first"
        receiver = _FilteringReceiver(self, resolutionReceiver, hostName)
        return self.inner.resolveHostName(
            receiver, hostName, portNumber, addressTypes, transportSemantics
        )

    def add_refusal(self, host: str, ip: str) -> None:
        entry = self.refused.pop(host, None) or [ip, 0]
        entry[1] += 1
        self.refused[host] = entry  # last used last: the oldest go first past the limit
        while len(self.refused) > MAX_REFUSED_HOSTS:
            del self.refused[next(iter(self.refused))]

    def take_refusal(self, host: str) -> str | None:
        """A refused address of ``host`` if one of its answers held only refused addresses and
        has not been taken yet (its connection failed to resolve because of the guard)."""
        key = normalize_host(host)
        entry = self.refused.get(key)
        if entry is None:
            return None
        entry[1] -= 1
        if entry[1] <= 0:
            del self.refused[key]
        return str(entry[0])


def installed(reactor: Any, guard: GuardedNameResolver) -> bool:
    """Whether ``guard`` is in the chain of resolvers the reactor uses."""
    resolver = reactor.nameResolver
    while isinstance(resolver, GuardedNameResolver):
        if resolver is guard:
            return True
        resolver = resolver.inner
    return False


def install(reactor: Any, guard: GuardedNameResolver) -> bool:
    """Put ``guard`` in front of the reactor's resolver unless it is there already.

    Returns False if the reactor has no pluggable name resolver (nothing was installed).
    """
    if not IReactorPluggableNameResolver.providedBy(reactor):
        return False
    if not installed(reactor, guard):
        guard.inner = reactor.nameResolver
        reactor.installNameResolver(guard)
    return True


def uninstall(reactor: Any, guard: GuardedNameResolver) -> None:
    """Take ``guard`` out of the reactor's chain of resolvers (other guards stay)."""
    if not IReactorPluggableNameResolver.providedBy(reactor):
        return
    outer: GuardedNameResolver | None = None
    resolver = reactor.nameResolver
    while isinstance(resolver, GuardedNameResolver):
        if resolver is guard:
            if outer is None:
                reactor.installNameResolver(guard.inner)
            else:
                outer.inner = guard.inner
            return
        outer, resolver = resolver, resolver.inner
