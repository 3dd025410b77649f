"""The Wikispeedia articles dressed in real sites' chrome: a web where most links are navigation.

Every Wikispeedia article — the same text, out-links and anchors as
:class:`~focuseval.wikispeedia.WikispeediaSite` renders them — is served inside a real page of
the WCXB dev split (:mod:`focuseval.dressed_templates`): the template's navigation, headers,
footers, sidebars and widgets stay, the article takes the place of the page's main content,
and the template's own links are rewired to the host's section pages (``/section/<n>``) or to
the *external* host, which answers 404 to everything (a link off the site costs a fetch).

Hosts: the last address given is the external host; each other host wears one template domain
(its pages, up to three, articles spread over them). The first half of the content hosts are
*topical*: a group of one or two Wikispeedia top categories (``subject.Science``; the small ones
paired) gets hosts in proportion to its size, and :data:`TOPICAL_SHARE` of its articles live
there; the other half are *general*: every other article, of every category. Each article lives
on exactly one host, chosen from SHA-1 draws of its name: the same web on every run and machine.

Per host: ``/`` lists the sections, ``/section/<n>`` (``/section/<n>/page/<k>``) lists the
articles of section ``n`` by title, :data:`PAGE_SIZE` a page, each page in the host's chrome;
articles are at ``/wiki/<name>`` as on the Wikispeedia site. Pages are rendered on first
request and kept.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path
from urllib.parse import unquote

from focuseval.corpora import corpora_dir, default_cache_dir
from focuseval.dressed_templates import (
    EXTERNAL_HOLE,
    MAIN_HOLE,
    SECTIONS,
    TITLE_HOLE,
    Template,
    choose_templates,
)
from focuseval.site import Resource
from focuseval.wikispeedia import ROBOTS, WikispeediaCorpus, title_of

TOPICAL_SHARE = 0.75
#: A top category smaller than this shares its topical hosts with another small one.
PAIR_BELOW = 150
PAGE_SIZE = 20
_SECTION = re.compile(r"^/section/([1-9][0-9]*)(?:/page/([1-9][0-9]*))?$")
_SECTION_LINK = re.compile(r'<a\b[^>]*\shref="/section/([0-9]+)"[^>]*>(.*?)</a>', re.S)
_TAG = re.compile(r"<[^>]+>")


def draw(salt: str, name: str) -> int:
    """A stable pseudo-random number for ``name`` (SHA-1, not Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha1(f"{salt}\0{name}".encode()).digest()[:8], "big")


def top_category(corpus: WikispeediaCorpus, name: str) -> str:
    """The article's top category (``subject.Science``): of its first category, sorted."""
    cats = sorted(corpus.categories(name))
    return ".".join(cats[0].split(".")[:2]) if cats else ""


def category_groups(corpus: WikispeediaCorpus) -> list[tuple[str, ...]]:
    """Top categories, largest first; those under :data:`PAIR_BELOW` articles paired."""
    sizes: dict[str, int] = {}
    for name in corpus.titles:
        top = top_category(corpus, name)
        if top:
            sizes[top] = sizes.get(top, 0) + 1
    ranked = sorted(sizes, key=lambda c: (-sizes[c], c))
    big = [(c,) for c in ranked if sizes[c] >= PAIR_BELOW]
    small = [c for c in ranked if sizes[c] < PAIR_BELOW]
    pairs = [tuple(small[i : i + 2]) for i in range(0, len(small), 2)]
    return big + pairs


def _allot(sizes: list[int], n: int) -> list[int]:
    """``n`` hosts over groups of ``sizes``: one each (largest first) while they last, the
    rest in proportion by largest remainder."""
    counts = [1 if i < n else 0 for i in range(len(sizes))]
    spare = n - sum(counts)
    if spare > 0:
        total = sum(sizes)
        shares = [spare * s / total for s in sizes]
        extra = [int(s) for s in shares]
        order = sorted(range(len(sizes)), key=lambda i: (-(shares[i] - extra[i]), i))
        for i in order[: spare - sum(extra)]:
            extra[i] += 1
        counts = [c + e for c, e in zip(counts, extra, strict=True)]
    return counts


