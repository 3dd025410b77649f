"""The browser's only way out: a small HTTP proxy that applies the crawler's address policy.

A page rendered in a browser fetches what its scripts ask for: subresources, ``fetch()`` calls,
redirects of either, frames. Chromium resolves names and follows redirects itself, where the
crawler's address guard (:mod:`focuscrawl.middlewares.addresses`) cannot see, and a page
route sees only a redirect's first hop. So chromium is launched with this proxy as its proxy
server (Playwright also sends loopback through it): every connection the browser opens, each
redirect hop included, is a request here. The proxy resolves the name itself, withholds every
address :class:`~focuscrawl.netguard.AddressPolicy` refuses (as the crawler's resolver does),
and connects only to what is left; a host left with none gets ``403`` and is counted.

It listens on 127.0.0.1 on a free port, without credentials: it reaches nothing a program on
the same machine could not reach directly (a proxy challenge cost each render about 90 ms, as
Playwright answers it for every new connection). Plain ``http://`` requests are forwarded one per connection (``Connection: close``);
``https://`` goes through ``CONNECT`` as an opaque tunnel (the browser checks certificates).
A connection is cut once it brought in ``max_bytes`` (the crawl's ``DOWNLOAD_MAXSIZE``).

Pure asyncio and :mod:`focuscrawl.netguard`: no Scrapy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from focuscrawl.netguard import AddressPolicy, literal_address, normalize_host

logger = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024  # bytes of a request line and headers
IDLE_TIMEOUT = 60.0  # seconds a tunnel may stay silent
CONNECT_TIMEOUT = 30.0
CHUNK = 64 * 1024
MAX_REMEMBERED = 4096
REFUSED_HEADER = "X-Focuscrawl-Refused"
_HOP_HEADERS = frozenset(
    {"proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "upgrade"}
)

Refused = Callable[[str, str, str], None]  # (host, address, why)


class Refusal(Exception):
    """The proxy will not connect to ``host``: ``why`` says what the address is."""

    def __init__(self, host: str, address: str, why: str) -> None:
        super().__init__(f"{host} ({address}): {why}")
        self.host, self.address, self.why = host, address, why


@dataclass
class GuardProxy:
    """``await start()`` → the port; :meth:`launch_option` for the browser."""

    policy: AddressPolicy
    on_refused: Refused | None = None
    listen: str = "127.0.0.1"
    port: int = 0
    max_bytes: int = 0  # bytes one connection may bring in (0: no cap); then it is cut
    connected: dict[str, str] = field(default_factory=dict)  # host -> last address used
    _server: asyncio.base_events.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def server(self) -> str:
        return f"http://{self.listen}:{self.port}"

    def launch_option(self) -> dict[str, str]:
        """Playwright's ``proxy`` launch option for this proxy."""
        return {"server": self.server}

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, self.listen, 0, limit=MAX_HEAD)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    # -- one client connection --------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except TimeoutError:
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = [
            tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:] if ":" in line
        ]
        if method.upper() == "CONNECT":
            host, port = _split_host_port(target, 443)
            path = ""
        else:
            parts = urlsplit(target)
            if parts.scheme != "http" or not parts.hostname:
                await _answer(writer, 400, "only http:// and CONNECT are proxied")
                return
            host, port = parts.hostname, parts.port or 80
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            upstream_reader, upstream_writer = await self._connect(host, port)
        except Refusal as refusal:
            await _answer(writer, 403, f"address refused: {refusal}", refusal.why)
            return
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"cannot connect: {type(exc).__name__}")
            return
        try:
            if path:
                upstream_writer.write(_forwarded_head(method, path, headers))
            else:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await _relay(reader, writer, upstream_reader, upstream_writer, self.max_bytes)
        finally:
            upstream_writer.close()

    async def _connect(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        for address in await self._allowed_addresses(host, port):
            try:
                streams = await asyncio.wait_for(
                    asyncio.open_connection(address, port, limit=CHUNK), CONNECT_TIMEOUT
                )
            except (OSError, TimeoutError):
                continue
            if len(self.connected) >= MAX_REMEMBERED:
                self.connected.clear()
            self.connected[normalize_host(host)] = address
            return streams
        raise OSError(f"no address of {host} answered")

    async def _allowed_addresses(self, host: str, port: int) -> list[str]:
        """The addresses of ``host`` the policy allows; :class:`Refusal` when none is."""
        literal = literal_address(host)
        if literal is not None:
            candidates = [str(literal)]
        else:
            loop = asyncio.get_running_loop()
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            candidates = list(dict.fromkeys(str(info[4][0]) for info in infos))
        allowed: list[str] = []
        refused: tuple[str, str] | None = None
        for address in candidates:
            why = self.policy.refuses(host, address)
            if why is None:
                allowed.append(address)
            elif refused is None:
                refused = (address, why)
        if not allowed:
            address, why = refused or ("", "no address")
            if self.on_refused is not None:
                self.on_refused(host, address, why)
            raise Refusal(host, address, why)
        return allowed


def _split_host_port(target: str, default: int) -> tuple[str, int]:
    parts = urlsplit(f"//{target}")
    if not parts.hostname:
        raise ValueError(f"bad CONNECT target {target[:80]!r}")
    return parts.hostname, parts.port or default


def _forwarded_head(method: str, path: str, headers: list[tuple[str, ...]]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [
        f"{h[0]}: {h[1]}" for h in headers if len(h) == 2 and h[0].lower() not in _HOP_HEADERS
    ]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _answer(writer: asyncio.StreamWriter, status: int, text: str, refused: str = "") -> None:
    body = f"focuscrawl render proxy: {text}\n".encode()
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    extra = f"{REFUSED_HEADER}: {refused}\r\n" if refused else ""
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
        + body
    )
    await writer.drain()


async def _relay(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
    max_bytes: int = 0,
) -> None:
    """Copy bytes both ways until either side ends, stays silent past the idle timeout, or
    the way in passes ``max_bytes``."""

    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, cap: int) -> None:
        total = 0
        while True:
            data = await asyncio.wait_for(source.read(CHUNK), IDLE_TIMEOUT)
            if not data:
                return
            if cap and total + len(data) > cap:
                sink.write(data[: cap - total])  # up to the cap, then the connection ends
                await sink.drain()
                return
            total += len(data)
            sink.write(data)
            await sink.drain()

    tasks = [
        asyncio.ensure_future(pipe(client_reader, upstream_writer, 0)),
        asyncio.ensure_future(pipe(upstream_reader, client_writer, max_bytes)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
