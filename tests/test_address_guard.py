"""The crawler reaches only the addresses it may: the guarded resolver and the middleware on
their own, then real ``scrapy crawl topical`` runs against loopback servers. 127.0.0.2 stands for
the public web (it is in ``FOCUSCRAWL_ALLOW_PRIVATE``); 127.0.0.99, 127.0.0.1 and ::1 stand for
the internal network: their servers must receive nothing.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import CannotResolveHostError
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IReactorPluggableNameResolver
from zope.interface import implementer

from focuscrawl.addon import DOWNLOADER_MIDDLEWARES
from focuscrawl.middlewares.addresses import STAT_BLOCKED, AddressBlocked, AddressGuardMiddleware
from focuscrawl.middlewares.resolver import GuardedNameResolver, install, installed, uninstall
from focuscrawl.netguard import AddressPolicy, allow_private_args
from tests.loopback_web import loopback_web, page, redirect, robots

ROOT = Path(__file__).resolve().parents[1]


# --- the resolver on its own -----------------------------------------------------------------
class Receiver:
    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.complete = False

    def resolutionBegan(self, resolution: object) -> None:
        pass

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(address.host)

    def resolutionComplete(self) -> None:
        self.complete = True


class StubResolver:
    """Answers each lookup of a name with the next of its answers (a DNS that rebinds)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers

    def resolveHostName(self, receiver: Any, name: str, port: int = 0, *args: Any) -> None:
        receiver.resolutionBegan(object())
        for ip in self.answers[name].pop(0):
            receiver.addressResolved((IPv6Address if ":" in ip else IPv4Address)("TCP", ip, port))
        receiver.resolutionComplete()


def lookup(resolver: GuardedNameResolver, name: str) -> list[str]:
    receiver = Receiver()
    resolver.resolveHostName(receiver, name, 80)
    assert receiver.complete
    return receiver.addresses


def test_the_resolver_withholds_refused_addresses_from_every_answer() -> None:
    stub = StubResolver(
        {
            "mixed.test": [["93.184.215.14", "10.0.0.1", "::1"]],
            "evil.test": [["127.0.0.99", "169.254.169.254"], ["8.8.8.8"]],
            "intranet.test": [["10.1.2.3"]],
            "lab.test": [["127.0.0.2"]],
        }
    )
    dropped: list[tuple[str, str, str]] = []
    policy = AddressPolicy.parse("127.0.0.2,intranet.test")
    guard = GuardedNameResolver(stub, policy, lambda *a: dropped.append(a))
    assert lookup(guard, "mixed.test") == ["93.184.215.14"]
    assert guard.take_refusal("mixed.test") is None  # an allowed address was left
    assert lookup(guard, "evil.test") == []  # nothing left: the connection fails to resolve
    assert lookup(guard, "evil.test") == ["8.8.8.8"]  # the next answer is judged afresh
    # the failed connection's DNS error is the guard's doing, once: a later one is DNS's
    assert guard.take_refusal("EVIL.test.") == "127.0.0.99"
    assert guard.take_refusal("evil.test") is None
    assert lookup(guard, "intranet.test") == ["10.1.2.3"]  # a listed name
    assert lookup(guard, "lab.test") == ["127.0.0.2"]  # a listed address
    assert [(h, ip) for h, ip, _ in dropped] == [
        ("mixed.test", "10.0.0.1"),
        ("mixed.test", "::1"),
        ("evil.test", "127.0.0.99"),
        ("evil.test", "169.254.169.254"),
    ]
    assert dropped[0][2] == "private" and dropped[3][2] == "link-local"


def test_dns_rebinding_meets_the_check_in_the_answer_the_connection_uses() -> None:
    # first answer public, the next (zero TTL) internal: the second is judged as it is used
    stub = StubResolver({"rebind.test": [["93.184.215.14"], ["127.0.0.1"], ["93.184.215.14"]]})
    guard = GuardedNameResolver(stub, AddressPolicy())
    answers = [lookup(guard, "rebind.test") for _ in range(3)]
    assert answers == [["93.184.215.14"], [], ["93.184.215.14"]]
    assert guard.take_refusal("rebind.test") == "127.0.0.1"


