"""Refuse requests to addresses outside the public internet unless ``FOCUSCRAWL_ALLOW_PRIVATE``
lists them (the policy: :mod:`focuscrawl.netguard`).

Three checks, one policy:

* before the download, a host that is an IP literal (``http://10.0.0.1/``, ``http://[::1]/``,
  ``http://2130706433/``) and a proxy given as one are judged without DNS;
* at connection time, :class:`~focuscrawl.middlewares.resolver.GuardedNameResolver` (installed
  in front of the reactor's resolver at the first request) withholds refused addresses from the
  answer the connection uses; a host left with none fails to resolve, which
  ``process_exception`` (above ``RetryMiddleware``, so it is not retried) turns into
  :class:`AddressBlocked`;
* after the download, the peer address Scrapy records (``response.ip_address``) is judged again,
  a last line should another download handler connect without the reactor's resolver.

A redirect is a new request that goes through every downloader middleware and a new connection
again, and so do robots.txt fetches: each hop is checked. Through a proxy the connection goes
to the proxy, so the proxy's address is what is checked (list a proxy on a private network);
the target's IP literal is checked too, its name is resolved by the proxy.

Refused requests raise :class:`AddressBlocked` (an ``IgnoreRequest``: the request's errback
gets it, nothing is retried) and count in ``focuscrawl/skip/address_blocked``; one INFO line per
host says why (for the first 10,000 hosts). Every address withheld from a DNS answer counts in
``focuscrawl/address/withheld``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from scrapy import signals
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import DNSLookupError

from focuscrawl.middlewares import resolver as guarded
from focuscrawl.netguard import SETTING, AddressPolicy, literal_address

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

STAT_BLOCKED = "focuscrawl/skip/address_blocked"
STAT_WITHHELD = "focuscrawl/address/withheld"
MAX_LOGGED_HOSTS = 10_000  # a page of links to ever new private hosts must not grow this


class AddressBlocked(IgnoreRequest):
    """A request to an address that ``FOCUSCRAWL_ALLOW_PRIVATE`` does not allow."""


class AddressGuardMiddleware:
    def __init__(self, policy: AddressPolicy, stats: StatsCollector, reactor: Any = None) -> None:
        self.policy = policy
        self.stats = stats
        self._reactor = reactor  # None: Twisted's global reactor, looked up when first needed
        self.resolver = guarded.GuardedNameResolver(None, policy, self._withheld)
        self._logged: set[str] = set()
        self._pluggable = True

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AddressGuardMiddleware:
        assert crawler.stats is not None
        policy = AddressPolicy.parse(crawler.settings.getlist(SETTING))
        mw = cls(policy, crawler.stats)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        if not crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            mw._pluggable = False  # and importing twisted.internet.reactor would install one
            logger.warning(
                "Without the Twisted reactor the address guard checks IP literals and the peer "
                "address of responses only, not DNS answers before connecting"
            )
        return mw

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self._pluggable:
            self._install()
        host = urlparse_cached(request).hostname or ""
        self._check_literal(request, host)
        proxy = _proxy_host(request)
        if proxy:
            self._check_literal(request, proxy)

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        if isinstance(exception, (CannotResolveHostError, DNSLookupError)):
            host = _proxy_host(request) or urlparse_cached(request).hostname or ""
            ip = self.resolver.take_refusal(host)
            if ip is not None:
                why = self.policy.refuses(host, ip) or "refused"
                self._refuse(request, host, ip, why)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        ip = response.ip_address
        if ip is not None:
            host = _proxy_host(request) or urlparse_cached(request).hostname or ""
            why = self.policy.refuses(host, ip)
            if why is not None:
                self._refuse(request, host, str(ip), why)
        return response

    def spider_closed(self) -> None:
        guarded.uninstall(self.reactor, self.resolver)

    @property
    def reactor(self) -> Any:
        if self._reactor is None:
            from twisted.internet import reactor

            self._reactor = reactor
        return self._reactor

    def _install(self) -> None:
        if not guarded.install(self.reactor, self.resolver):
            self._pluggable = False
            logger.warning(
                "The reactor has no pluggable name resolver: DNS answers are not checked"
            )

    def _check_literal(self, request: Request, host: str) -> None:
        ip = literal_address(host) if host else None
        if ip is not None:
            why = self.policy.refuses(host, ip)
            if why is not None:
                self._refuse(request, host, str(ip), why)

    def _refuse(self, request: Request, host: str, ip: str, why: str) -> None:
        self.stats.inc_value(STAT_BLOCKED)
        message = f"{ip} is {why} and {SETTING} does not list it"
        if host not in self._logged and len(self._logged) < MAX_LOGGED_HOSTS:
            self._logged.add(host)
            logger.info(
                "Refused %s (host %s): %s; further requests to this host are only counted in %s",
                request.url, host, message, STAT_BLOCKED,
            )  # fmt: skip
        raise AddressBlocked(f"address refused: {message}")

    def _withheld(self, host: str, ip: str, why: str) -> None:
        self.stats.inc_value(STAT_WITHHELD)
        logger.debug("DNS answer for %s: withheld %s (%s)", host, ip, why)


def _proxy_host(request: Request) -> str:
    proxy = request.meta.get("proxy")
    if not proxy:
        return ""
    if "://" not in proxy:
        proxy = "http://" + proxy
    return urlparse(proxy).hostname or ""
