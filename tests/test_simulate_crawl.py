"""The offline simulator runs the crawl's own decisions, template-link marking included."""

from __future__ import annotations

import functools

import pytest
from focuseval import simulate as sim
from focuseval.metrics import Labels
from focuseval.site import Resource
from focuseval.topics import EvalTopic

from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.judge import PageJudge
from focuscrawl.strategy.policy import CrawlPolicy

HOST = "web.test"
N = 8


class TinySite:
    """N bird pages in a chain; every page also links to /menu (a template link)."""

    def get(self, host: str, path: str) -> Resource | None:
        if host != HOST:
            return None
        if path == "/menu":
            return Resource(b"<html><body><p>menu page about nothing</p></body></html>")
        i = int(path.strip("/p") or 0)
        if not 0 <= i < N:
            return None
        nxt = f'<a href="/p{i + 1}">bird {i + 1}</a>' if i + 1 < N else ""
        body = (
            f"<html><body><p>bird songs and bird nests, page {i}. {nxt}</p>"
            f'<p>see <a href="/menu">menu</a></p></body></html>'
        )
        return Resource(body.encode())

    def robots(self, host: str) -> str:
        return ""


@pytest.fixture
def cached_partition(monkeypatch: pytest.MonkeyPatch) -> functools._lru_cache_wrapper:
    cached = functools.lru_cache(maxsize=None)(sim.partition)
    monkeypatch.setattr(sim, "partition", cached)
    return cached


def test_simulator_marks_template_links_without_touching_cached_pages(
    cached_partition: functools._lru_cache_wrapper,
) -> None:
    urls = [f"http://{HOST}/p{i}" for i in range(N)]
    topic = EvalTopic("birds", ["bird"], [urls[0]], Labels.from_urls(urls), "test")
    policy = CrawlPolicy(
        PageJudge(CosineModel(["bird"]), auto_threshold=0.35), "sharksearch-blocks"
    )
    seen_template: list[bool] = []
    links = policy.links

    def record(page, url, state, judgement):  # type: ignore[no-untyped-def]
        seen_template.extend(lk.template for lk in page.links if lk.url.endswith("/menu"))
        return links(page, url, state, judgement)

    policy.links = record  # type: ignore[method-assign]
    log = sim.simulate(TinySite(), topic, policy, pages=20)
    assert {r.url for r in log} >= set(urls)  # the chain is crawled to its end
    assert any(seen_template)  # /menu is on every page of the host: marked once 5 pages are seen
    assert not seen_template[0]
    # the cached pages themselves were not marked: the next simulation starts clean
    assert cached_partition.cache_info().currsize > 0
    page = cached_partition(TinySite().get(HOST, "/p6").body, urls[6])  # type: ignore[union-attr]
    assert not any(lk.template for lk in page.links)
