"""The hostile test web: ordinary pages beside everything a stranger's server can send a crawler.

One loopback host (the first) serves a start page (``/``) that links to

- ``ORDINARY`` ordinary pages about birds (``/ok/<n>.html``): a crawl must fetch every one;
- the hostile pages of :mod:`focuseval.hostile_pages` (``/h/<name>.html``): bodies
  that make a parser do quadratic work, backtrack or blow up (CSS bombs, 100k attributes,
  deep nesting, 200k links, giant text);
- what a server can do on the wire (``/net/*``): a gzip bomb, a body with no end, a slow drip,
  a body over the download limit, redirect loops, redirects to addresses the crawler may not
  reach, binary bodies, wrong and unknown encodings;
- crawler traps (``/trap/*``): an endless calendar, ever new query strings, session ids in the
  path, ever deeper paths;
- links to addresses the crawler must never reach: the *internal* hosts (``127.0.0.99``, and
  ``127.0.0.1`` and ``[::1]`` by ``localhost``, ``0.0.0.0``, ``127.1``, ``2130706433`` and
  ``0x7f000001``), ``file:``, ``data:`` and ``javascript:`` URLs.

The internal hosts listen on the same port and count every request that reaches them (a
*canary*): ``GET /_canary`` on the first host answers ``{"hits": N, "paths": [...]}``. A crawl
that respects ``FOCUSCRAWL_ALLOW_PRIVATE`` (set to the served hosts only) leaves it at 0.

With ``mix`` (the soak), the other hosts serve the synthetic web, and one article in
``MIX_EVERY`` (50) carries a link to a fresh copy of a hostile page, so hostile pages keep coming all
through a long crawl.
"""

from __future__ import annotations

import gzip
import json
import random
import zlib
from collections.abc import Callable
from functools import cache
from html import escape

from focuseval.site import Resource

ORDINARY = 60
#: addresses that stand for the internal network: served only to count what reaches them
INTERNAL_HOSTS = ("127.0.0.99", "127.0.0.1", "::1")
MIX_EVERY = 50
#: the gzip bomb inflates to this many bytes (its compressed body is ~0.1 % of it)
BOMB_BYTES = 256 * 1024 * 1024
#: a body over the default DOWNLOAD_MAXSIZE (10 MB), with its length announced
BIG_BYTES = 12 * 1024 * 1024

_BIRDS = [
    "eagle",
    "hawk",
    "falcon",
    "owl",
    "heron",
    "stork",
    "crane",
    "swan",
    "goose",
    "duck",
    "sparrow",
    "finch",
    "thrush",
    "wren",
    "robin",
    "warbler",
    "swallow",
    "swift",
    "kingfisher",
    "woodpecker",
    "cuckoo",
    "pigeon",
    "dove",
    "parrot",
    "penguin",
    "albatross",
]

#: each ordinary page's own field notes: words drawn per page, so that pages ``n`` and
#: ``n + len(_BIRDS)`` (the same bird) are distinct pages, not near-duplicates (FOCUSCRAWL_DEDUP)
_NOTES = [
    "marsh",
    "meadow",
    "cliff",
    "estuary",
    "reedbed",
    "heath",
    "moor",
    "dune",
    "orchard",
    "hedgerow",
    "lagoon",
    "ridge",
    "valley",
    "river",
    "lake",
    "pond",
    "forest",
    "copse",
    "quarry",
    "harbour",
    "island",
    "headland",
    "saltmarsh",
    "pasture",
    "vineyard",
    "morning",
    "evening",
    "dawn",
    "dusk",
    "noon",
    "rain",
    "mist",
    "frost",
    "wind",
    "sunshine",
    "drizzle",
    "gale",
    "calm",
    "thaw",
    "pair",
    "flock",
    "juvenile",
    "adult",
    "male",
    "female",
    "fledgling",
    "chick",
    "brood",
    "colony",
    "roost",
    "perch",
    "feeding",
    "preening",
    "calling",
    "diving",
    "soaring",
    "nesting",
    "singing",
    "resting",
    "hunting",
    "circling",
]
NOTE_WORDS = 40

ROBOTS = "User-agent: *\nDisallow: /private/\n"


def _page(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
        f"<body><main><article><h1>{escape(title)}</h1>{body}</article></main></body></html>"
    ).encode()


def _field_notes(n: int) -> str:
    rng = random.Random(n)  # the same words for page n on every run
    return " ".join(rng.choice(_NOTES) for _ in range(NOTE_WORDS))


def ordinary_page(n: int, count: int = ORDINARY) -> bytes:
    """An ordinary article about one bird, linking to its two neighbours in the ring; the ring
    repeats its birds every ``len(_BIRDS)`` pages, the field notes make each page its own."""
    bird = _BIRDS[n % len(_BIRDS)]
    words = " ".join(_BIRDS[(n + i) % len(_BIRDS)] for i in range(12))
    text = (
        f"<p>The {bird} is one of the birds this page describes: its flight, its nest and its "
        f"song. Birds such as the {words} are watched by ornithologists every spring.</p>"
        f"<p>Bird watchers count {bird} pairs along the coast; numbers of birds vary by season.</p>"
        f"<p>Field notes {n}: {_field_notes(n)}.</p>"
    )
    links = "".join(
        f'<li><a href="/ok/{m % count}.html">Birds: the {_BIRDS[m % len(_BIRDS)]} ({m % count})</a></li>'
        for m in (n + 1, n + 2)
    )
    return _page(f"Birds: the {bird} ({n})", f"{text}<ul>{links}</ul>")


