"""The render guard proxy on loopback: real sockets, a real aiohttp server on two addresses;
and the render policy (hosts, budget)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from focuscrawl.netguard import AddressPolicy
from focuscrawl.render.browser import abort_request, launch_options
from focuscrawl.render.policy import RenderPolicy
from focuscrawl.render.proxy import REFUSED_HEADER, GuardProxy

ALLOWED, INTERNAL = "127.0.0.2", "127.0.0.9"


async def _with_web(
    test: Callable[[GuardProxy, int, list[str]], Awaitable[None]], max_bytes: int = 0
) -> None:
    hits: list[str] = []

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        host = request.transport.get_extra_info("sockname")[0] if request.transport else "?"
        hits.append(f"{host} {request.path_qs}")
        if request.path == "/big":
            return web.Response(body=b"birds " * 50_000)
        if request.path == "/to-internal":
            raise web.HTTPFound(f"http://{INTERNAL}:{request.url.port}/secret")
        return web.Response(text=f"hello from {host} {request.path_qs}")

    runner = web.ServerRunner(web.Server(handle))
    await runner.setup()
    first = web.TCPSite(runner, ALLOWED, 0)
    await first.start()
    port = first._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    await web.TCPSite(runner, INTERNAL, port).start()
    refused: list[tuple[str, str, str]] = []
    policy = AddressPolicy.parse(ALLOWED)
    proxy = GuardProxy(policy, on_refused=lambda *a: refused.append(a), max_bytes=max_bytes)
    await proxy.start()
    try:
        await test(proxy, port, hits)
    finally:
        await proxy.close()
        await runner.cleanup()


async def _ask(proxy: GuardProxy, head: str) -> bytes:
    reader, writer = await asyncio.open_connection(proxy.listen, proxy.port)
    writer.write(head.encode())
    await writer.drain()
    data = await reader.read()  # the proxy closes after one exchange
    writer.close()
    return data


def test_forwards_to_an_allowed_host_and_refuses_others() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        ok = await _ask(proxy, f"GET http://{ALLOWED}:{port}/a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200")
        assert ok.endswith(f"hello from {ALLOWED} /a?b=1".encode())
        bad = await _ask(proxy, f"GET http://{INTERNAL}:{port}/s HTTP/1.1\r\nHost: x\r\n\r\n")
        assert bad.startswith(b"HTTP/1.1 403")
        assert f"{REFUSED_HEADER}: loopback".encode() in bad
        tunnel = await _ask(proxy, f"CONNECT {INTERNAL}:{port} HTTP/1.1\r\nHost: x\r\n\r\n")
        assert tunnel.startswith(b"HTTP/1.1 403")
        named = await _ask(proxy, f"GET http://localhost:{port}/s HTTP/1.1\r\nHost: x\r\n\r\n")
        assert named.startswith(b"HTTP/1.1 403")  # resolved by the proxy, then refused
        assert hits == [f"{ALLOWED} /a?b=1"]

    asyncio.run(_with_web(check))


def test_a_redirect_to_a_refused_address_is_a_new_refused_request() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        hop = await _ask(
            proxy, f"GET http://{ALLOWED}:{port}/to-internal HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        assert hop.startswith(b"HTTP/1.1 302")  # the browser asks the proxy for the next hop
        bad = await _ask(proxy, f"GET http://{INTERNAL}:{port}/secret HTTP/1.1\r\n\r\n")
        assert bad.startswith(b"HTTP/1.1 403")
        assert all(not h.startswith(INTERNAL) for h in hits)

    asyncio.run(_with_web(check))


def test_a_tunnel_to_an_allowed_host_carries_bytes_both_ways() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        reader, writer = await asyncio.open_connection(proxy.listen, proxy.port)
        writer.write(
            f"CONNECT {ALLOWED}:{port} HTTP/1.1\r\n\r\n"
            f"GET /through HTTP/1.1\r\nHost: {ALLOWED}\r\nConnection: close\r\n\r\n".encode()
        )
        data = await reader.read()
        writer.close()
        assert data.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200")
        assert hits == [f"{ALLOWED} /through"]

    asyncio.run(_with_web(check))


def test_the_browser_is_given_the_proxy_address() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        assert proxy.launch_option() == {"server": f"http://127.0.0.1:{proxy.port}"}

    asyncio.run(_with_web(check))


def test_a_connection_is_cut_past_max_bytes() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        data = await _ask(proxy, f"GET http://{ALLOWED}:{port}/big HTTP/1.1\r\nHost: x\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 200")
        assert len(data) <= 10_000

    asyncio.run(_with_web(check, max_bytes=10_000))


def test_other_schemes_are_not_proxied() -> None:
    async def check(proxy: GuardProxy, port: int, hits: list[str]) -> None:
        answer = await _ask(proxy, "GET ftp://127.0.0.2/x HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400")

    asyncio.run(_with_web(check))


# --- what the page may load, how the browser starts ---------------------------------------
class _PageRequest:  # what PLAYWRIGHT_ABORT_REQUEST is given: a url and a resource type
    def __init__(self, url: str, resource_type: str = "document") -> None:
        self.url, self.resource_type = url, resource_type


@pytest.mark.parametrize(
    ("url", "kind", "aborted"),
    [
        ("http://a.example/", "document", False),
        ("https://a.example/app.js", "script", False),
        ("https://a.example/x.png", "image", True),
        ("https://a.example/f.woff2", "font", True),
        ("file:///etc/passwd", "document", True),
        ("ftp://a.example/x", "fetch", True),
        ("data:text/plain,birds", "fetch", False),
    ],
)
def test_abort_request(url: str, kind: str, aborted: bool) -> None:
    assert abort_request(_PageRequest(url, kind)) is aborted


def test_launch_options_use_the_given_chromium_and_keep_the_sandbox_unless_root() -> None:
    options = launch_options("/usr/bin/chromium", as_root=False)
    assert options["executable_path"] == "/usr/bin/chromium"
    assert options["headless"] is True
    assert "--no-sandbox" not in options["args"]
    assert "--no-sandbox" in launch_options("/usr/bin/chromium", as_root=True)["args"]


# --- the render policy ---------------------------------------------------------------------
def test_render_hosts_include_subdomains_and_empty_means_all() -> None:
    policy = RenderPolicy.parse("example.org, 127.0.0.2")
    assert policy.host_allowed("example.org")
    assert policy.host_allowed("www.Example.org.")
    assert policy.host_allowed("127.0.0.2")
    assert not policy.host_allowed("badexample.org")
    assert not policy.host_allowed("127.0.0.3")
    assert RenderPolicy.parse("").host_allowed("anything.example")


def test_budget_per_host_and_the_hosts_cap() -> None:
    policy = RenderPolicy.parse("", budget=2)
    assert [policy.admit("a.example") for _ in range(3)] == [None, None, "budget"]
    assert policy.admit("b.example") is None
    assert RenderPolicy.parse("a.example").admit("b.example") == "host"
    capped = RenderPolicy(max_hosts=1)
    assert capped.admit("a.example") is None
    assert capped.admit("b.example") == "hosts_cap"
    assert capped.admit("a.example") is None  # a host already counted goes on
