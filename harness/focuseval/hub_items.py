"""The evolving test web whose hub pages gain new items: what a topical recrawl most needs to see
(issue 16: "recrawl follows the new items").

:class:`HubItemsWeb` wraps an :class:`~focuseval.evolving.EvolvingWeb` (its six-cycle
mutations and ``/_evolve/<cycle>`` stay as they are). :meth:`HubItemsWeb.add_items` puts ``n`` new
article pages of the topic at the top of each of the topic's hub pages, as a list of links ("Latest
…"): a significant change of the hub (new content items, a new ETag and Last-Modified). The new
pages exist from then on; each is about the topic and links to a few of its existing pages. A GET
of ``/_items/<n>`` on any host does the same from outside the process.
"""

from __future__ import annotations

import asyncio
import random
import threading
from dataclasses import dataclass, field
from html import escape
from typing import Any

from focuseval.evolving import EvolvingWeb, synthetic_evolving
from focuseval.server import bind_sockets, serve
from focuseval.site import Resource, loopback_hosts
from focuseval.synthetic import SyntheticWeb, page_html
from focuseval.synthetic_vocab import AD_LINES, GENERAL, SITE_NAMES, TOPICS

_H1_END = b"</h1>"


@dataclass
class HubItemsWeb:
    """An evolving synthetic web; :attr:`hubs` are the ``(host, path)`` of the topic's hubs."""

    evolving: EvolvingWeb
    topic: str = "birds"
    seed: int = 11
    hubs: list[tuple[str, str]] = field(default_factory=list)
    items: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    pages: dict[tuple[str, str], Resource] = field(default_factory=dict)  # the new pages

    def __post_init__(self) -> None:
        base = self.synthetic
        self.hosts = list(self.evolving.hosts)
        if not self.hubs:
            self.hubs = [
                (p.host, p.path)
                for p in base.pages
                if p.topic == self.topic and p.hub and p.cluster == 0
            ]
        self._rng = random.Random(self.seed)
        self._made = 0
        self._cache: dict[tuple[str, str, int], Resource] = {}

    @property
    def synthetic(self) -> SyntheticWeb:
        base = self.evolving.base
        assert isinstance(base, SyntheticWeb), "HubItemsWeb wraps an evolving synthetic web"
        return base

    @property
    def port(self) -> int:
        return self.synthetic.port

    @property
    def seeds(self) -> dict[str, list[str]]:
        return self.evolving.seeds

    def url(self, key: tuple[str, str]) -> str:
        return f"http://{key[0]}:{self.port}{key[1]}"

    # --- evolution ---------------------------------------------------------------------------
    def add_items(self, n: int) -> list[str]:
        """``n`` new topic pages on each hub; returns their URLs."""
        base = self.synthetic
        words = TOPICS[self.topic]["words"]
        own = [p for p in base.pages if p.topic == self.topic and p.cluster == 0]
        now = self.evolving.now() + 3600.0 * (self._made + 1)
        made = []
        for hi, hub in enumerate(self.hubs):
            host = self.hosts[(hi + self._made) % len(self.hosts)]
            for _ in range(n):
                self._made += 1
                title = "New " + " ".join(w.capitalize() for w in self._rng.sample(words, 3))
                slug = "-".join(title.lower().split())
                key = (host, f"/news/{self._made}-{slug}.html")
                links = self._rng.sample(own, min(4, len(own)))
                text = self._text(words, 120)
                anchors = " ".join(f'<a href="{base.url(p)}">{escape(p.title)}</a>' for p in links)
                body = f"<p>{text}</p><p>See also {anchors}.</p>"
                site = SITE_NAMES[self.hosts.index(host) % len(SITE_NAMES)]
                html = page_html(site, title, body, [], AD_LINES[self._made % len(AD_LINES)])
                self.pages[key] = Resource(html.encode(), last_modified=now)
                self.items.setdefault(hub, []).insert(0, (self.url(key), title))
                made.append(self.url(key))
        return made

    def _text(self, words: list[str], n: int) -> str:
        rng = self._rng
        out = [rng.choice(words) if rng.random() < 0.35 else rng.choice(GENERAL) for _ in range(n)]
        out[0] = out[0].capitalize()
        return " ".join(out)

    # --- the Site protocol -------------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        if path.startswith("/_items/"):
            try:
                made = self.add_items(int(path.rsplit("/", 1)[1]))
            except ValueError:
                return None
            return Resource("\n".join(made).encode(), "text/plain")
        page = self.pages.get((host, path))
        if page is not None:
            return page
        res = self.evolving.get(host, path)
        items = self.items.get((host, path))
        if res is None or not items:
            return res
        key = (host, path, len(items))
        cached = self._cache.get(key)
        if cached is None:
            latest = "".join(f'<li><a href="{u}">{escape(t)}</a></li>' for u, t in items)
            block = f"<h2>Latest</h2><ul>{latest}</ul>".encode()
            body = res.body.replace(_H1_END, _H1_END + block, 1)
            modified = max(res.last_modified, self.evolving.now() + 3600.0 * self._made)
            cached = self._cache[key] = Resource(body, res.content_type, last_modified=modified)
        return cached

    def robots(self, host: str) -> str:
        return self.evolving.robots(host)


def hub_items_web(
    n_pages: int = 600, hosts: list[str] | None = None, port: int = 80, seed: int = 7
) -> HubItemsWeb:
    """The evolving synthetic web (:func:`synthetic_evolving`) with hubs that gain items."""
    return HubItemsWeb(synthetic_evolving(n_pages=n_pages, hosts=hosts, port=port, seed=seed))


class ServedWeb:
    """A :class:`HubItemsWeb` on loopback, served by a thread of this process (so that the
    caller changes it in place); ``close()`` stops it."""

    def __init__(self, n_pages: int = 600) -> None:
        hosts = loopback_hosts(3)
        self.port, socks = bind_sockets(hosts)
        self.web: HubItemsWeb = hub_items_web(n_pages=n_pages, hosts=hosts, port=self.port)
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        holder: dict[str, Any] = {}

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            holder["runner"] = self._loop.run_until_complete(serve(self.web, socks))
            ready.set()
            self._loop.run_forever()

        self._holder = holder
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        if not ready.wait(60):
            raise RuntimeError("the test web did not start")

    def close(self) -> None:
        runner = self._holder["runner"]
        asyncio.run_coroutine_threadsafe(runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
