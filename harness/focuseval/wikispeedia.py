"""Wikispeedia (SNAP) rendered as a wiki-like multi-host web, read straight from the tarball.

:class:`WikispeediaCorpus` reads ``plaintext_articles.tar.gz``, ``links.tsv`` and
``categories.tsv`` (nothing is extracted to disk) and renders one article as HTML:
header navigation, a sidebar of unrelated articles, the article paragraphs and headings with its
``links.tsv`` out-links as anchors where the target's title occurs in the text (else in a "See
also" list), and a footer. The "2007 Schools Wikipedia Selection. Related subjects: …" banner and
the GFDL footer are stripped: the crawler must find the topic on its own.

Article names are the corpus's URL-encoded names (``%C3%85land``); titles are their decoded,
space-separated form (``Åland``). Each article lives on one host chosen by a stable hash of its
name: ``http://127.0.0.<k>:<port>/wiki/<name>``.
"""

from __future__ import annotations

import random
import re
import tarfile
import zlib
from collections import defaultdict
from functools import cached_property
from html import escape
from pathlib import Path
from urllib.parse import unquote

from focuseval.corpora import corpora_dir
from focuseval.site import Resource

NON_ARTICLES = {
    "Directdebit",
    "Donation",
    "Friend_Directdebit",
    "Sponsorship_Directdebit",
    "Wowpurchase",
}
NON_ARTICLES |= {"Wikipedia_Text_of_the_GNU_Free_Documentation_License"}
SIDEBAR_LINKS = 8
ROBOTS = "User-agent: *\nDisallow: /w/\n"
STATIC_PAGES = {
    "/about.html": ("About Schools Wiki", "A selection of encyclopedia articles for schools."),
    "/help.html": ("Help", "Use the links in each article to move between pages."),
}


def _read_tsv(path: Path) -> list[list[str]]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                rows.append(line.split("\t"))
    return rows


def title_of(name: str) -> str:
    return unquote(name).replace("_", " ")


class WikispeediaCorpus:
    """The corpus: article texts, out-links, categories; renders articles to HTML bytes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        tarball = self.path / "plaintext_articles.tar.gz"
        if not tarball.is_file():
            raise FileNotFoundError(
                f"no Wikispeedia corpus at {self.path} (plaintext_articles.tar.gz missing)"
            )
        self.texts: dict[str, str] = {}
        with tarfile.open(tarball, "r:gz") as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(".txt"):
                    name = member.name.rsplit("/", 1)[-1][: -len(".txt")]
                    f = tar.extractfile(member)
                    if f is not None and name not in NON_ARTICLES:
                        self.texts[name] = f.read().decode("utf-8", errors="replace")
        self.links: dict[str, list[str]] = defaultdict(list)
        for src, dst in _read_tsv(self.path / "links.tsv"):
            if src in self.texts and dst in self.texts:
                self.links[src].append(dst)
        self._categories: dict[str, set[str]] = defaultdict(set)
        for name, cat in _read_tsv(self.path / "categories.tsv"):
            self._categories[name].add(cat)

    @classmethod
    def open(cls, corpora: Path | None = None) -> WikispeediaCorpus:
        """From a corpora folder (default :func:`focuseval.corpora.corpora_dir`) or the folder itself."""
        base = corpora or corpora_dir()
        if base is None:
            raise FileNotFoundError("no corpora folder: set FOCUSCRAWL_CORPORA or pass --corpora")
        base = Path(base)
        return cls(base if (base / "links.tsv").is_file() else base / "wikispeedia")

    @cached_property
    def titles(self) -> list[str]:
        """Article names (URL-encoded, as in the corpus), sorted."""
        return sorted(self.texts)

    def categories(self, name: str) -> set[str]:
        return set(self._categories.get(name, ()))

    def in_category(self, name: str, category: str) -> bool:
        """``category`` or one of its sub-categories (dotted-path prefix)."""
        return any(
            c == category or c.startswith(category + ".") for c in self._categories.get(name, ())
        )

    def members(self, category: str) -> set[str]:
        return {n for n in self.texts if self.in_category(n, category)}

    def all_categories(self) -> set[str]:
        return {c for cats in self._categories.values() for c in cats}

    @cached_property
    def in_links(self) -> dict[str, list[str]]:
        rev: dict[str, list[str]] = defaultdict(list)
        for src, dsts in self.links.items():
            for dst in dsts:
                rev[dst].append(src)
        return rev

    def reachable(self, start: list[str]) -> set[str]:
        seen = set(start)
        stack = list(start)
        while stack:
            for nxt in self.links.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    # --- rendering ---------------------------------------------------------------------
    def paragraphs(self, name: str) -> list[str]:
        """The article's paragraphs, banner, title line and license footer removed."""
        text = self.texts[name]
        text = text.split("\n   Retrieved from ", 1)[0]
        paras = []
        for block in re.split(r"\n\s*\n", text):
            para = " ".join(line.strip() for line in block.strip().splitlines())
            if (
                not para
                or para == "#copyright"
                or para.startswith("2007 Schools Wikipedia Selection")
            ):
                continue
            paras.append(para)
        if paras and paras[0] == title_of(name):
            paras = paras[1:]
        return paras

    def article_html(self, name: str, href) -> str:  # type: ignore[no-untyped-def]
        """The article itself (title, paragraphs with their anchors, "See also"), as
        :meth:`render` puts it in its ``<article>``; ``href(name)`` makes the links."""
        body, unplaced = _linked_body(self.paragraphs(name), self.links.get(name, []), href)
        see_also = "".join(
            f'<li><a href="{escape(href(n))}">{escape(title_of(n))}</a></li>' for n in unplaced
        )
        see_also_html = f'<h2>See also</h2><ul class="see-also">{see_also}</ul>' if unplaced else ""
        return f"<h1>{escape(title_of(name))}</h1>{body}{see_also_html}"

    def render(self, name: str, url_for: callable | None = None) -> bytes:  # type: ignore[valid-type]
        """The article as a wiki-like HTML page. ``url_for(name)`` makes hrefs (default ``/wiki/name``)."""
        href = url_for or (lambda n: f"/wiki/{n}")
        title = title_of(name)
        rng = random.Random(zlib.crc32(name.encode()))
        names = self.titles
        related = set(self.links.get(name, ())) | {name}
        side = [n for n in rng.sample(names, SIDEBAR_LINKS * 2) if n not in related][:SIDEBAR_LINKS]
        sidebar = "".join(
            f'<li><a href="{escape(href(n))}">{escape(title_of(n))}</a></li>' for n in side
        )
        random_article = rng.choice(names)
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>{escape(title)} - Schools Wiki</title></head><body>"
            '<header><div class="logo">Schools Wiki</div><nav><a href="/">Main page</a> | '
            f'<a href="{escape(href(random_article))}">Random article</a> | <a href="/about.html">About</a> | '
            '<a href="/help.html">Help</a></nav><form class="search"><input name="q"></form></header>'
            f'<div class="layout"><main><article>{self.article_html(name, href)}</article></main>'
            f'<aside class="sidebar"><h3>Other articles</h3><ul>{sidebar}</ul></aside></div>'
            "<footer><p>This page was last modified in 2007. Text is available under the terms "
            "of its licence. Privacy policy. About Schools Wiki. Disclaimers.</p></footer>"
            "</body></html>"
        ).encode()