@implementer(IReactorPluggableNameResolver)
class FakeReactor:
    def __init__(self, resolver: Any) -> None:
        self.nameResolver = resolver

    def installNameResolver(self, resolver: Any) -> Any:
        previous, self.nameResolver = self.nameResolver, resolver
        return previous


def test_guards_chain_on_the_reactor_and_come_out_again() -> None:
    base = StubResolver({})
    reactor = FakeReactor(base)
    first = GuardedNameResolver(None, AddressPolicy())
    second = GuardedNameResolver(None, AddressPolicy())
    assert install(reactor, first) and install(reactor, first)  # idempotent
    assert reactor.nameResolver is first and first.inner is base
    # something else installed over it (Scrapy's own resolver at reactor start): wrap it again
    other = StubResolver({})
    reactor.installNameResolver(other)
    assert not installed(reactor, first)
    install(reactor, first)
    assert reactor.nameResolver is first and first.inner is other
    install(reactor, second)  # a second crawler in the process: both policies apply
    assert reactor.nameResolver is second and second.inner is first
    uninstall(reactor, first)
    assert reactor.nameResolver is second and second.inner is other
    uninstall(reactor, second)
    assert reactor.nameResolver is other
    assert not install(object(), first)  # no pluggable resolver: nothing to install


# --- the middleware on its own ---------------------------------------------------------------
def middleware(allow: str = "127.0.0.2") -> AddressGuardMiddleware:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_ALLOW_PRIVATE": allow})
    crawler.stats.open_spider()
    mw = AddressGuardMiddleware.from_crawler(crawler)
    # get_crawler() runs without a reactor here; the guard gets a fake one, not the process's
    mw._reactor, mw._pluggable = FakeReactor(StubResolver({})), True
    return mw


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.99/",
        "http://127.1:8080/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[fe80::1]/",
        "https://192.168.0.1/",
        "ftp://10.0.0.1/file",
    ],
)
def test_ip_literals_are_refused_before_the_download(url: str) -> None:
    mw = middleware()
    with pytest.raises(AddressBlocked, match="FOCUSCRAWL_ALLOW_PRIVATE does not list it"):
        mw.process_request(Request(url))
    assert mw.stats.get_value(STAT_BLOCKED) == 1


def test_listed_literals_names_and_public_hosts_pass() -> None:
    mw = middleware("127.0.0.2,10.0.0.0/8,::1")
    for url in [
        "http://127.0.0.2:8080/",
        "http://10.9.8.7/",
        "http://[::1]/",
        "http://example.com/",
        "http://8.8.8.8/",
        "data:,x",
    ]:
        assert mw.process_request(Request(url)) is None
    assert mw.stats.get_value(STAT_BLOCKED) is None
    assert installed(mw.reactor, mw.resolver)  # the guard sits in front of the resolver


def test_a_proxy_given_as_a_refused_literal_is_refused() -> None:
    mw = middleware()
    with pytest.raises(AddressBlocked):
        mw.process_request(Request("http://example.com/", meta={"proxy": "10.0.0.3:3128"}))
    assert (
        mw.process_request(Request("http://example.com/", meta={"proxy": "127.0.0.2:3128"})) is None
    )


def test_a_name_the_resolver_refused_fails_as_address_blocked_not_a_dns_error() -> None:
    mw = middleware()
    mw.resolver.add_refusal("internal.test", "10.0.0.8")
    request = Request("http://Internal.Test/x")
    with pytest.raises(AddressBlocked, match="10.0.0.8 is private"):
        mw.process_exception(request, CannotResolveHostError("no results"))
    # a name that failed to resolve for another reason stays a DNS error (retried as usual)
    other = Request("http://gone.test/")
    assert mw.process_exception(other, CannotResolveHostError("no results")) is None
    assert mw.process_exception(request, ValueError("x")) is None


