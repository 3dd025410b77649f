"""The evolving test web: a :class:`~focuseval.site.Site` whose pages are deleted,
added back and changed — significantly or not — between crawl cycles.

``EvolvingWeb`` wraps any site (the synthetic web by default) and keeps, per page path, a
mutation state. Bodies are rendered from the base body, so serving stays cheap; a changed body
gets a new ETag (from its content) and a Last-Modified of the cycle it changed in, so
conditional GETs answer 304 exactly for the pages that did not change.

Mutations, as in the seed's six-cycle experiment (Badawi et al. 2013):

- ``significant``: a sentence appended to the article's first paragraph, or a new title;
- ``insignificant``: layout (an extra wrapper ``div``), attributes (``class``, ``style``,
  ``data-*``), a ``<style>`` rule, and a rotated ad in the cue-marked ad block.

Control from outside the process (for a real crawl against ``focuscrawl testweb``): a GET of
``/_evolve/<cycle>`` on any host applies :data:`SIX_CYCLES` step ``cycle`` to ``changed`` pages.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from focuseval.site import EPOCH_2024, HTML, Resource, Site

#: what happens at the start of each cycle of the six-cycle experiment
SIX_CYCLES = ("initial", "no-change", "delete", "add-back", "significant", "insignificant")

_SENTENCES = (
    "Observers reported a marked rise in sightings along the northern coast this season.",
    "A revised survey method was adopted after the committee reviewed last year's counts.",
    "The new figures were confirmed by two independent laboratories in early spring.",
    "Volunteers catalogued several hundred additional records during the winter months.",
)
_ADS = (
    "Sponsored: Limited offer on garden furniture, ends Sunday.",
    "Sponsored: Upgrade your broadband today and save more.",
    "Sponsored: Book a weekend break by the sea with free breakfast.",
)
_FIRST_P_END = re.compile(rb"</p>")
_TITLE = re.compile(rb"<title>(.*?)</title>", re.S)
_H1 = re.compile(rb"<h1>(.*?)</h1>", re.S)
_AD = re.compile(rb'(<div class="ad">)(.*?)(</div>)', re.S)


@dataclass
class PageState:
    deleted: bool = False
    significant: int = 0  # how many significant changes were applied
    insignificant: int = 0
    last_modified: float = EPOCH_2024


def significant_change(body: bytes, n: int) -> bytes:
    """A sentence appended to the first paragraph (odd n: also a new title)."""
    sentence = _SENTENCES[n % len(_SENTENCES)].encode()
    body = _FIRST_P_END.sub(b" " + sentence + b"</p>", body, count=1)
    if n % 2:
        body = _TITLE.sub(lambda m: b"<title>Updated: " + m.group(1) + b"</title>", body, count=1)
        body = _H1.sub(lambda m: b"<h1>Updated: " + m.group(1) + b"</h1>", body, count=1)
    return body


def insignificant_change(body: bytes, n: int) -> bytes:
    """Layout, attributes, styles and an ad: the body changes, the content does not."""
    body = body.replace(
        b"<main>", f'<main class="v{n}" data-rev="{n}"><div class="wrap-{n}">'.encode(), 1
    ).replace(b"</main>", b"</div></main>", 1)
    body = body.replace(
        b"<article>", f'<article style="font-size:{14 + n % 5}px;color:#33{n % 10}">'.encode(), 1
    )
    body = body.replace(
        b"</head>", f"<style>.wrap-{n}{{margin:{n % 7}px}}</style></head>".encode(), 1
    )
    ad = _ADS[n % len(_ADS)].encode()
    return _AD.sub(lambda m: m.group(1) + ad + m.group(3), body, count=1)


@dataclass
class EvolvingWeb:
    """A site whose pages evolve by cycle; :attr:`pages` are the ``(host, path)`` that evolve."""

    base: Site
    pages: list[tuple[str, str]]
    changed: int = 10  # pages touched by each mutation cycle
    seed: int = 5
    cycle: int = 0
    state: dict[tuple[str, str], PageState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hosts = list(self.base.hosts)
        rng = random.Random(self.seed)
        self.victims = rng.sample(self.pages, min(self.changed, len(self.pages)))
        self._cache: dict[tuple[str, str, int, int], Resource] = {}

    # --- evolution ---------------------------------------------------------------------------
    def now(self) -> float:
        return EPOCH_2024 + 86400.0 * self.cycle

    def step(self, cycle: int) -> str:
        """Apply six-cycle step ``cycle`` (0 … 5) to the victim pages; returns its name."""
        name = SIX_CYCLES[cycle]
        self.cycle = cycle
        for key in self.victims:
            st = self.state.setdefault(key, PageState())
            if name == "delete":
                st.deleted = True
            elif name == "add-back":
                st.deleted = False
            elif name == "significant":
                st.significant += 1
                st.last_modified = self.now()
            elif name == "insignificant":
                st.insignificant += 1
                st.last_modified = self.now()
        return name

    @property
    def seeds(self) -> dict[str, list[str]]:
        return dict(getattr(self.base, "seeds", {}))

    # --- the Site protocol -------------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        if path.startswith("/_evolve/"):
            try:
                return Resource(self.step(int(path.rsplit("/", 1)[1])).encode(), "text/plain")
            except (ValueError, IndexError):
                return None
        st = self.state.get((host, path))
        if st is None:
            return self.base.get(host, path)
        if st.deleted:
            return None
        ck = (host, path, st.significant, st.insignificant)
        res = self._cache.get(ck)
        if res is None:
            base = self.base.get(host, path)
            if base is None:
                return None
            body = base.body
            for n in range(st.insignificant):
                body = insignificant_change(body, n + 1)
            for n in range(st.significant):
                body = significant_change(body, n)
            res = Resource(body, base.content_type or HTML, last_modified=st.last_modified)
            self._cache[ck] = res
        return res

    def robots(self, host: str) -> str:
        return self.base.robots(host)


def synthetic_evolving(
    n_pages: int = 600,
    changed: int = 10,
    seed: int = 7,
    hosts: list[str] | None = None,
    port: int = 80,
) -> EvolvingWeb:
    """The synthetic web as an evolving web over its article pages (for ``focuscrawl testweb``:
    pass the bound ``hosts`` and ``port``, then serve it; ``/_evolve/<cycle>`` steps it)."""
    from focuseval.site import loopback_hosts
    from focuseval.synthetic import SyntheticWeb

    hosts = hosts or loopback_hosts(3)
    web = SyntheticWeb(hosts=hosts, port=port, seed=seed, n_pages=n_pages)
    return EvolvingWeb(web, [(p.host, p.path) for p in web.pages], changed=changed, seed=seed)
