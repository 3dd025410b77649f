"""Wikispeedia rendered as a wiki-like web (needs ../shared/corpora)."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from focuseval.topics import (
    DEV_TOPICS,
    FRESH_TOPICS,
    HELDOUT_TOPICS,
    HUB_SHARE,
    TUNED_TOPICS,
    category_keywords,
    fresh_categories,
    topic_names,
    wikispeedia_seeds,
    wikispeedia_topic,
)
from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

BIRDS = "subject.Science.Biology.Birds"
HOSTS = [f"127.0.0.{i}" for i in range(2, 10)]


@pytest.fixture(scope="module")
def corpus(corpora: Path) -> WikispeediaCorpus:
    return WikispeediaCorpus.open(corpora)


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="/wiki/([^"]+)"', html)


def test_reads_articles_links_and_categories(corpus: WikispeediaCorpus) -> None:
    assert len(corpus.titles) == 4598  # 4,604 minus 5 charity pages and the GFDL text
    assert "Bird" in corpus.titles and "Donation" not in corpus.titles
    assert BIRDS in corpus.categories("Bird")
    assert corpus.in_category("Bird", "subject.Science.Biology")
    assert not corpus.in_category(
        "Bird", "subject.Science.Bio"
    )  # a path prefix, not a string prefix
    assert len(corpus.members(BIRDS)) == 161


def test_render_strips_banner_and_license(corpus: WikispeediaCorpus) -> None:
    html = corpus.render("Bird").decode()
    assert "<h1>Bird</h1>" in html
    for leak in (
        "Related subjects",
        "Schools Wikipedia Selection",
        "GNU Free",
        "Retrieved from",
        BIRDS,
    ):
        assert leak not in html
    assert "Birds are bipedal, warm-blooded" in html


def test_every_out_link_is_rendered_once_in_text_or_see_also(corpus: WikispeediaCorpus) -> None:
    for name in ("Bird", "%C3%85land", "Albatross"):
        html = corpus.render(name).decode()
        body, _, rest = html.partition('<aside class="sidebar">')
        article = body.split("<article>")[1]
        targets = sorted(corpus.links[name])
        assert sorted(hrefs(article)) == targets
        in_text = hrefs(article.split("<h2>See also</h2>")[0])
        assert in_text, name  # most anchors sit in the text, where the title occurs
        for target in in_text:
            anchor = re.search(rf'href="/wiki/{re.escape(target)}">([^<]+)<', article).group(1)
            assert anchor.lower() == target.replace("_", " ").lower() or "%" in target
        sidebar = hrefs(rest)
        assert sidebar and not set(sidebar) & set(targets)


def test_articles_have_stable_hosts(corpus: WikispeediaCorpus) -> None:
    a, b = WikispeediaSite(corpus, HOSTS, 1), WikispeediaSite(corpus, HOSTS, 2)
    assert all(a.host_of(n) == b.host_of(n) for n in corpus.titles)
    assert {a.host_of(n) for n in corpus.titles} == set(HOSTS)
    assert a.url_for("Bird") == f"http://{a.host_of('Bird')}:1/wiki/Bird"


def test_birds_topic_rule(corpus: WikispeediaCorpus) -> None:
    assert category_keywords(BIRDS) == ["birds", "bird"]
    assert category_keywords("subject.Science.Chemistry.Chemical_elements") == [
        "chemical",
        "elements",
        "element",
    ]
    seeds = wikispeedia_seeds(corpus, BIRDS)
    members = corpus.members(BIRDS)
    assert len(seeds) == 3 and set(seeds) <= members
    for seed in seeds:
        assert not seed.startswith("List_of")
        assert len(set(corpus.links[seed]) & members) <= HUB_SHARE * len(members)
    topic = wikispeedia_topic(corpus, lambda n: f"http://h/wiki/{n}", BIRDS)
    assert len(topic.labels.relevant) == 161
    assert 0 < len(topic.labels.targets) <= 161 and topic.labels.targets <= topic.labels.relevant
    with pytest.raises(ValueError, match="no Wikispeedia article"):
        wikispeedia_seeds(corpus, "subject.No_such_category")


def test_fresh_topics_are_the_rule_s_draw(corpus: WikispeediaCorpus) -> None:
    """The second held-out set is what its stated rule draws, and shares no category (nor an
    ancestor or descendant of one) with the topics anything was tuned or chosen on."""
    assert fresh_categories(corpus) == list(FRESH_TOPICS.values())
    used = [*TUNED_TOPICS.values(), *DEV_TOPICS.values(), *HELDOUT_TOPICS.values()]
    for category in FRESH_TOPICS.values():
        for other in used:
            assert not (category + ".").startswith(other + ".")
            assert not (other + ".").startswith(category + ".")
    sizes = [len(corpus.members(c)) for c in FRESH_TOPICS.values()]
    assert sizes == sorted(sizes, reverse=True)
    assert topic_names("fresh,Birds") == [*FRESH_TOPICS, "Birds"]


def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_served_with_validators_on_its_host(
    testweb_wikispeedia: Any, corpus: WikispeediaCorpus
) -> None:
    site = WikispeediaSite(corpus, testweb_wikispeedia.hosts, testweb_wikispeedia.port)
    url = site.url_for("%C3%85land")
    status, headers, body = fetch(url)
    assert status == 200 and "<h1>Åland</h1>" in body.decode()
    assert fetch(url, **{"If-None-Match": headers["ETag"]})[0] == 304
    assert fetch(url, **{"If-Modified-Since": headers["Last-Modified"]})[0] == 304
    other = next(h for h in testweb_wikispeedia.hosts if h != site.host_of("%C3%85land"))
    assert fetch(f"http://{other}:{testweb_wikispeedia.port}/wiki/%C3%85land")[0] == 404
    assert b"User-agent" in fetch(f"http://{other}:{testweb_wikispeedia.port}/robots.txt")[2]