class DressedSite:
    """The dressed web as a :class:`~focuseval.site.Site` (``hosts[-1]`` is the external host)."""

    def __init__(
        self,
        corpus: WikispeediaCorpus,
        hosts: list[str],
        port: int,
        templates: list[list[Template]] | None = None,
        corpora: Path | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        if len(hosts) < 3:
            raise ValueError("the dressed web needs at least 3 hosts (2 sites and the external)")
        self.corpus = corpus
        self.hosts = list(hosts)
        self.port = port
        self.external_host = self.hosts[-1]
        self.content_hosts = self.hosts[:-1]
        self.seeds: dict[str, list[str]] = {}
        if templates is None:
            root = corpora or corpora_dir() or corpus.path.parent
            templates = choose_templates(len(self.content_hosts), root, cache_dir)
        if len(templates) < len(self.content_hosts):
            raise ValueError(f"{len(templates)} templates for {len(self.content_hosts)} hosts")
        self.templates = {h: templates[i] for i, h in enumerate(self.content_hosts)}
        self._by_top: dict[str, list[str]] = {}
        for name in corpus.titles:
            self._by_top.setdefault(top_category(corpus, name), []).append(name)
        self.topics = self._topical_hosts()
        self._host = self._assign()
        self._by_title = {unquote(n): n for n in corpus.titles}
        self.sections = self._sections()
        self._section_names = {h: self._name_sections(h) for h in self.content_hosts}
        external = f"http://{self.external_host}:{port}"
        self._pieces = {
            (h, t.stem): _split(t.html.replace(EXTERNAL_HOLE, external))
            for h, group in self.templates.items()
            for t in group
        }
        self._cache: dict[tuple[str, str], Resource] = {}

    # --- the web's shape -------------------------------------------------------------------
    def _topical_hosts(self) -> dict[str, tuple[str, ...]]:
        """Host → its top categories (empty for a general host)."""
        groups = category_groups(self.corpus)
        sizes = [sum(len(self._by_top.get(c, ())) for c in g) for g in groups]
        topical = self.content_hosts[: len(self.content_hosts) // 2]
        out: dict[str, tuple[str, ...]] = dict.fromkeys(self.content_hosts, ())
        it = iter(topical)
        for group, count in zip(groups, _allot(sizes, len(topical)), strict=True):
            for _ in range(count):
                out[next(it)] = group
        return out

    def _assign(self) -> dict[str, str]:
        hosts_of: dict[str, list[str]] = {}
        for host, group in self.topics.items():
            for category in group:
                hosts_of.setdefault(category, []).append(host)
        general = [h for h, g in self.topics.items() if not g]
        out = {}
        for name in self.corpus.titles:
            mine = hosts_of.get(top_category(self.corpus, name), [])
            d = draw("host", name)
            if mine and d % 1000 < TOPICAL_SHARE * 1000:
                out[name] = mine[(d // 1000) % len(mine)]
            else:
                out[name] = general[draw("general", name) % len(general)]
        return out

    def _sections(self) -> dict[str, list[list[str]]]:
        """Host → its sections' articles (section ``n`` at index ``n - 1``), sorted by title."""
        out = {h: [[] for _ in range(SECTIONS)] for h in self.content_hosts}
        for name in self.corpus.titles:
            out[self._host[name]][draw("section", name) % SECTIONS].append(name)
        for sections in out.values():
            for names in sections:
                names.sort(key=lambda n: title_of(n).lower())
        return out

    def section_names(self, host: str) -> list[str]:
        """The anchor text of the template's first link to each section (else "Section n")."""
        return list(self._section_names[host])

    def _name_sections(self, host: str) -> list[str]:
        names = [""] * SECTIONS
        for num, inner in _SECTION_LINK.findall(self.templates[host][0].html):
            text = " ".join(_TAG.sub(" ", inner).split())
            if text and not names[int(num) - 1]:
                names[int(num) - 1] = text[:60]
        return [n or f"Section {i + 1}" for i, n in enumerate(names)]

    def host_of(self, name: str) -> str:
        return self._host[name]

    def url_for(self, name: str) -> str:
        return f"http://{self._host[name]}:{self.port}/wiki/{name}"

    def articles_of(self, host: str) -> list[str]:
        return [n for names in self.sections.get(host, ()) for n in names]

    def template_of(self, name: str) -> Template:
        group = self.templates[self._host[name]]
        return group[draw("template", name) % len(group)]

    # --- serving ---------------------------------------------------------------------------
    def get(self, host: str, path: str) -> Resource | None:
        if host not in self.templates:
            return None  # the external host (and any other) answers 404
        key = (host, path)
        res = self._cache.get(key)
        if res is None:
            body = self._render(host, path)
            if body is None:
                return None
            res = self._cache[key] = Resource(body)
        return res

    def _render(self, host: str, path: str) -> bytes | None:
        if path == "/":
            return self.home_page(host)
        if path.startswith("/wiki/"):
            name = self._by_title.get(unquote(path[len("/wiki/") :]))
            if name is None or self._host[name] != host:
                return None
            return self.article_page(name)
        m = _SECTION.match(path)
        if m:
            return self.section_page(host, int(m.group(1)), int(m.group(2) or 1))
        return None

    def _dress(self, host: str, template: Template, title: str, main: str) -> bytes:
        head, middle, tail = self._pieces[host, template.stem]
        return "".join((head, escape(title), middle, main, tail)).encode()

    def article_page(self, name: str) -> bytes:
        template = self.template_of(name)
        article = self.corpus.article_html(name, self.url_for)
        title = f"{title_of(name)} | {template.domain}"
        return self._dress(self._host[name], template, title, f"<article>{article}</article>")

    def home_page(self, host: str) -> bytes:
        template = self.templates[host][0]
        items = "".join(
            f'<li><a href="/section/{i + 1}">{escape(n)}</a></li>'
            for i, n in enumerate(self._section_names[host])
        )
        main = f'<h1>{escape(template.domain)}</h1><ul class="sections">{items}</ul>'
        return self._dress(host, template, template.domain, main)

    def section_page(self, host: str, number: int, page: int = 1) -> bytes | None:
        if not 1 <= number <= SECTIONS:
            return None
        names = self.sections[host][number - 1]
        pages = max(1, -(-len(names) // PAGE_SIZE))
        if page > pages:
            return None
        template = self.templates[host][0]
        heading = self._section_names[host][number - 1]
        items = "".join(
            f'<li><a href="{escape(self.url_for(n))}">{escape(title_of(n))}</a></li>'
            for n in names[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        )
        nav = ""
        if pages > 1:
            links = " ".join(
                f'<a href="/section/{number}/page/{k}">{k}</a>' if k != page else f"<b>{k}</b>"
                for k in range(1, pages + 1)
            )
            nav = f'<p class="pagination">Page {page} of {pages}: {links}</p>'
        main = f'<h1>{escape(heading)}</h1><ul class="listing">{items}</ul>{nav}'
        title = f"{heading} | {template.domain}"
        return self._dress(host, template, title, main)

    def robots(self, host: str) -> str:
        return ROBOTS


def _split(html: str) -> tuple[str, str, str]:
    head, _, rest = html.partition(TITLE_HOLE)
    middle, _, tail = rest.partition(MAIN_HOLE)
    return head, middle, tail


def open_dressed(
    hosts: list[str],
    port: int,
    corpora: Path | None = None,
    cache: bool = True,
    corpus: WikispeediaCorpus | None = None,
) -> DressedSite:
    """The dressed web over the shared corpora (templates cached under the cache folder);
    ``corpus``: the Wikispeedia corpus when the caller has it open already."""
    corpus = corpus or WikispeediaCorpus.open(corpora)
    root = corpora or corpora_dir()
    return DressedSite(
        corpus, hosts, port, corpora=root, cache_dir=default_cache_dir() if cache else None
    )
