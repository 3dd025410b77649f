"""A synthetic topical web: seeded, deterministic, several hosts and topics, with noise and traps.

Shape (labels come from the generator):

- ``TOPICS`` (8) each own ``~n_pages * 0.75 / 8`` pages split in two clusters. Cluster 0 holds
  the topic's hub pages and its seeds; most links of a topic page stay in its cluster (topical
  locality), some go to other topics' cluster 0 and to irrelevant "misc" pages.
- Cluster 1 is reachable ONLY through irrelevant *bridge* pages (misc content, a few links into
  cluster 1): an irrelevant region a crawler must tunnel through.
- Every page carries noise: site navigation, a "popular elsewhere" sidebar of unrelated links,
  an ad block and a boilerplate footer; text is mostly general words shared by all topics.
- Robustness cases linked from some pages: an endless calendar (``/trap/calendar?m=…``), a
  redirect loop (``/loop/a`` ⇄ ``/loop/b``), a PDF, a binary body served as HTML, dead links
  (404) and ``/private/`` pages that robots.txt disallows.
"""

from __future__ import annotations

import functools
import itertools
import random
from dataclasses import dataclass, field
from html import escape

from focuseval.site import Resource
from focuseval.synthetic_vocab import (
    AD_LINES,
    FOOTER,
    GENERAL,
    MISC_WORDS,
    NAV,
    ROBOTS,
    SITE_NAMES,
    TOPICS,
)

MISC_SHARE = 0.25
BRIDGES_PER_TOPIC = 6
HUBS_PER_TOPIC = 3
SEEDS_PER_TOPIC = 3


@dataclass(slots=True)
class PageSpec:
    id: int
    topic: str | None  # None: irrelevant (misc or bridge)
    cluster: int
    host: str
    title: str
    hub: bool = False
    bridge_for: str | None = None
    links: list[int] = field(default_factory=list)

    @property
    def path(self) -> str:
        slug = "-".join(self.title.lower().split())
        return f"/articles/{self.id}-{slug}.html"


