"""A test web where 20 % of the pages are copies of others: ``focuscrawl testweb --corpus mirrored``.

Hosts (at least 4): ``hosts[0]`` and ``hosts[1]`` publish the original articles; ``hosts[2]``
is a mirror site; ``hosts[3]`` an aggregator that republishes with heavy chrome. Deterministic
for a seed. Every copy has one original (its *group*); the copies come in five kinds, in turn:

- ``mirror``: the same main text on the mirror host, its links rewritten to the mirror's own
  copies where they exist (a real mirror); found only through each other (front page → first
  copy → next copy …), so a crawl that follows a copy's links fetches more copies;
- ``print``: ``/print/…`` on the original's host, bare chrome, ``<link rel=canonical>`` to
  the original, linked from it;
- ``utm``: the original's URL with ``utm_*`` and click-id parameters, linked from other pages
  (the server ignores the query: the same page);
- ``chrome``: the aggregator's page around the same main text: a long navigation, a
  "related stories" box, ads and a footer;
- ``dated``: the aggregator's near-copy whose date line says another date ("Updated …").

And hard negatives: every fifth original starts with the same series introduction as the one
before it (same template, shared opening paragraph, a different article), so that similar but
genuinely different pages can be counted as false marks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from html import escape

from focuseval.site import Resource
from focuseval.synthetic_vocab import AD_LINES, FOOTER, GENERAL, MISC_WORDS, TOPICS

KINDS = ("mirror", "print", "utm", "chrome", "dated")
COPY_SHARE = 0.2  # of all pages
MIN_HOSTS = 4
_MONTHS = "January February March April May June July August September October November December"


@dataclass(slots=True)
class Article:
    id: int
    host: str
    title: str
    topic: str  # "birds" or "misc"
    date: str
    paragraphs: list[str]  # plain words; links are added when rendering
    links: list[int] = field(default_factory=list)  # other articles linked in the text


@dataclass(frozen=True, slots=True)
class Copy:
    kind: str
    of: int  # the article copied
    url: str


class MirroredWeb:
    def __init__(self, hosts: list[str], port: int, seed: int = 7, pages: int = 0) -> None:
        if len(hosts) < MIN_HOSTS:
            raise ValueError(f"the mirrored web needs {MIN_HOSTS} hosts, got {len(hosts)}")
        self.hosts = hosts
        self.port = port
        self.rng = random.Random(seed)
        n_articles = pages or 400
        self.articles = [self._article(i) for i in range(n_articles)]
        for a in self.articles:
            others = [j for j in range(n_articles) if j != a.id]
            a.links = self.rng.sample(others, 4)
        # copies: a quarter of the articles' number, so that they are 20 % of all pages
        n_copies = round(n_articles * COPY_SHARE / (1 - COPY_SHARE))
        picked = self.rng.sample(range(n_articles), n_copies)
        self.copies: list[Copy] = []
        for j, i in enumerate(picked):
            kind = KINDS[j % len(KINDS)]
            self.copies.append(Copy(kind, i, self._copy_url(kind, self.articles[i])))
        self._mirrored = {c.of: c.url for c in self.copies if c.kind == "mirror"}
        # the mirror's pages are found through each other: its front page shows the first,
        # each page links the next (a copy whose links are not followed ends the walk)
        self._mirror_chain = [c.url for c in self.copies if c.kind == "mirror"]
        self._copies_of: dict[int, list[Copy]] = {}
        for c in self.copies:
            self._copies_of.setdefault(c.of, []).append(c)
        self._pages = self._render_all()

    # -- labels ---------------------------------------------------------------------------
    def url(self, a: Article) -> str:
        return f"http://{a.host}:{self.port}/news/{a.id}-{_slug(a.title)}.html"

    def groups(self) -> dict[str, int]:
        """Every article's URL and every copy's URL → the article it is (its group)."""
        out = {self.url(a): a.id for a in self.articles}
        out.update({c.url: c.of for c in self.copies})
        return out

    def kinds(self) -> dict[str, str]:
        """Copy URL → its kind."""
        return {c.url: c.kind for c in self.copies}

    @property
    def seeds(self) -> dict[str, list[str]]:
        return {"birds": [f"http://{h}:{self.port}/" for h in self.hosts[:MIN_HOSTS]]}

    # -- serving --------------------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        body = self._pages.get((host, path.split("?", 1)[0]))  # a query changes nothing
        return Resource(body) if body is not None else None

    def robots(self, host: str) -> str:
        return "User-agent: *\nAllow: /\n"

    # -- building -------------------------------------------------------------------------
    def _article(self, i: int) -> Article:
        rng = self.rng
        topic = "birds" if i % 2 == 0 else "misc"
        vocab = TOPICS["birds"]["words"] if topic == "birds" else MISC_WORDS
        title = " ".join(w.capitalize() for w in rng.sample(vocab, 3)) + f" {i}"
        paragraphs = [self._words(vocab, rng.randint(50, 90)) for _ in range(rng.randint(3, 5))]
        if i % 5 == 1 and i > 0:  # a sibling: the series introduction of the article before
            paragraphs[0] = self._series_intro(i - 1)
        date = f"{rng.choice(_MONTHS.split())} {rng.randint(1, 28)}, {rng.randint(2015, 2024)}"
        return Article(i, self.hosts[i % 2], title, topic, date, paragraphs)

    def _series_intro(self, i: int) -> str:
        # a deterministic intro per series (not drawn from the shared generator's stream)
        rng = random.Random(i * 7919)
        return self._words(TOPICS["birds"]["words"] + GENERAL, 60, rng)

    def _words(self, vocab: list[str], n: int, rng: random.Random | None = None) -> str:
        rng = rng or self.rng
        words = [
            rng.choice(vocab) if rng.random() < 0.35 else rng.choice(GENERAL) for _ in range(n)
        ]
        words[0] = words[0].capitalize()
        return " ".join(words) + "."

    def _copy_url(self, kind: str, a: Article) -> str:
        base = f"http://{{}}:{self.port}"
        slug = f"{a.id}-{_slug(a.title)}"
        if kind == "mirror":
            return base.format(self.hosts[2]) + f"/mirror/news/{slug}.html"
        if kind == "print":
            return base.format(a.host) + f"/print/news/{slug}.html"
        if kind == "utm":
            return self.url(a) + f"?utm_source=feed&utm_reader=rss{a.id}&fbclid=IwAR{a.id}x"
        if kind == "chrome":
            return base.format(self.hosts[3]) + f"/stories/{slug}.html"
        return base.format(self.hosts[3]) + f"/syndicated/{a.id}.html"

    def _render_all(self) -> dict[tuple[str, str], bytes]:
        pages: dict[tuple[str, str], bytes] = {}

        def put(url: str, html: str) -> None:
            rest = url.split("://", 1)[1]
            hostport, _, path = rest.partition("/")
            pages[(hostport.rsplit(":", 1)[0], "/" + path.split("?", 1)[0])] = html.encode()

        for a in self.articles:
            put(self.url(a), self._original(a))
        for c in self.copies:
            if c.kind != "utm":  # the utm variant is the original itself
                put(c.url, self._copy(c))
        for n, host in enumerate(self.hosts[:MIN_HOSTS]):
            put(f"http://{host}:{self.port}/", self._index(n, host))
        return pages

    def _body(self, a: Article, date_line: str, link_of: dict[int, str] | None = None) -> str:
        link_of = link_of or {}
        paras = [f"<p class='date'>{escape(date_line)}</p>"]
        for k, text in enumerate(a.paragraphs):
            words = text.split()
            if k < len(a.links):
                target = self.articles[a.links[k]]
                href = link_of.get(target.id, self.url(target))
                pos = len(words) // 2
                words.insert(pos, f'<a href="{href}">{escape(target.title)}</a>')
            paras.append(f"<p>{' '.join(words)}</p>")
        return f"<h1>{escape(a.title)}</h1>" + "".join(paras)

    def _original(self, a: Article) -> str:
        extra = []
        for c in self._copies_of.get(a.id, []):
            if c.kind == "print":
                extra.append((c.url, "Print this article"))
            elif c.kind in ("chrome", "dated"):
                extra.append((c.url, "Also on The Aggregator"))
        # a trending box: other articles' tracking links (utm copies are reached from here)
        trending = [c for c in self.copies if c.kind == "utm" and c.of % 7 == a.id % 7][:2]
        extra += [(c.url, self.articles[c.of].title) for c in trending]
        return _page(
            f"Site {a.host}", a.title, self._body(a, f"Published on {a.date}"), extra, a.id
        )

    def _copy(self, c: Copy) -> str:
        a = self.articles[c.of]
        if c.kind == "mirror":
            body = self._body(a, f"Published on {a.date}", self._mirrored)
            chain = self._mirror_chain
            at = chain.index(c.url)
            after = [(u, "Next on this mirror") for u in chain[at + 1 : at + 2]]
            return _page("Mirror site", a.title, body, after, a.id)
        if c.kind == "print":
            head = f'<link rel="canonical" href="{self.url(a)}">'
            body = self._body(a, f"Published on {a.date}")
            return (
                f"<!doctype html><html><head><title>{escape(a.title)} (print)</title>{head}"
                f"</head><body><article>{body}</article></body></html>"
            )
        if c.kind == "chrome":
            return _heavy_page(a.title, self._body(a, f"Published on {a.date}"), a.id)
        rng = random.Random(a.id)
        other = f"{rng.choice(_MONTHS.split())} {rng.randint(1, 28)}, 2025"
        return _heavy_page(a.title, self._body(a, f"Updated on {other}"), a.id + 1)

    def _index(self, n: int, host: str) -> str:
        if n < 2:
            links = [(self.url(a), a.title) for a in self.articles if a.host == host]
        elif n == 2:  # the mirror's front page shows its first page; the rest follow from it
            links = [(u, "Latest on this mirror") for u in self._mirror_chain[:1]]
        else:
            links = [
                (c.url, self.articles[c.of].title)
                for c in self.copies
                if c.kind in ("chrome", "dated")
            ][:5]
        items = "".join(f'<li><a href="{u}">{escape(t)}</a></li>' for u, t in links)
        return _page(f"Site {host}", "Front page", f"<h1>Latest</h1><ul>{items}</ul>", [], n)


def _slug(title: str) -> str:
    return "-".join(title.lower().split())


def _page(site: str, title: str, body: str, extra: list[tuple[str, str]], n: int) -> str:
    side = "".join(f'<li><a href="{u}">{escape(t)}</a></li>' for u, t in extra)
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
        f'<body><header><nav><a href="/">Home</a> | <a href="/">{escape(site)}</a></nav></header>'
        f"<main><article>{body}</article></main>"
        f'<aside class="sidebar"><h3>More</h3><ul>{side}</ul>'
        f'<div class="ad">Sponsored: {escape(AD_LINES[n % len(AD_LINES)])}</div></aside>'
        f"<footer><p>{FOOTER}</p></footer></body></html>"
    )


def _heavy_page(title: str, body: str, n: int) -> str:
    """The aggregator's chrome: a long menu, a related-stories box with teasers, two ads."""
    menu = " ".join(f'<a href="/section/{w}.html">{w.capitalize()}</a>' for w in MISC_WORDS[:24])
    related = "".join(
        f'<li><a href="/">{escape(" ".join(MISC_WORDS[(n + k) % 40 : (n + k) % 40 + 4]))}</a>'
        f"<span> {escape(AD_LINES[(n + k) % len(AD_LINES)])}</span></li>"
        for k in range(6)
    )
    ads = "".join(f'<div class="ad advert">{escape(line)}</div>' for line in AD_LINES[:2])
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)} | The '
        f"Aggregator</title></head><body><header><div class='logo'>The Aggregator</div>"
        f"<nav class='menu'>{menu}</nav></header>{ads}"
        f"<div class='layout'><main><article>{body}</article></main>"
        f"<aside class='related'><h3>Related stories</h3><ul>{related}</ul></aside></div>"
        f"<footer class='footer'><p>{FOOTER}</p><p>{FOOTER}</p></footer></body></html>"
    )
