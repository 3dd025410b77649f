"""A small hostile web server for the address-guard and download-limit tests.

Stdlib HTTP/1.1 servers on several loopback addresses (127.0.0.x, ::1) sharing one port, each in
its own thread. Every request is recorded per address, so a test can show that an address the
crawler must not reach received nothing. Routes are functions of the request handler; the
hostile ones (an endless body, a slow drip) end when the client hangs up, and set an event then.
"""

from __future__ import annotations

import socket
import threading
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler, "LoopbackWeb"], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(
        self, address: str, port: int, handler: type[BaseHTTPRequestHandler], keep_alive: bool
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self.keep_alive = keep_alive
        super().__init__((address, port), handler)


class LoopbackWeb:
    __test__ = False

    def __init__(
        self, addresses: list[str], routes: dict[str, Route], keep_alive: bool = True
    ) -> None:
        self.addresses = addresses
        self.routes = routes
        self.keep_alive = keep_alive  # False: one request per connection (a lookup each)
        self.port = 0
        self.hits: dict[str, list[str]] = defaultdict(list)
        self.hung_up: dict[str, threading.Event] = defaultdict(threading.Event)
        self.stop = threading.Event()
        self._servers: list[_Server] = []
        self._lock = threading.Lock()

    def url(self, address: str, path: str = "/") -> str:
        host = f"[{address}]" if ":" in address else address
        return f"http://{host}:{self.port}{path}"

    def start(self) -> LoopbackWeb:
        for _attempt in range(20):  # the first address picks the port; another may hold it
            try:
                self._bind()
                break
            except OSError:
                self._close_servers()
        else:
            raise RuntimeError("no common free port for " + ", ".join(self.addresses))
        for server in self._servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        self.stop.set()
        for server in self._servers:
            server.shutdown()
        self._close_servers()

    def record(self, address: str, path: str) -> None:
        with self._lock:
            self.hits[address].append(path)

    def _bind(self) -> None:
        port = 0
        for address in self.addresses:
            server = _Server(address, port, _handler(self, address), self.keep_alive)
            self._servers.append(server)
            port = server.server_address[1]
        self.port = port

    def _close_servers(self) -> None:
        for server in self._servers:
            server.server_close()
        self._servers = []


def _handler(web: LoopbackWeb, address: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            web.record(address, self.path)
            route = web.routes.get(self.path.split("?", 1)[0])
            if route is None:
                send(self, 404, b"not here")
            else:
                route(self, web)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def loopback_web(
    addresses: list[str], routes: dict[str, Route], keep_alive: bool = True
) -> Iterator[LoopbackWeb]:
    web = LoopbackWeb(addresses, routes, keep_alive).start()
    try:
        yield web
    finally:
        web.close()


# --- routes --------------------------------------------------------------------------------
def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    for name, value in {"Content-Type": "text/html; charset=utf-8", **(headers or {})}.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    if not getattr(handler.server, "keep_alive", True):
        handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(body)


def page(title: str, links: Sequence[str] = (), words: str = "birds") -> Route:
    anchors = "".join(f'<li><a href="{u}">{words} link {i}</a></li>' for i, u in enumerate(links))
    text = f"<p>{words} " * 40
    body = f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{text}<ul>{anchors}</ul></body></html>"
    return lambda handler, web: send(handler, 200, body.encode())


def redirect(location: str) -> Route:
    return lambda handler, web: send(handler, 302, b"", {"Location": location})


def robots(handler: BaseHTTPRequestHandler, web: LoopbackWeb) -> None:
    send(handler, 200, b"User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})


def gzip_bomb(size: int) -> Route:
    """A gzip body of ``size`` zero bytes (about ``size / 1000`` bytes on the wire)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(size >> 20)]
    body = b"".join(parts) + compressor.flush()
    return lambda handler, web: send(handler, 200, body, {"Content-Encoding": "gzip"})


def _chunks(
    handler: BaseHTTPRequestHandler, web: LoopbackWeb, name: str, data: bytes, pause: float
) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        with suppress(OSError):  # the client hung up: what the limits must make it do
            while not web.stop.is_set():
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                handler.wfile.flush()
                if pause:
                    web.stop.wait(pause)  # the drip's pace, not a test waiting for a server
    finally:
        handler.close_connection = True
        web.hung_up[name].set()


def endless(name: str = "endless") -> Route:
    """A chunked body of 64 KiB chunks that never ends."""
    data = b"<p>birds " + b"x" * (65536 - 9)
    return lambda handler, web: _chunks(handler, web, name, data, 0.0)


def drip(name: str = "drip", pause: float = 0.1) -> Route:
    """A chunked body of one byte every ``pause`` seconds that never ends."""
    return lambda handler, web: _chunks(handler, web, name, b"x", pause)