def _hostile_generators() -> dict[str, Callable[[], str | bytes]]:
    from focuseval.hostile_pages import HOSTILE_PAGES

    return dict(HOSTILE_PAGES)


@cache
def hostile_body(name: str) -> bytes | None:
    """The body of hostile page ``name``, made once (some take a second to build)."""
    make = _hostile_generators().get(name)
    if make is None:
        return None
    body = make()
    return body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body


@cache
def gzip_bomb() -> bytes:
    """A gzip body of ~250 KB that inflates to ``BOMB_BYTES`` of HTML."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    head = b"<!doctype html><html><head><title>bomb</title></head><body><p>"
    chunk = b" " * (1 << 20)
    parts = [comp.compress(head)]
    parts += [comp.compress(chunk) for _ in range(BOMB_BYTES // len(chunk))]
    parts.append(comp.flush())
    return b"".join(parts)


def net_resource(web: HostileWeb, path: str) -> Resource | None:
    """What a server can do on the wire."""
    internal = f"http://127.0.0.99:{web.port}/secret"
    redirects = {
        "/net/loop/a": "/net/loop/b",
        "/net/loop/b": "/net/loop/a",
        "/net/loop/self": "/net/loop/self",
        "/net/to-internal": internal,
        "/net/to-localhost": f"http://localhost:{web.port}/secret",
        "/net/to-ipv6-loopback": f"http://[::1]:{web.port}/secret",
        "/net/to-file": "file:///etc/passwd",
        "/net/to-internal-via": "/net/to-internal",
    }
    if path in redirects:
        return Resource(b"", status=302, headers={"Location": redirects[path]})
    if path == "/net/gzip-bomb.html":
        return Resource(gzip_bomb(), headers={"Content-Encoding": "gzip"})
    if path == "/net/double-gzip.html":  # a bomb inside a bomb: decoded twice it is huge
        return Resource(gzip.compress(gzip_bomb(), 1), headers={"Content-Encoding": "gzip, gzip"})
    if path == "/net/endless.html":
        return Resource(b"", behaviour="endless")
    if path == "/net/drip.html":
        return Resource(b"", behaviour="drip")
    if path == "/net/big.html":
        return Resource(_big_body())
    if path == "/net/binary.html":  # binary served as HTML
        return Resource(bytes((i * 131 + 7) % 256 for i in range(64 * 1024)))
    if path == "/net/bad-utf8.html":
        # declared UTF-8 (meta), bytes that are not
        return Resource(_page("Bad bytes", "<p>birds</p>") + b"\xff\xfe\xfd\x80<p>more birds</p>")
    if path == "/net/unknown-charset.html":
        return Resource(
            _page("Unknown charset", "<p>birds</p>"), "text/html; charset=x-no-such-charset"
        )
    if path == "/net/utf16-as-utf8.html":
        return Resource(_page("UTF-16 body", "<p>birds</p>").decode().encode("utf-16-le"))
    if path == "/net/nul.html":
        return Resource(_page("NUL bytes", "<p>birds\x00\x00 and owls</p>"))
    if path == "/net/empty.html":
        return Resource(b"")
    return None


@cache
def _big_body() -> bytes:
    para = b"<p>" + b"birds and more birds " * 50 + b"</p>\n"
    return b"<!doctype html><html><body>" + para * (BIG_BYTES // len(para) + 1) + b"</body></html>"


def trap_resource(path: str) -> Resource | None:
    """Crawler traps: every page links to new URLs of the same kind, without end."""
    base, _, query = path.partition("?")
    if base == "/trap/calendar":
        try:
            year, month = (int(x) for x in query.removeprefix("m=").split("-"))
        except ValueError:
            return None
        nxt = f"{year + month // 12}-{month % 12 + 1:02d}"
        body = f'<p>No events.</p><a href="/trap/calendar?m={nxt}">Next month</a>'
        return Resource(_page(f"Calendar {year}-{month:02d}", body))
    if base == "/trap/search":
        try:
            n = int(query.removeprefix("q="))
        except ValueError:
            return None
        links = "".join(f'<a href="/trap/search?q={n * 7 + k}">result {k}</a> ' for k in range(5))
        return Resource(_page(f"Search {n}", f"<p>Results about birds.</p>{links}"))
    if base.startswith("/trap/session;jsessionid="):
        sid = base.rsplit("=", 1)[1]
        nxt = format(zlib.crc32(sid.encode()), "x")
        body = f'<a href="/trap/session;jsessionid={nxt}">continue</a>'
        return Resource(_page("Session", body))
    if base.startswith("/trap/deep/"):
        return Resource(_page("Deeper", '<a href="more/">deeper</a> <a href="a/b/">other</a>'))
    return None


class HostileWeb:
    """The hostile web as a :class:`~focuseval.site.Site` (see the module doc)."""

    def __init__(
        self,
        hosts: list[str],
        port: int,
        internal: list[str] | None = None,
        ordinary: int = ORDINARY,
        mix: bool = False,
        seed: int = 7,
        pages: int = 0,
    ) -> None:
        self.hosts = list(hosts)
        self.port = port
        self.host = self.hosts[0]
        self.internal = list(INTERNAL_HOSTS if internal is None else internal)
        self.ordinary = ordinary
        self.canary: list[str] = []
        self.synthetic = None
        if mix and len(self.hosts) > 1:
            from focuseval.synthetic import SyntheticWeb

            size = {"n_pages": pages} if pages else {}
            self.synthetic = SyntheticWeb(self.hosts[1:], port, seed=seed, **size)
        start = f"http://{self.host}:{port}/"
        self.seeds: dict[str, list[str]] = {"birds": [start]}
        if self.synthetic is not None:
            self.seeds["birds"] += self.synthetic.seeds["birds"]

    # --- labels ----------------------------------------------------------------------
    def ordinary_urls(self) -> list[str]:
        return [f"http://{self.host}:{self.port}/ok/{n}.html" for n in range(self.ordinary)]

    def hostile_names(self) -> list[str]:
        return sorted(_hostile_generators())

    # --- the Site protocol -------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        if host in self.internal:
            self.canary.append(f"{host} {path}")
            return Resource(b"canary", "text/plain")
        if host != self.host:
            return self._mixed(host, path)
        if path == "/":
            return Resource(self._start_page())
        if path == "/_canary":
            body = json.dumps({"hits": len(self.canary), "paths": self.canary[-50:]})
            return Resource(body.encode(), "application/json")
        if path.startswith("/ok/") and path.endswith(".html"):
            n = path[4:-5]
            if n.isdigit() and int(n) < self.ordinary:
                return Resource(ordinary_page(int(n), self.ordinary))
            return None
        if path.startswith("/h/"):  # /h/<name>.html, or /h/<name>/<anything> in the mix
            name = path[3:].split("/", 1)[0].removesuffix(".html")
            body = hostile_body(name)
            return None if body is None else Resource(body)
        if path.startswith("/net/"):
            return net_resource(self, path)
        if path.startswith("/trap/"):
            return trap_resource(path)
        return None

    def robots(self, host: str) -> str:
        return ROBOTS

    # --- pages -------------------------------------------------------------------------
    def _start_page(self) -> bytes:
        p = self.port
        hrefs = [f"/ok/{n}.html" for n in range(self.ordinary)]
        hrefs += [f"/h/{name}.html" for name in self.hostile_names()]
        hrefs += [
            "/net/gzip-bomb.html", "/net/double-gzip.html", "/net/endless.html",
            "/net/drip.html", "/net/big.html", "/net/binary.html", "/net/bad-utf8.html",
            "/net/unknown-charset.html", "/net/utf16-as-utf8.html", "/net/nul.html",
            "/net/empty.html", "/net/loop/a", "/net/loop/self", "/net/to-internal",
            "/net/to-internal-via", "/net/to-localhost", "/net/to-ipv6-loopback", "/net/to-file",
            "/trap/calendar?m=2024-01", "/trap/search?q=1", "/trap/session;jsessionid=a1",
            "/trap/deep/", "/private/secret.html",
            f"http://127.0.0.99:{p}/internal", f"http://localhost:{p}/internal",
            f"http://0.0.0.0:{p}/internal", f"http://127.1:{p}/internal",
            f"http://2130706433:{p}/internal", f"http://0x7f000001:{p}/internal",
            f"http://[::1]:{p}/internal", f"http://[::ffff:127.0.0.1]:{p}/internal",
            "file:///etc/passwd", "data:text/html,<p>birds</p>", "javascript:alert(1)",
        ]  # fmt: skip
        items = "".join(
            f'<li><a href="{escape(h)}">Birds link {i}</a></li>' for i, h in enumerate(hrefs)
        )
        return _page("Birds of the hostile web", f"<p>Birds, everywhere.</p><ul>{items}</ul>")

    def _mixed(self, host: str, path: str) -> Resource | None:
        """The synthetic web, one article in ``MIX_EVERY`` with a link to a hostile page."""
        if self.synthetic is None:
            return None
        res = self.synthetic.get(host, path)
        if res is None or res.status != 200 or not path.startswith("/articles/"):
            return res
        slot = zlib.crc32(path.encode())
        if slot % MIX_EVERY:
            return res
        names = self.hostile_names()
        name = names[(slot // MIX_EVERY) % len(names)]
        slug = path.rsplit("/", 1)[1]
        link = f'<a href="http://{self.host}:{self.port}/h/{name}/{slug}">more about birds</a>'
        return Resource(res.body.replace(b"</article>", link.encode() + b"</article>", 1))