def _is_heading(para: str) -> bool:
    return (
        len(para) < 60 and not para.endswith((".", ":", ";", ",", ")")) and len(para.split()) <= 6
    )


def _find_word(text: str, needle: str, taken: list[tuple[int, int, str]]) -> int:
    """First whole-word occurrence of ``needle`` in ``text`` not overlapping ``taken``; -1 if none."""
    pos = text.find(needle)
    while pos >= 0:
        end = pos + len(needle)
        whole = (pos == 0 or not text[pos - 1].isalnum()) and (
            end == len(text) or not text[end].isalnum()
        )
        if whole and all(end <= s or pos >= e for s, e, _ in taken):
            return pos
        pos = text.find(needle, pos + 1)
    return -1


def _linked_body(paras: list[str], targets: list[str], href) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """Paragraph HTML with each target anchored at its title's first occurrence; the rest unplaced."""
    spans: list[list[tuple[int, int, str]]] = [[] for _ in paras]
    lowered = [p.lower() for p in paras]
    placed: set[str] = set()
    # str.find per title (C speed), longest titles first, first whole-word occurrence wins.
    for target in sorted(targets, key=lambda t: -len(t)):
        needle = title_of(target).lower()
        for i, low in enumerate(lowered):
            pos = _find_word(low, needle, spans[i])
            if pos >= 0:
                spans[i].append((pos, pos + len(needle), target))
                placed.add(target)
                break
    unplaced = [t for t in targets if t not in placed]
    out = []
    for para, para_spans in zip(paras, spans, strict=True):
        pos, parts = 0, []
        for s, e, target in sorted(para_spans):
            parts.append(escape(para[pos:s]))
            parts.append(f'<a href="{escape(href(target))}">{escape(para[s:e])}</a>')
            pos = e
        parts.append(escape(para[pos:]))
        html = "".join(parts)
        tag = "h2" if _is_heading(para) and not para_spans else "p"
        out.append(f"<{tag}>{html}</{tag}>")
    return "\n".join(out), sorted(unplaced)


class WikispeediaSite:
    """The corpus as a :class:`~focuseval.site.Site`; pages rendered once, on first request."""

    def __init__(self, corpus: WikispeediaCorpus, hosts: list[str], port: int) -> None:
        self.corpus = corpus
        self.hosts = list(hosts)
        self.port = port
        self.seeds: dict[str, list[str]] = {}
        self._by_title = {unquote(n): n for n in corpus.texts}
        self._cache: dict[str, Resource] = {}

    def host_of(self, name: str) -> str:
        return self.hosts[zlib.crc32(name.encode()) % len(self.hosts)]

    def url_for(self, name: str) -> str:
        return f"http://{self.host_of(name)}:{self.port}/wiki/{name}"

    def get(self, host: str, path: str) -> Resource | None:
        if path == "/":
            return self._home(host)
        if path in STATIC_PAGES:
            title, text = STATIC_PAGES[path]
            body = f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
            return Resource(body.encode())
        if not path.startswith("/wiki/"):
            return None
        name = self._by_title.get(unquote(path[len("/wiki/") :]))
        if name is None or self.host_of(name) != host:
            return None
        res = self._cache.get(name)
        if res is None:
            res = self._cache[name] = Resource(self.corpus.render(name, self.url_for))
        return res

    def _home(self, host: str) -> Resource:
        key = f"/home/{host}"
        if key not in self._cache:
            mine = [n for n in self.corpus.titles if self.host_of(n) == host]
            picks = random.Random(host).sample(mine, min(10, len(mine)))
            items = "".join(
                f'<li><a href="{escape(self.url_for(n))}">{escape(title_of(n))}</a></li>'
                for n in picks
            )
            body = f"<!doctype html><html><head><title>Schools Wiki</title></head><body><h1>Schools Wiki</h1><ul>{items}</ul></body></html>"
            self._cache[key] = Resource(body.encode())
        return self._cache[key]

    def robots(self, host: str) -> str:
        return ROBOTS
