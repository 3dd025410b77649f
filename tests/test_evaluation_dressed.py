"""The dressed web: Wikispeedia articles in real sites' chrome (needs ../shared/corpora)."""

from __future__ import annotations

import json
import re
import tarfile
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from focuseval.corpora import default_cache_dir
from focuseval.dressed import DressedSite, top_category
from focuseval.dressed_templates import SECTIONS, choose_templates, make_template
from focuseval.site import loopback_hosts
from focuseval.testweb import DEFAULT_HOSTS, TestWebProcess
from focuseval.topics import wikispeedia_seeds, wikispeedia_topic
from focuseval.wikispeedia import WikispeediaCorpus
from lxml import etree

pytestmark = pytest.mark.corpus

BIRDS = "subject.Science.Biology.Birds"
PORT = 8123
_LISTING = re.compile(
    r'<ul class="(?:sections|listing)">.*?</ul>(?:<p class="pagination">.*?</p>)?', re.S
)
_HREF = re.compile(r'<a\b[^>]*?\shref="([^"]*)"', re.I)


@pytest.fixture(scope="module")
def corpus(corpora: Path) -> WikispeediaCorpus:
    return WikispeediaCorpus.open(corpora)


def build(corpus: WikispeediaCorpus, corpora: Path) -> DressedSite:
    hosts = loopback_hosts(DEFAULT_HOSTS["dressed"])
    return DressedSite(corpus, hosts, PORT, corpora=corpora, cache_dir=default_cache_dir())


@pytest.fixture(scope="module")
def site(corpus: WikispeediaCorpus, corpora: Path) -> DressedSite:
    return build(corpus, corpora)


def sample(site: DressedSite, k: int = 12) -> list[str]:
    """Articles on ``k`` different hosts (templates of ``k`` domains)."""
    return [site.articles_of(h)[0] for h in site.content_hosts[:: len(site.content_hosts) // k]]


def test_two_builds_give_byte_identical_pages(
    site: DressedSite, corpus: WikispeediaCorpus, corpora: Path
) -> None:
    other = build(corpus, corpora)
    assert all(site.host_of(n) == other.host_of(n) for n in corpus.titles)
    for name in sample(site):
        assert site.article_page(name) == other.article_page(name)
    for host in site.content_hosts[:4]:
        assert site.home_page(host) == other.home_page(host)
        assert site.section_page(host, 1) == other.section_page(host, 1)


def test_cached_templates_are_what_the_pages_make(site: DressedSite, corpora: Path) -> None:
    """The cache holds what the page makes again: the earliest template page of the tarball
    (read up to it only: the tarball is ground truths first, then pages by number)."""
    template = min((g[0] for g in site.templates.values()), key=lambda t: t.stem)
    found: dict[str, bytes] = {}
    with tarfile.open(corpora / "wcxb-dev" / "wcxb-dev.tar.xz", "r:xz") as tar:
        for member in tar:
            name = member.name.rsplit("/", 1)[-1]
            if name in (f"{template.stem}.json", f"{template.stem}.html"):
                found[name.rsplit(".", 1)[-1]] = tar.extractfile(member).read()  # type: ignore[union-attr]
                if len(found) == 2:
                    break
    truth = json.loads(found["json"])
    gold = truth["ground_truth"]["main_content"]
    fresh = make_template(template.stem, found["html"], gold, truth["url"], template.kind)
    assert fresh == template
    assert choose_templates(2, corpora, default_cache_dir()) == [
        site.templates[h] for h in site.content_hosts[:2]
    ]


def test_64_hosts_half_topical_every_article_on_one_host(
    site: DressedSite, corpus: WikispeediaCorpus
) -> None:
    assert len(site.content_hosts) >= 64 and site.external_host not in site.content_hosts
    topical = [h for h in site.content_hosts if site.topics[h]]
    assert len(topical) == len(site.content_hosts) // 2
    assert all(1 <= len(site.topics[h]) <= 2 for h in topical)
    placed = [n for h in site.content_hosts for n in site.articles_of(h)]
    assert sorted(placed) == corpus.titles  # each article on exactly one host
    domains = [site.templates[h][0].domain for h in site.content_hosts]
    assert len(set(domains)) == len(domains)  # one template site per host
    for host in topical:
        tops = Counter(top_category(corpus, n) for n in site.articles_of(host))
        assert sum(tops[c] for c in site.topics[host]) >= 0.8 * sum(tops.values())
    for host in site.content_hosts[len(topical) :]:
        assert len({top_category(corpus, n) for n in site.articles_of(host)}) >= 5


def test_article_page_keeps_the_chrome_and_holds_the_whole_article(
    site: DressedSite, corpus: WikispeediaCorpus
) -> None:
    html = site.article_page("Bird").decode()
    assert corpus.article_html("Bird", site.url_for) in html  # the whole article, links and all
    assert html.count("<h1>Bird</h1>") == 1 and "<title>Bird | " in html
    hrefs = _HREF.findall(html)
    chrome = [h for h in hrefs if "/wiki/" not in h and not h.startswith("#")]
    assert len(chrome) >= 20
    assert any(h.startswith("/section/") for h in chrome)  # the template's navigation, rewired
    for name in sample(site):
        page = site.article_page(name).decode()
        root = etree.fromstring(page, etree.HTMLParser())
        assert not root.xpath("//script|//iframe|//link|//base")
        for el in root.iter(etree.Element):
            for attr, value in el.attrib.items():
                assert not attr.lower().startswith("on"), (name, attr)
                if "://" in value:  # an address outside the test web would be fetched
                    assert urlsplit(value).hostname in site.hosts, (name, value)


def test_chrome_links_go_to_section_pages_or_the_404_host(site: DressedSite) -> None:
    for name in sample(site):
        url = site.url_for(name)
        host = urlsplit(url).hostname
        for href in _HREF.findall(site.article_page(name).decode()):
            if not href or href.startswith("#"):
                continue
            target = urlsplit(urljoin(url, href.replace("&amp;", "&")))
            if target.path.startswith("/wiki/"):  # the article's own link, on its host
                assert target.geturl() == site.url_for(target.path[len("/wiki/") :]), href
                continue
            res = site.get(target.hostname or "", target.path)
            if target.hostname == host:
                assert target.path == "/" or target.path.startswith("/section/"), href
                assert res is not None and res.status == 200, href
            else:
                assert target.hostname == site.external_host and res is None, href


def test_every_article_is_reachable_from_the_home_pages(
    site: DressedSite, corpus: WikispeediaCorpus
) -> None:
    seen: set[str] = set()
    articles: set[str] = set()
    todo = [f"http://{h}:{PORT}/" for h in site.content_hosts]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        parts = urlsplit(url)
        res = site.get(parts.hostname or "", parts.path)
        assert res is not None, url
        listing = _LISTING.search(res.body.decode())  # the chrome leads to sections only
        assert listing is not None, url
        for href in _HREF.findall(listing.group(0)):
            target = urljoin(url, href)
            if urlsplit(target).path.startswith("/wiki/"):
                articles.add(target)
            else:
                assert target.startswith(f"http://{parts.hostname}:{PORT}/section/"), target
                todo.append(target)
    assert articles == {site.url_for(n) for n in corpus.titles}
    assert len(seen) > len(site.content_hosts) * SECTIONS  # long sections are paginated
    assert site.get(site.content_hosts[0], f"/section/{SECTIONS + 1}") is None


def test_topics_work_on_the_dressed_site(site: DressedSite, corpus: WikispeediaCorpus) -> None:
    topic = wikispeedia_topic(corpus, site, BIRDS)
    assert topic.seeds == [site.url_for(n) for n in wikispeedia_seeds(corpus, BIRDS)]
    assert len(topic.labels.relevant) == len(corpus.members(BIRDS)) == 161
    assert all(urlsplit(u).hostname in site.content_hosts for u in topic.labels.relevant)
    assert topic.labels.targets <= topic.labels.relevant


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_served_over_loopback(corpora: Path) -> None:
    with TestWebProcess("dressed", corpora=corpora, hosts=9) as web:
        assert len(web.hosts) == 9
        external = web.hosts[-1]
        home = f"http://{web.hosts[0]}:{web.port}/"
        status, body = fetch(home)
        assert status == 200 and b'href="/section/1"' in body
        status, body = fetch(urljoin(home, "/section/1"))
        assert status == 200
        article = next(h for h in _HREF.findall(body.decode()) if "/wiki/" in h)
        status, body = fetch(article)
        assert status == 200 and b"<article><h1>" in body and b"<script" not in body
        assert fetch(f"http://{external}:{web.port}/")[0] == 404
        assert fetch(f"http://{external}:{web.port}/twitter.com/x")[0] == 404
        assert b"User-agent" in fetch(urljoin(home, "/robots.txt"))[1]
