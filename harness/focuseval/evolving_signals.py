"""The evolving web with signals: each host keeps its sitemap or feed exact, stale, lying, or has
none, and some pages are reachable only through a sitemap (issue 31).

Host ``i`` is of kind :data:`SIGNAL_KINDS` ``[i % 5]``:

- ``exact``: ``/robots.txt`` names ``/sitemap.xml``; each page's ``lastmod`` is the wall-clock
  time its content last changed (the time of the ``/_evolve/<cycle>`` that changed it);
- ``stale``: the same sitemap, its ``lastmod`` frozen at the first serving;
- ``lying``: the same sitemap, every ``lastmod`` = now;
- ``feed``: no sitemap; every page links ``/feed.xml`` (Atom), which lists the host's pages
  with their change times, latest first;
- ``none``: no sitemap, no feed.

Every host with a sitemap or feed also lists ``hidden`` pages (``/hidden/<k>.html``, article
bodies that no link reaches): :attr:`SignalWeb.sitemap_only` are their URLs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from focuseval.evolving import EvolvingWeb, synthetic_evolving
from focuseval.site import HTML, Resource

SIGNAL_KINDS = ("exact", "stale", "lying", "feed", "none")
_FEED_LINK = b'<link rel="alternate" type="application/atom+xml" title="Changes" href="/feed.xml">'


def _w3c(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class SignalWeb:
    """An :class:`EvolvingWeb` whose hosts publish signals of the kind :meth:`kind` says."""

    web: EvolvingWeb
    port: int
    hidden: int = 5  # sitemap-only pages per host with signals
    started: float = field(default_factory=time.time)
    changed_at: dict[tuple[str, str], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hosts = self.web.hosts
        self.base = self.web.base
        pages = [p for p in getattr(self.base, "pages", [])]
        self._donors = [(p.host, p.path) for p in pages[: self.hidden]] or []

    def kind(self, host: str) -> str:
        return (
            SIGNAL_KINDS[self.hosts.index(host) % len(SIGNAL_KINDS)]
            if host in self.hosts
            else "none"
        )

    @property
    def seeds(self) -> dict[str, list[str]]:
        return self.web.seeds

    @property
    def pages(self) -> list[tuple[str, str]]:
        return self.web.pages

    @property
    def victims(self) -> list[tuple[str, str]]:
        return self.web.victims

    @property
    def sitemap_only(self) -> list[str]:
        return [
            f"http://{h}:{self.port}/hidden/{k}.html"
            for h in self.hosts
            if self.kind(h) != "none"
            for k in range(len(self._donors))
        ]

    def _paths(self, host: str) -> list[str]:
        own = [p for h, p in self.web.pages if h == host]
        return own + [f"/hidden/{k}.html" for k in range(len(self._donors))]

    def _lastmod(self, host: str, path: str) -> float:
        return self.changed_at.get((host, path), self.started)

    # --- the Site protocol -------------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        kind = self.kind(host)
        if path.startswith("/_evolve/"):
            res = self.web.get(host, path)
            name = res.body.decode() if res is not None else ""
            if name in ("significant", "insignificant", "delete", "add-back"):
                now = time.time()
                for key in self.web.victims:
                    self.changed_at[key] = now
            return res
        if path == "/sitemap.xml" and kind in ("exact", "stale", "lying"):
            return Resource(self._sitemap(host, kind), "application/xml")
        if path == "/feed.xml" and kind == "feed":
            return Resource(self._feed(host), "application/atom+xml")
        if path.startswith("/hidden/") and kind != "none":
            try:
                k = int(path[len("/hidden/") : -len(".html")])
                donor = self._donors[k]
            except (ValueError, IndexError):
                return None
            res = self.web.get(*donor)
            return Resource(res.body, HTML) if res is not None else None
        res = self.web.get(host, path)
        if res is not None and kind == "feed" and b"</head>" in res.body:
            body = res.body.replace(b"</head>", _FEED_LINK + b"</head>", 1)
            return Resource(body, res.content_type, last_modified=res.last_modified)
        return res

    def robots(self, host: str) -> str:
        text = self.web.robots(host)
        if self.kind(host) in ("exact", "stale", "lying"):
            text = text.rstrip("\n") + f"\nSitemap: http://{host}:{self.port}/sitemap.xml\n"
        return text

    def _sitemap(self, host: str, kind: str) -> bytes:
        now = time.time()
        rows = []
        for path in self._paths(host):
            t = {"exact": self._lastmod(host, path), "stale": self.started, "lying": now}[kind]
            rows.append(
                f"<url><loc>http://{host}:{self.port}{path}</loc><lastmod>{_w3c(t)}</lastmod></url>"
            )
        ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        return f'<?xml version="1.0"?><urlset xmlns="{ns}">{"".join(rows)}</urlset>'.encode()

    def _feed(self, host: str) -> bytes:
        paths = sorted(self._paths(host), key=lambda p: -self._lastmod(host, p))
        entries = "".join(
            f"<entry><title>{p.rsplit('/', 1)[-1]}</title>"
            f'<link href="http://{host}:{self.port}{p}"/>'
            f"<updated>{_w3c(self._lastmod(host, p))}</updated></entry>"
            for p in paths
        )
        return (
            '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Changes</title>'
            f"{entries}</feed>"
        ).encode()


def synthetic_signal_web(
    hosts: list[str], port: int, seed: int = 7, n_pages: int = 600, changed: int = 10
) -> SignalWeb:
    """The synthetic evolving web with signals (``focuscrawl testweb --corpus evolving-signals``)."""
    return SignalWeb(synthetic_evolving(n_pages, changed, seed, hosts, port), port)