class SyntheticWeb:
    """The synthetic web as a :class:`~focuseval.site.Site`, rendered eagerly."""

    def __init__(self, hosts: list[str], port: int, seed: int = 7, n_pages: int = 3000) -> None:
        self.hosts = list(hosts)
        self.port = port
        self.seed = seed
        self.rng = random.Random(seed)
        self.pages: list[PageSpec] = []
        self._generate(n_pages)
        self._resources: dict[tuple[str, str], Resource] = {}
        for page in self.pages:
            self._resources[(page.host, page.path)] = Resource(self._render(page))
        for host in self.hosts:
            for path, body in self._host_pages(host).items():
                self._resources[(host, path)] = Resource(body)
        self.seeds: dict[str, list[str]] = {t: self._seed_urls(t) for t in TOPICS}

    # --- the Site protocol -------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        res = self._resources.get((host, path))
        if res is not None:
            return res
        return special_resource(self, host, path)

    def robots(self, host: str) -> str:
        return ROBOTS

    # --- labels ------------------------------------------------------------------------
    def url(self, page: PageSpec) -> str:
        return f"http://{page.host}:{self.port}{page.path}"

    def topic_of(self, url: str) -> str | None:
        return self._topic_by_url().get(url)

    def relevant_urls(self, topic: str) -> set[str]:
        """The pages of ``topic`` reachable from its seeds by content links (the recall target)."""
        start = [p.id for p in self.pages if self.url(p) in set(self.seeds[topic])]
        seen = set(start)
        stack = list(start)
        while stack:
            for nxt in self.pages[stack.pop()].links:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return {self.url(self.pages[i]) for i in seen if self.pages[i].topic == topic}

    def _topic_by_url(self) -> dict[str, str | None]:
        cache = getattr(self, "_topics_cache", None)
        if cache is None:
            cache = {self.url(p): p.topic for p in self.pages}
            self._topics_cache = cache
        return cache

    def _seed_urls(self, topic: str) -> list[str]:
        # Stated rule: the first SEEDS_PER_TOPIC non-hub pages of the topic's cluster 0 (by id).
        pages = [p for p in self.pages if p.topic == topic and p.cluster == 0 and not p.hub]
        return [self.url(p) for p in pages[:SEEDS_PER_TOPIC]]

    # --- generation --------------------------------------------------------------------
    def _generate(self, n_pages: int) -> None:
        rng = self.rng
        topics = list(TOPICS)
        per_topic = int(n_pages * (1 - MISC_SHARE)) // len(topics)
        n_hosts = len(self.hosts)
        clusters: dict[tuple[str, int], list[int]] = {}
        for ti, topic in enumerate(topics):
            for i in range(per_topic):
                cluster = 0 if i < per_topic * 0.7 else 1
                home = (ti + 3 * cluster) % n_hosts
                host_i = home if rng.random() < 0.9 else rng.randrange(n_hosts)
                hub = (
                    cluster == 0
                    and i < HUBS_PER_TOPIC
                    or cluster == 1
                    and i == int(per_topic * 0.7)
                )
                title = self._title(TOPICS[topic]["words"], hub)
                page = PageSpec(len(self.pages), topic, cluster, self.hosts[host_i], title, hub)
                self.pages.append(page)
                clusters.setdefault((topic, cluster), []).append(page.id)
        misc: list[int] = []
        bridges: dict[str, list[int]] = {t: [] for t in topics}
        for i in range(n_pages - len(self.pages)):
            bridge_for = topics[i % len(topics)] if i < BRIDGES_PER_TOPIC * len(topics) else None
            words = MISC_WORDS
            title = self._title(words, False)
            if bridge_for and rng.random() < 0.5:  # some bridges hint at where they lead
                title = f"{title} {TOPICS[bridge_for]['keywords'][0]} links"
            page = PageSpec(len(self.pages), None, 0, self.hosts[rng.randrange(n_hosts)], title)
            page.bridge_for = bridge_for
            self.pages.append(page)
            (bridges[bridge_for] if bridge_for else misc).append(page.id)
        front = [pid for t in topics for pid in clusters[(t, 0)]] + misc
        for page in self.pages:
            page.links = self._links(page, clusters, bridges, misc, front)

    def _links(
        self, page: PageSpec, clusters: dict, bridges: dict, misc: list, front: list
    ) -> list[int]:
        rng = self.rng
        out: list[int] = []
        if page.topic is None and page.bridge_for:
            t = page.bridge_for
            out += rng.sample(clusters[(t, 1)], 5) + rng.sample(clusters[(t, 0)], 2)
            out += rng.sample(misc, 4)
        elif page.topic is None:
            out += rng.sample(misc, rng.randint(5, 9)) + rng.sample(front, rng.randint(2, 5))
        else:
            own = clusters[(page.topic, page.cluster)]
            n = rng.randint(25, 40) if page.hub else rng.randint(6, 12)
            for _ in range(n):
                r = rng.random()
                if r < 0.72:
                    out.append(rng.choice(own))
                elif r < 0.86:
                    other = rng.choice([t for t in TOPICS if t != page.topic])
                    out.append(rng.choice(clusters[(other, 0)]))
                elif r < 0.93:
                    out.append(rng.choice(misc))
                else:
                    out.append(rng.choice(bridges[page.topic] or misc))
        return [x for x in dict.fromkeys(out) if x != page.id]

    def _title(self, words: list[str], hub: bool) -> str:
        picked = self.rng.sample(words, self.rng.randint(2, 3))
        title = " ".join(w.capitalize() for w in picked)
        return f"Guide to {title}" if hub else title

    # --- rendering ---------------------------------------------------------------------
    def _text(self, topic: str | None, n: int) -> list[str]:
        rng = self.rng
        topical = TOPICS[topic]["words"] if topic else MISC_WORDS
        others = [t for t in TOPICS if t != topic]
        stray = TOPICS[rng.choice(others)]["words"]
        share = 0.3 if topic else 0.2
        # Per word: topical (Zipf-like, earlier words more frequent), stray (another topic) or
        # general; drawn in bulk so that building the web stays fast.
        kinds = rng.choices((0, 1, 2), cum_weights=(share, share + 0.06, 1.0), k=n)
        pools = (
            iter(rng.choices(topical, cum_weights=_zipf_cum_weights(len(topical)), k=n)),
            iter(rng.choices(stray, k=n)),
            iter(rng.choices(GENERAL, k=n)),
        )
        return [next(pools[k]) for k in kinds]

    def _render(self, page: PageSpec) -> bytes:
        rng = self.rng
        host_i = self.hosts.index(page.host)
        links = list(page.links)
        rng.shuffle(links)
        paras: list[str] = []
        n_paras = rng.randint(3, 6)
        per_para = max(1, len(links) // n_paras + 1)
        for pi in range(n_paras):
            words = self._text(page.topic, rng.randint(40, 90))  # vocabulary needs no escaping
            words[0] = words[0].capitalize()
            chunk = links[pi * per_para : (pi + 1) * per_para]
            for target in chunk:
                pos = rng.randrange(len(words))
                t = self.pages[target]
                words.insert(pos, f'<a href="{self.url(t)}">{escape(t.title)}</a>')
            tag = (
                f"<h2>{escape(self._title(TOPICS[page.topic]['words'] if page.topic else MISC_WORDS, False))}</h2>"
                if pi and rng.random() < 0.4
                else ""
            )
            paras.append(f"{tag}<p>{' '.join(words)}.</p>")
        sidebar = [self.pages[rng.randrange(len(self.pages))] for _ in range(5)]
        sidebar = [p for p in sidebar if p.cluster == 0]  # noise links never lead into cluster 1
        extras = self._bad_links(page.id)
        return page_html(
            site=SITE_NAMES[host_i % len(SITE_NAMES)],
            title=page.title,
            body="\n".join(paras),
            sidebar=[(self.url(p), p.title) for p in sidebar] + extras,
            ad=AD_LINES[page.id % len(AD_LINES)],
        ).encode()

    def _bad_links(self, pid: int) -> list[tuple[str, str]]:
        h = self.hosts[pid % len(self.hosts)]
        base = f"http://{h}:{self.port}"
        cases = [
            (f"{base}/trap/calendar?m=2024-01", "Events calendar"),
            (f"{base}/loop/a", "Moved page"),
            (f"{base}/files/report-{pid % 7}.pdf", "Annual report (PDF)"),
            (f"{base}/media/blob-{pid % 5}", "Media file"),
            (f"{base}/gone/page-{pid}.html", "Old page"),
            (f"{base}/private/members-{pid % 3}.html", "Members area"),
        ]
        return [cases[pid % len(cases)]] if pid % 4 == 0 else []

    def _host_pages(self, host: str) -> dict[str, bytes]:
        name = SITE_NAMES[self.hosts.index(host) % len(SITE_NAMES)]
        mine = [p for p in self.pages if p.host == host and p.cluster == 0][:40]
        index = "".join(f'<li><a href="{self.url(p)}">{escape(p.title)}</a></li>' for p in mine)
        pages = {
            "/": page_html(
                name, name, f"<p>Welcome to {name}.</p><ul>{index}</ul>", [], AD_LINES[0]
            ),
            "/about.html": page_html(name, "About us", f"<p>{FOOTER}</p>", [], AD_LINES[1]),
            "/contact.html": page_html(name, "Contact", "<p>Write to us.</p>", [], AD_LINES[2]),
            "/archive.html": page_html(
                name,
                "Archive",
                '<p><a href="/trap/calendar?m=2024-01">Calendar</a></p>',
                [],
                AD_LINES[3],
            ),
        }
        for i in range(3):
            pages[f"/private/members-{i}.html"] = page_html(
                name, "Members", "<p>Private.</p>", [], ""
            )
        return {k: v.encode() for k, v in pages.items()}


@functools.cache
def _zipf_cum_weights(n: int) -> list[float]:
    """Earlier words of a topic list are more frequent (a soft Zipf law)."""
    return list(itertools.accumulate(1.0 / (rank + 1) ** 0.7 for rank in range(n)))


def page_html(site: str, title: str, body: str, sidebar: list[tuple[str, str]], ad: str) -> str:
    nav = " | ".join(f'<a href="{href}">{label}</a>' for label, href in NAV)
    side = "".join(f'<li><a href="{href}">{escape(text)}</a></li>' for href, text in sidebar)
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)} - {site}</title></head><body>'
        f'<header><div class="logo">{site}</div><nav>{nav}</nav></header>'
        f'<div class="layout"><main><article><h1>{escape(title)}</h1>{body}</article></main>'
        f'<aside class="sidebar"><h3>Popular elsewhere</h3><ul>{side}</ul>'
        f'<div class="ad">Sponsored: {escape(ad)}</div></aside></div>'
        f'<footer><p>{FOOTER}</p><a href="/about.html">About</a> <a href="/contact.html">Contact</a></footer>'
        "</body></html>"
    )


def special_resource(web: SyntheticWeb, host: str, path: str) -> Resource | None:
    """The robustness cases, made on request (the calendar has no end)."""
    if path.startswith("/trap/calendar?m="):
        try:
            year, month = (int(x) for x in path.rsplit("=", 1)[1].split("-"))
        except ValueError:
            return None
        nxt = f"{year + month // 12}-{month % 12 + 1:02d}"
        prv = f"{year - (month == 1)}-{(month - 2) % 12 + 1:02d}"
        body = page_html(
            "Calendar",
            f"Events {year}-{month:02d}",
            "<p>No events this month.</p>",
            [
                (f"/trap/calendar?m={nxt}", "Next month"),
                (f"/trap/calendar?m={prv}", "Previous month"),
            ],
            "",
        )
        return Resource(body.encode())
    if path == "/loop/a":
        return Resource(b"", status=302, headers={"Location": "/loop/b"})
    if path == "/loop/b":
        return Resource(b"", status=302, headers={"Location": "/loop/a"})
    if path.startswith("/files/") and path.endswith(".pdf"):
        return Resource(
            b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n",
            "application/pdf",
        )
    if path.startswith("/media/blob-"):
        return Resource(bytes(random.Random(path).randrange(256) for _ in range(2048)))
    return None
