"""The local test web server: serves any :class:`~focuseval.site.Site` on loopback.

Each host of the site is its own loopback address (``127.0.0.2``, ``127.0.0.3``, …) and all of
them listen on ONE port, chosen once (port 0 → a port free on every address). The host a request
is for is the local address the connection came in on, so ``Host`` headers cannot confuse it.

Serving is cheap: a site hands back pre-rendered bytes; the server only compares validators and
writes. Conditional GETs (``If-None-Match`` / ``If-Modified-Since``) get ``304`` without a body;
``/robots.txt`` comes from ``site.robots(host)``; unknown paths get ``404``.

Sites need their port to write absolute cross-host links, so the order is: bind the sockets
(:func:`bind_sockets`), build the site for that port, then :func:`serve` it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from aiohttp import web

from focuseval.site import Resource, Site

logger = logging.getLogger(__name__)

NOT_FOUND = b"<!doctype html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>"


def bind_sockets(
    hosts: list[str], port: int = 0, attempts: int = 20
) -> tuple[int, list[socket.socket]]:
    """Listening sockets for every host on one port; port 0 picks one that is free on all."""
    last_error: OSError | None = None
    for _ in range(attempts if port == 0 else 1):
        socks: list[socket.socket] = []
        chosen = port
        try:
            for host in hosts:
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                s = socket.socket(family, socket.SOCK_STREAM)
                socks.append(s)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, chosen))
                chosen = s.getsockname()[1]
                s.listen(1024)
                s.setblocking(False)
            return chosen, socks
        except OSError as exc:  # the port is taken on a later address: try another one
            last_error = exc
            for s in socks:
                s.close()
    raise OSError(f"could not bind {len(hosts)} hosts on port {port}: {last_error}")


def _not_modified(request: web.BaseRequest, res: Resource) -> bool:
    inm = request.headers.get("If-None-Match")
    if inm is not None:
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in tags or res.etag in tags
    ims = request.headers.get("If-Modified-Since")
    if ims is not None:
        try:
            since = parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError):
            return False
        return int(res.last_modified) <= int(since)
    return False


def make_handler(site: Site, latency: float = 0.0) -> Callable[[web.BaseRequest], object]:
    """The request handler: robots, conditional GET, 404, HEAD; ``latency``: seconds every
    response waits before it is sent (a distant server; the wait blocks no other request)."""

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if latency > 0:
            await asyncio.sleep(latency)
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        host = sockname[0] if sockname else (request.host.split(":")[0])
        path = request.raw_path  # undecoded path and query: sites decode what they need
        if request.method not in ("GET", "HEAD"):
            return web.Response(status=405)
        if request.path == "/robots.txt":
            return web.Response(body=site.robots(host).encode(), content_type="text/plain")
        res = site.get(host, path)
        if res is None:
            return web.Response(status=404, body=NOT_FOUND, content_type="text/html")
        headers = {
            "Content-Type": res.content_type,
            "ETag": res.etag,
            "Last-Modified": res.last_modified_http,
            **res.headers,
        }
        if res.status == 200 and _not_modified(request, res):
            headers.pop("Content-Type")
            return web.Response(status=304, headers=headers)
        if res.behaviour and request.method == "GET":
            return await _misbehave(request, res.behaviour, headers)
        body = b"" if request.method == "HEAD" else res.body
        return web.Response(status=res.status, body=body, headers=headers)

    return handle


#: the hostile web's endless body stops by itself after this many bytes, its drip after this
#: many seconds: a crawler that does not hang up still sees a server that ends
ENDLESS_CAP = 2 * 1024**3
DRIP_SECONDS = 300.0
DRIP_EVERY = 0.25


async def _misbehave(
    request: web.BaseRequest, behaviour: str, headers: dict[str, str]
) -> web.StreamResponse:
    """A body with no end (``endless``) or one byte every ``DRIP_EVERY`` s (``drip``)."""
    headers = {k: v for k, v in headers.items() if k not in ("ETag", "Last-Modified")}
    response = web.StreamResponse(status=200, headers=headers)
    response.enable_chunked_encoding()
    await response.prepare(request)
    try:
        await response.write(b"<!doctype html><html><body><p>")
        if behaviour == "endless":
            chunk = b"birds " * 10923  # 64 KB
            for _ in range(ENDLESS_CAP // len(chunk)):
                await response.write(chunk)
        elif behaviour == "drip":
            loop = asyncio.get_running_loop()
            end = loop.time() + DRIP_SECONDS
            while loop.time() < end:
                await response.write(b"b")
                await asyncio.sleep(DRIP_EVERY)
        await response.write_eof()
    except (ConnectionError, RuntimeError):  # the crawler hung up: what it should do
        pass
    return response


async def serve(site: Site, socks: list[socket.socket], latency: float = 0.0) -> web.BaseRunner:
    """Start serving ``site`` on the bound sockets; returns the runner (``await runner.cleanup()``)."""
    server = web.Server(make_handler(site, latency), access_log=None)  # type: ignore[arg-type]
    runner = web.ServerRunner(server, handle_signals=False, access_log=None)
    await runner.setup()
    for s in socks:
        await web.SockSite(runner, s).start()
    return runner


async def serve_forever(
    site: Site, socks: list[socket.socket], on_ready: Callable[[], None], latency: float = 0.0
) -> None:
    runner = await serve(site, socks, latency)
    on_ready()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
