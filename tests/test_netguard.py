"""The address policy on its own (no Scrapy): which addresses are refused, and the allow list."""

from __future__ import annotations

import ipaddress

import pytest

from focuscrawl.netguard import (
    AddressPolicy,
    allow_private_args,
    allow_private_value,
    literal_address,
    normalize_host,
    refusal_reason,
)

REFUSED = [
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),  # "this network"
    ("10.0.0.1", "private"),
    ("100.64.0.1", "shared"),  # carrier-grade NAT
    ("100.127.255.254", "shared"),
    ("127.0.0.1", "loopback"),
    ("127.0.0.99", "loopback"),
    ("169.254.169.254", "link-local"),  # cloud metadata
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.8", "IETF"),
    ("192.0.0.170", "IETF"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "6to4 relay"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:10.1.2.3", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("::127.0.0.1", "reserved"),  # the deprecated IPv4-compatible form
    ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
    ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
    ("64:ff9b:1::1", "NAT64"),
    ("100::1", "discard"),
    ("2001::1", "IETF"),  # Teredo
    ("2001:db8::1", "documentation"),
    ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:c0a8:101::1", "private"),  # 6to4 of 192.168.1.1
    ("fc00::1", "unique local"),
    ("fd12:3456::1", "unique local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
]
PUBLIC = [
    "1.1.1.1",
    "8.8.8.8",
    "93.184.215.14",
    "100.63.255.255",  # just below the shared block
    "100.128.0.0",  # just above it
    "172.32.0.1",  # just above 172.16/12
    "192.0.1.1",
    "198.20.0.1",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
]


@pytest.mark.parametrize(("ip", "why"), REFUSED)
def test_non_public_addresses_are_refused_with_a_reason(ip: str, why: str) -> None:
    reason = refusal_reason(literal_address(ip))  # type: ignore[arg-type]
    assert reason is not None and why in reason
    assert not AddressPolicy().allows("example.com", ip)


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_are_allowed(ip: str) -> None:
    assert refusal_reason(literal_address(ip)) is None  # type: ignore[arg-type]
    assert AddressPolicy().allows("example.com", ip)


@pytest.mark.parametrize(
    ("host", "ip"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("127.1", "127.0.0.1"),  # the legacy forms inet_aton reads, as every resolver does
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("10", "0.0.0.10"),
        ("127.0.0.1.", "127.0.0.1"),
        ("example.com", None),
        ("localhost", None),
        ("1e100.net", None),
        ("deadbeef", None),
        ("123.example", None),
        ("", None),
    ],
)
def test_literal_addresses_in_every_form(host: str, ip: str | None) -> None:
    got = literal_address(host)
    assert got == (ipaddress.ip_address(ip) if ip else None)


def test_the_allow_list_names_hosts_addresses_and_networks() -> None:
    policy = AddressPolicy.parse(" 127.0.0.2, 10.1.0.0/16,Intranet.Example., [::1], fd00::/8 ,, ")
    assert policy.hosts == frozenset({"intranet.example"})
    assert [str(n) for n in policy.networks] == [
        "127.0.0.2/32",
        "10.1.0.0/16",
        "::1/128",
        "fd00::/8",
    ]
    assert policy.allows("x.test", "127.0.0.2")
    assert policy.allows("x.test", "::ffff:127.0.0.2")  # the mapped form of a listed address
    assert not policy.allows("x.test", "127.0.0.3")
    assert policy.allows("x.test", "10.1.200.3") and not policy.allows("x.test", "10.2.0.1")
    assert policy.allows("x.test", "::1") and policy.allows("x.test", "fd12::1")
    assert not policy.allows("x.test", "fc00::1")
    # a listed name may resolve to any address; its subdomains are not listed
    assert policy.allows("intranet.example", "192.168.7.7")
    assert policy.allows("INTRANET.example.", "192.168.7.7")
    assert not policy.allows("www.intranet.example", "192.168.7.7")
    assert policy.allows("anything", "8.8.8.8")  # public stays allowed


def test_an_empty_allow_list_refuses_every_private_address() -> None:
    for spec in ("", None, [], " , "):
        policy = AddressPolicy.parse(spec)
        assert policy == AddressPolicy()
        assert not policy.allows("localhost", "127.0.0.1")


def test_a_list_of_entries_as_scrapy_getlist_gives_it() -> None:
    policy = AddressPolicy.parse(["127.0.0.0/30", "localhost"])
    assert policy.allows("h", "127.0.0.3") and not policy.allows("h", "127.0.0.4")
    assert policy.allows("localhost", "127.0.0.1")


def test_allowing_everything_takes_explicit_networks() -> None:
    policy = AddressPolicy.parse("0.0.0.0/0,::/0")
    assert all(policy.allows("h", ip) for ip, _ in REFUSED)


@pytest.mark.parametrize("entry", ["*.internal", "127.0.0.1:8080", "10.0.0.0/33", "a b", "-x"])
def test_bad_entries_are_an_error_that_names_them(entry: str) -> None:
    with pytest.raises(ValueError, match="FOCUSCRAWL_ALLOW_PRIVATE") as err:
        AddressPolicy.parse(f"127.0.0.2,{entry}")
    assert repr(entry) in str(err.value)


def test_host_names_compare_in_ascii() -> None:
    assert normalize_host("Bücher.Example.") == "xn--bcher-kva.example"
    policy = AddressPolicy.parse("bücher.example")
    assert policy.allows("xn--bcher-kva.example", "10.0.0.1")
    assert policy.allows("BÜCHER.example", "10.0.0.1")


def test_the_setting_for_a_test_web() -> None:
    hosts = ["127.0.0.2", "127.0.0.3", "127.0.0.2", "[::1]"]
    assert allow_private_value(hosts) == "127.0.0.2,127.0.0.3,::1"
    assert allow_private_args(hosts) == ["-s", "FOCUSCRAWL_ALLOW_PRIVATE=127.0.0.2,127.0.0.3,::1"]
    assert AddressPolicy.parse(allow_private_value(hosts)).allows("h", "::1")
