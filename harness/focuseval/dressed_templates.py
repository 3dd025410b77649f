"""Real sites' pages (WCXB dev) made into templates for the dressed web (:mod:`focuseval.dressed`).

A template is one real page with its chrome kept (navigation, headers, footers, sidebars,
widgets) and three holes: the title, the main content and the address of the external host.
Making one (:func:`make_template`):

1. parse the page; drop scripts, ``noscript``, frames, objects, ``<link>`` and ``<base>``,
   refresh metas, comments, event-handler attributes and every attribute that would make a
   browser fetch something (``src``, ``srcset``, ``action``, ``url(…)`` in styles, any value
   holding ``://``): the page asks for nothing outside the test web;
2. find the main content: the element with the best Dice overlap between its words and the
   gold main text's words (one pass up the tree with sums: linear in the page), climbed to a
   block container; its children become the main hole;
3. rewire every link left (the chrome's): a link to the template's own site goes to ``/`` (its
   root) or ``/section/<n>`` (``n`` from a CRC-32 of the link's path, so one link goes to one
   section on every page of its host); a link elsewhere (another site, ``mailto:``, …) goes to
   the external host, which answers 404; in-page ``#`` links stay. Anchor texts are kept.

A page is a usable template when the element found holds its gold text (token F1 at least
:data:`MIN_MAIN_F1`), is not the whole body, and the chrome keeps at least
:data:`MIN_CHROME_LINKS` links. Templates are chosen by domain, domains in the order of their
SHA-1 (stable everywhere), and cached as JSON under the cache folder, keyed by the corpus file
and this module's code: a build from the cache takes a fraction of a second.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from lxml import etree

from focuseval.extraction import WCXB, Case, domain_of, token_f1, wcxb_dev

TITLE_HOLE = "FOCUSEVAL-DRESSED-TITLE"
MAIN_HOLE = "FOCUSEVAL-DRESSED-MAIN"
EXTERNAL_HOLE = "http://FOCUSEVAL-DRESSED-EXTERNAL"
SECTIONS = 8
MIN_MAIN_F1 = 0.7
MIN_CHROME_LINKS = 20
MAX_CHROME_LINKS = 800
MAX_TEMPLATE_CHARS = 400_000
MAX_PAGES_PER_DOMAIN = 3

# Rules as data: what goes, what a link resolves against.
DROP_TAGS = (
    "script",
    "noscript",
    "template",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "link",
    "base",
    "portal",
)
DROP_HTTP_EQUIV = frozenset({"refresh", "content-type", "content-security-policy"})
URL_ATTRS = frozenset(
    [
        "src",
        "srcset",
        "data-src",
        "data-srcset",
        "data-lazy-src",
        "data-original",
        "poster",
        "background",
        "action",
        "formaction",
        "data",
        "ping",
        "longdesc",
        "lowsrc",
        "manifest",
        "codebase",
        "archive",
    ]
)
# Where an article fits: a block container (a <p> or <span> cannot hold <h1> and paragraphs).
CONTAINERS = frozenset(
    [
        "div",
        "main",
        "article",
        "section",
        "td",
        "th",
        "dd",
        "li",
        "blockquote",
        "center",
        "form",
        "fieldset",
        "figure",
        "aside",
    ]
)
_WORD = re.compile(r"\w+")
_CSS_URL = re.compile(r"url\([^)]*\)|@import[^;]*;?", re.I)
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or"})


@dataclass(frozen=True, slots=True)
class Template:
    """One real page with holes: ``html`` holds :data:`TITLE_HOLE`, :data:`MAIN_HOLE` (once
    each) and :data:`EXTERNAL_HOLE` (the external host's origin, in rewired links)."""

    stem: str  # WCXB file id
    domain: str
    kind: str  # WCXB page type
    url: str
    html: str
    chrome_links: int  # links kept outside the main content (all rewired)
    main_f1: float  # token F1 of the element replaced against the gold main text


def site_key(host: str) -> str:
    """The registrable part of a host name, roughly (``developer.mozilla.org`` → ``mozilla.org``)."""
    labels = host.lower().strip(".").split(".")
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def section_path(url: str) -> str:
    """Where a link to the template's own site goes: its root, or one of :data:`SECTIONS`."""
    parts = urlsplit(url)
    if parts.path in ("", "/") and not parts.query:
        return "/"
    n = zlib.crc32(f"{parts.path}?{parts.query}".encode()) % SECTIONS + 1
    return f"/section/{n}"


def external_url(url: str) -> str:
    """A link elsewhere, on the external host: its own host and path kept as the path."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        tail = f"{parts.hostname}{parts.path or '/'}"
    else:
        tail = f"{parts.scheme or 'link'}/{zlib.crc32(url.encode()):08x}"
    return f"{EXTERNAL_HOLE}/{quote(tail[:160], safe='/-._~')}"


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _clean(root: etree._Element) -> None:
    """Drop what runs or fetches; keep the rest of the page as it was."""
    etree.strip_elements(root, *DROP_TAGS, with_tail=False)
    for meta in list(root.iter("meta")):
        equiv = (meta.get("http-equiv") or "").lower()
        if meta.get("charset") is not None or equiv in DROP_HTTP_EQUIV:
            meta.getparent().remove(meta)  # type: ignore[union-attr]
    for el in root.iter(etree.Element):
        tag = el.tag if isinstance(el.tag, str) else ""
        for name, value in list(el.attrib.items()):
            low = name.lower()
            if low.startswith("on") or low in URL_ATTRS or "://" in value or "javascript:" in value:
                if not (low == "href" and tag in ("a", "area")):
                    del el.attrib[name]
            elif low == "style" and "url(" in value.lower():
                el.set(name, _CSS_URL.sub("none", value))
            elif (
                low in ("href", "xlink:href")
                and tag not in ("a", "area")
                and not value.startswith("#")
            ):
                del el.attrib[name]
        if tag == "style" and el.text:
            el.text = _CSS_URL.sub("none", el.text)


def _find_main(root: etree._Element, gold: str) -> etree._Element | None:
    """The element whose words best overlap the gold's (Dice), climbed to a container."""
    want = Counter(_WORD.findall(gold.lower()))
    size = sum(want.values())
    if not size:
        return None
    elems = [el for el in root.iter() if isinstance(el.tag, str)]
    index = {el: i for i, el in enumerate(elems)}
    total = [0] * len(elems)
    hits = [0] * len(elems)
    for i, el in enumerate(elems):
        texts = [el.text or ""] + [child.tail or "" for child in el if isinstance(child.tag, str)]
        for text in texts:
            words = _WORD.findall(text.lower())
            total[i] += len(words)
            hits[i] += sum(1 for w in words if w in want)
    parent = [index.get(el.getparent(), -1) for el in elems]  # type: ignore[arg-type]
    for i in range(len(elems) - 1, 0, -1):  # children come after their parent
        if parent[i] >= 0:
            total[parent[i]] += total[i]
            hits[parent[i]] += hits[i]
    best, best_score = -1, 0.0
    for i in range(len(elems)):
        score = 2 * min(hits[i], size) / (total[i] + size) if total[i] else 0.0
        if score > best_score:  # document order: an ancestor wins a tie, a child must beat it
            best, best_score = i, score
    if best < 0:
        return None
    el = elems[best]
    while el is not None and el.tag not in CONTAINERS and el.tag not in ("body", "html"):
        el = el.getparent()
    return el


def _rewire(root: etree._Element, page_url: str) -> int:
    """Every link left goes to a section of the host or the external host; returns how many."""
    own = site_key(urlsplit(page_url).hostname or "")
    count = 0
    for a in root.iter("a", "area"):
        href = (a.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        try:
            target = urljoin(page_url, href)
        except ValueError:
            target = href
        parts = urlsplit(target)
        host = parts.hostname or "" if parts.scheme in ("http", "https") else ""
        inside = bool(host) and site_key(host) == own
        a.set("href", section_path(target) if inside else external_url(target))
        count += 1
    return count


def make_template(stem: str, raw: bytes, gold: str, url: str, kind: str = "") -> Template | None:
    """The page as a :class:`Template`, or ``None`` when it does not make a usable one."""
    try:
        root = etree.fromstring(
            _decode(raw), etree.HTMLParser(remove_comments=True, remove_pis=True)
        )
    except (etree.ParserError, ValueError):
        return None
    if root is None or root.find("body") is None:
        return None
    _clean(root)
    main = _find_main(root, gold)
    if main is None or main.tag in ("body", "html"):
        return None
    main_f1 = token_f1(" ".join(main.itertext()), gold)
    if main_f1 < MIN_MAIN_F1:
        return None
    for child in list(main):
        main.remove(child)
    main.text = MAIN_HOLE
    chrome = _rewire(root, url)
    if not MIN_CHROME_LINKS <= chrome <= MAX_CHROME_LINKS:
        return None
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    for old in head.findall("title"):
        head.remove(old)
    title = etree.Element("title")
    title.text = TITLE_HOLE
    head.insert(0, title)
    meta = etree.Element("meta", charset="utf-8")
    head.insert(0, meta)
    html = "<!doctype html>\n" + etree.tostring(root, method="html", encoding="unicode")
    if len(html) > MAX_TEMPLATE_CHARS or html.count(MAIN_HOLE) != 1:
        return None
    return Template(stem, domain_of(url), kind, url, html, chrome, round(main_f1, 4))


# --- choosing templates, with a cache ---------------------------------------------------------
def _domain_order(cases: list[Case]) -> list[list[Case]]:
    """The pages grouped by domain (by file id within one), domains in SHA-1 order."""
    by_domain: dict[str, list[Case]] = {}
    for case in cases:
        domain = domain_of(case.url)
        if domain:
            by_domain.setdefault(domain, []).append(case)
    return [
        by_domain[d] for d in sorted(by_domain, key=lambda d: hashlib.sha1(d.encode()).digest())
    ]


def _cache_key(tarball: Path) -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())
    st = tarball.stat()
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def choose_templates(
    n_domains: int, corpora: Path, cache_dir: Path | None = None
) -> list[list[Template]]:
    """Templates for ``n_domains`` hosts: per domain (SHA-1 order) its usable pages, at most
    :data:`MAX_PAGES_PER_DOMAIN`. Cached in ``cache_dir`` (read there first)."""
    tarball = Path(corpora) / WCXB / "wcxb-dev.tar.xz"
    if not tarball.is_file():
        raise FileNotFoundError(f"no WCXB dev split at {tarball}")
    cache = cache_dir / f"dressed-templates-{_cache_key(tarball)}.json.gz" if cache_dir else None
    if cache is not None and cache.is_file():
        data = json.loads(gzip.decompress(cache.read_bytes()))
        if len(data) >= n_domains:
            return [[Template(**t) for t in group] for group in data[:n_domains]]
    chosen: list[list[Template]] = []
    for cases in _domain_order(list(wcxb_dev(Path(corpora)))):
        group = [
            t
            for case in cases[:MAX_PAGES_PER_DOMAIN]
            if (t := make_template(case.name, case.html, case.gold, case.url, case.kind))
        ]
        if group:
            chosen.append(group)
        if len(chosen) >= n_domains:
            break
    if len(chosen) < n_domains:
        raise ValueError(f"only {len(chosen)} usable template domains, {n_domains} wanted")
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        payload = [[asdict(t) for t in group] for group in chosen]
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")  # writers may race: rename wins
        tmp.write_bytes(gzip.compress(json.dumps(payload).encode(), 3))
        tmp.replace(cache)
    return chosen