def test_the_peer_address_of_a_response_is_checked_too() -> None:
    mw = middleware()
    request = Request("http://example.com/")
    ok = HtmlResponse(
        "http://example.com/", body=b"<p>hi", ip_address=ipaddress.ip_address("93.184.215.14")
    )
    assert mw.process_response(request, ok) is ok
    bad = HtmlResponse(
        "http://example.com/", body=b"<p>hi", ip_address=ipaddress.ip_address("10.0.0.1")
    )
    with pytest.raises(AddressBlocked):
        mw.process_response(request, bad)
    assert mw.process_response(request, HtmlResponse("http://example.com/", body=b"")) is not None


def test_a_bad_allow_list_stops_the_crawl_at_start() -> None:
    with pytest.raises(ValueError, match="'10.0.0.1:80'"):
        middleware("10.0.0.1:80")


def test_the_addon_registers_the_guard_above_proxy_and_retry() -> None:
    order = DOWNLOADER_MIDDLEWARES["focuscrawl.middlewares.addresses.AddressGuardMiddleware"]
    assert order > 750  # HttpProxyMiddleware's process_request has set meta["proxy"]
    assert order > 550  # its process_exception runs before RetryMiddleware's


# --- real crawls -----------------------------------------------------------------------------
def crawl(tmp: Path, seed: str, *settings: str) -> tuple[dict[str, Any], list[dict], str]:
    env = {
        **os.environ,
        "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    stats, log = tmp / "stats.json", tmp / "log.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds",
         "-a", f"seeds={seed}", "-s", f"FOCUSCRAWL_STATS_FILE={stats}",
         "-s", f"FOCUSCRAWL_CRAWL_LOG={log}", "-s", f"FOCUSCRAWL_DATA_DIR={tmp / 'data'}",
         "-s", "TELNETCONSOLE_ENABLED=False", *settings],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    fetched = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    # a crawl whose seed was refused fetched nothing: it says so and exits with status 3
    assert proc.returncode == (0 if fetched else 3), proc.stderr[-3000:]
    return json.loads(stats.read_text()), fetched, proc.stderr


def refused_lines(stderr: str, host: str) -> list[str]:
    return [line for line in stderr.splitlines() if f"(host {host})" in line and "Refused" in line]


INTERNAL = ["127.0.0.99", "127.0.0.1", "::1"]


def test_links_redirects_names_and_rebinding_never_reach_the_internal_network(
    tmp_path: Path,
) -> None:
    routes: dict[str, Any] = {"/robots.txt": robots}
    # one request per connection, so that every request of rebind.test makes a DNS lookup
    with loopback_web(["127.0.0.2", *INTERNAL], routes, keep_alive=False) as web:
        port = web.port
        rebind = [f"http://rebind.test:{port}/rebind-{i}" for i in range(4)]
        links = [
            web.url("127.0.0.99", "/internal"),  # an IP literal
            web.url("127.0.0.2", "/redirect"),  # a redirect from an allowed host to 127.0.0.99
            f"http://localhost:{port}/by-name",  # a name that resolves to 127.0.0.1
            f"http://127.1:{port}/legacy",  # 127.0.0.1 written the inet_aton way
            f"http://2130706433:{port}/decimal",  # and as one number
            web.url("::1", "/v6"),  # IPv6 loopback
            f"http://[::ffff:127.0.0.99]:{port}/mapped",  # IPv4-mapped IPv6
            web.url("127.0.0.2", "/ok"),
            *rebind,
        ]
        routes.update(
            {
                "/": page("Birds", links),
                "/ok": page("Birds ok"),
                "/redirect": redirect(web.url("127.0.0.99", "/redirected")),
                **{f"/rebind-{i}": page(f"Birds {i}") for i in range(4)},
                **{p: page("internal") for p in ["/internal", "/redirected", "/by-name"]},
                **{p: page("internal") for p in ["/legacy", "/decimal", "/v6", "/mapped"]},
            }
        )
        stats, fetched, stderr = crawl(
            tmp_path,
            web.url("127.0.0.2", "/"),
            *allow_private_args(["127.0.0.2"]),
            "-s",
            "TWISTED_DNS_RESOLVER=tests.rebinding_resolver.RebindingResolver",
        )
        hits = {address: list(paths) for address, paths in web.hits.items()}

    assert {a: hits.get(a, []) for a in INTERNAL} == {a: [] for a in INTERNAL}
    served = hits["127.0.0.2"]
    assert {"/", "/ok", "/redirect"} <= set(served)
    urls = {row["url"] for row in fetched}
    assert web.url("127.0.0.2", "/ok") in urls
    assert not any(
        re.search(r"internal|redirected|by-name|legacy|decimal|v6|mapped", u) for u in urls
    )
    # refused: the literal, the redirect target, localhost, 127.1, 2130706433, ::1, the mapped
    # address (each also for its robots.txt), and rebind.test whenever it answered 127.0.0.99
    assert stats["focuscrawl/error/AddressBlocked"] >= 7
    assert stats["focuscrawl/skip/address_blocked"] >= 7 + 6
    assert "retry/count" not in stats  # a refusal is final
    # rebinding: the answers alternate; the ones for 127.0.0.99 were withheld at connection
    assert stats["focuscrawl/address/withheld"] >= 2  # localhost and rebind.test at least
    assert any(p.startswith("/rebind-") for p in served)
    assert refused_lines(stderr, "rebind.test")
    # one INFO line per refused host, however many of its requests were refused
    for host in ["127.0.0.99", "localhost", "127.1", "2130706433", "::1", "rebind.test"]:
        assert len(refused_lines(stderr, host)) == 1, (host, refused_lines(stderr, host))
    assert "Traceback" not in stderr


def test_cidr_entries_names_and_ipv6_in_the_allow_list_are_reached(tmp_path: Path) -> None:
    routes: dict[str, Any] = {"/robots.txt": robots}
    with loopback_web(["127.0.0.2", "127.0.0.3", "127.0.0.1", "::1", "127.0.0.99"], routes) as web:
        links = [
            web.url("127.0.0.3", "/cidr"),  # in 127.0.0.2/31
            f"http://localhost:{web.port}/name",  # listed by name (resolves to 127.0.0.1)
            web.url("::1", "/v6"),  # listed address
            web.url("127.0.0.99", "/outside"),  # not listed
        ]
        routes.update(
            {
                "/": page("Birds", links),
                **{p: page("Birds") for p in ["/cidr", "/name", "/v6", "/outside"]},
            }
        )
        stats, fetched, stderr = crawl(
            tmp_path,
            web.url("127.0.0.2", "/"),
            *allow_private_args(["127.0.0.2/31", "localhost", "::1"]),
            # Scrapy's default resolver is IPv4 only (gethostbyname): an IPv6 address needs
            # the getaddrinfo one
            "-s",
            "TWISTED_DNS_RESOLVER=scrapy.resolver.CachingHostnameResolver",
        )
        hits = {address: list(paths) for address, paths in web.hits.items()}

    assert "/cidr" in hits["127.0.0.3"]
    assert "/name" in hits["127.0.0.1"]
    assert "/v6" in hits["::1"]
    assert hits.get("127.0.0.99", []) == []
    assert stats["focuscrawl/error/AddressBlocked"] == 1
    assert {r["url"] for r in fetched} >= set(links[:3])


def test_no_allow_list_means_no_loopback_at_all(tmp_path: Path) -> None:
    routes: dict[str, Any] = {"/": page("Birds"), "/robots.txt": robots}
    with loopback_web(["127.0.0.2"], routes) as web:
        stats, fetched, stderr = crawl(tmp_path, web.url("127.0.0.2", "/"))
        hits = dict(web.hits)
    assert hits == {}
    assert fetched == []
    assert stats["focuscrawl/error/seed"] == 1
    assert refused_lines(stderr, "127.0.0.2")
    assert ": address not allowed (FOCUSCRAWL_ALLOW_PRIVATE)" in stderr  # the crawl's summary
