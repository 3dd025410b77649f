"""A Twisted name resolver for the DNS-rebinding test: ``rebind.test`` answers 127.0.0.2 and
127.0.0.99 in turn, as an attacker's DNS server with a zero TTL would; other names resolve as
usual. Installed in a test crawl with ``-s TWISTED_DNS_RESOLVER=tests.rebinding_resolver.RebindingResolver``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.interfaces import (
    IAddress,
    IHostnameResolver,
    IHostResolution,
    IResolutionReceiver,
)
from zope.interface import implementer

NAME = "rebind.test"
ANSWERS = ("127.0.0.2", "127.0.0.99")


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        pass


@implementer(IHostnameResolver)
class RebindingResolver:
    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor
        self.inner: IHostnameResolver = reactor.nameResolver
        self.lookups = 0

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> RebindingResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        if hostName != NAME:
            return self.inner.resolveHostName(
                resolutionReceiver, hostName, portNumber, addressTypes, transportSemantics
            )
        ip = ANSWERS[self.lookups % len(ANSWERS)]
        self.lookups += 1
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        resolutionReceiver.addressResolved(IPv4Address("TCP", ip, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution
