"""The synthetic topical web: deterministic, topical locality, a tunnel-only region, noise."""

from __future__ import annotations

from collections import Counter

import pytest
from focuseval.site import Site
from focuseval.synthetic import SyntheticWeb
from focuseval.synthetic_vocab import TOPICS

HOSTS = [f"127.0.0.{i}" for i in range(2, 6)]


@pytest.fixture(scope="module")
def web() -> SyntheticWeb:
    return SyntheticWeb(HOSTS, port=8123, seed=11, n_pages=800)


def test_is_a_site(web: SyntheticWeb) -> None:
    assert isinstance(web, Site)
    assert web.robots(HOSTS[0]).startswith("User-agent: *")


def test_same_seed_same_web_other_seed_other_web(web: SyntheticWeb) -> None:
    again = SyntheticWeb(HOSTS, port=8123, seed=11, n_pages=800)
    assert [p.path for p in again.pages] == [p.path for p in web.pages]
    for page in web.pages[:50]:
        assert again.get(page.host, page.path).body == web.get(page.host, page.path).body
    other = SyntheticWeb(HOSTS, port=8123, seed=12, n_pages=800)
    assert [p.path for p in other.pages] != [p.path for p in web.pages]


def test_pages_are_spread_over_hosts_and_served_only_on_their_host(web: SyntheticWeb) -> None:
    per_host = Counter(p.host for p in web.pages)
    assert set(per_host) == set(HOSTS)
    page = web.pages[0]
    assert web.get(page.host, page.path) is not None
    assert all(web.get(h, page.path) is None for h in HOSTS if h != page.host)


def test_topical_locality(web: SyntheticWeb) -> None:
    same = total = 0
    for page in web.pages:
        if page.topic is None:
            continue
        for target in page.links:
            total += 1
            same += web.pages[target].topic == page.topic
    topics = Counter(p.topic for p in web.pages if p.topic is not None)
    base_rate = max(topics.values()) / len(web.pages)
    assert same / total > 0.6 > 3 * base_rate


def test_back_cluster_is_reached_only_through_irrelevant_bridges(web: SyntheticWeb) -> None:
    for page in web.pages:
        for target in page.links:
            t = web.pages[target]
            if t.cluster == 1 and t.topic != page.topic:
                assert page.topic is None and page.bridge_for == t.topic
    # ... and yet every page of the topic is a recall target, reachable from the seeds.
    for topic in TOPICS:
        assert web.relevant_urls(topic) == {web.url(p) for p in web.pages if p.topic == topic}


def test_topic_comes_from_content_not_a_label(web: SyntheticWeb) -> None:
    page = next(p for p in web.pages if p.topic == "birds" and not p.hub)
    html = web.get(page.host, page.path).body.decode()
    assert 'class="sidebar"' in html and "Sponsored" in html and "<footer>" in html
    words = Counter(html.lower().split())
    birds = sum(words[w] for w in TOPICS["birds"]["words"])
    other = max(sum(words[w] for w in TOPICS[t]["words"]) for t in TOPICS if t != "birds")
    assert birds > 2 * other


def test_seeds_are_topic_pages_and_not_hubs(web: SyntheticWeb) -> None:
    for topic, seeds in web.seeds.items():
        assert len(seeds) == 3
        for url in seeds:
            page = next(p for p in web.pages if web.url(p) == url)
            assert page.topic == topic and not page.hub and page.cluster == 0
            assert web.topic_of(url) == topic
