"""Offline crawl simulation: the spider's own decisions (the policy's page judge and
:class:`CrawlPolicy`, the page partition, the frontier) run in-process over a :class:`Site`, without HTTP or Scrapy.

A thousand Wikispeedia pages take seconds instead of minutes, which makes parameter studies
possible (``bench/bench_strategies.py``); ``focuscrawl eval`` then confirms the chosen settings
with real crawls. It fetches in exactly best-first order, with no concurrency: real crawls
differ a little because several requests are in flight at once.

Like the partition middleware, it marks template links (a target on most pages of its host seen
so far) with :class:`~focuscrawl.blocks.TemplateLinks` at the middleware's defaults, on a copy
of the page's links, so that callers may cache :func:`partition`'s pages between crawls.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from urllib.parse import urlsplit

from focuscrawl.blocks import Page, TemplateLinks, partition
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import Judgement
from focuscrawl.strategy.policy import CrawlPolicy
from focuscrawl.strategy.scoring import SEED_SCORE
from focuseval.metrics import CrawlMetrics, CrawlRecord, evaluate
from focuseval.site import Site
from focuseval.topics import EvalTopic


def _fp(url: str) -> bytes:
    return hashlib.sha1(url.encode()).digest()


def _own_links(page: Page) -> Page:
    """A shallow copy of ``page`` whose links can be marked without touching ``page``."""
    return dataclasses.replace(page, links=[dataclasses.replace(lk) for lk in page.links])


def simulate(
    site: Site,
    topic: EvalTopic,
    policy: CrawlPolicy,
    pages: int,
    template_links: bool = True,
    judge: Callable[[CrawlPolicy, Page, RequestState], Judgement] | None = None,
    before_pop: Callable[[list[CrawlRecord], MemoryFrontier], None] | None = None,
) -> list[CrawlRecord]:
    """Crawl ``site`` from the topic's seeds for ``pages`` fetches; returns the fetch log.
    ``judge`` replaces :func:`judge_page` (a bench's own judgement: labels, say), and
    ``before_pop(log, frontier)`` runs before every pop (to push requests of its own)."""
    judge = judge or judge_page
    templates = TemplateLinks() if template_links else None
    frontier = MemoryFrontier()
    frontier.open()
    for url in topic.seeds:
        seed = RequestState(seed=True, score=SEED_SCORE)
        frontier.push(url, SEED_SCORE, _fp(url), seed.to_wire())
    log: list[CrawlRecord] = []
    while len(log) < pages:
        if before_pop is not None:
            before_pop(log, frontier)
        entry = frontier.pop()
        if entry is None:
            break
        parts = urlsplit(entry.url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        resource = site.get(parts.hostname or "", path)
        status = resource.status if resource is not None else 404
        log.append(CrawlRecord(entry.url, status))
        if resource is None or status != 200 or "html" not in resource.content_type:
            continue
        page = partition(resource.body, entry.url)
        if page.error:
            continue
        if templates is not None:
            page = _own_links(page)
            templates.mark(page)
        state = RequestState.from_wire(entry.data)  # the frontier stores the wire form
        judgement = judge(policy, page, state)
        for url, score, child in policy.links(page, entry.url, state, judgement):
            frontier.push(url, score, _fp(url), child.to_wire())
    return log


def judge_page(policy: CrawlPolicy, page: Page, state: RequestState) -> Judgement:
    """As the topical spider's ``judge_page``: the policy's page judge judges the page, then
    the policy learns from the judgement."""
    judgement = policy.page_judge.judge(page, seed=state.seed, example=state.example)
    policy.learn(page, state, judgement)
    return judgement


def simulate_metrics(
    site: Site,
    topic: EvalTopic,
    make_policy: Callable[[EvalTopic], CrawlPolicy],
    pages: int,
) -> CrawlMetrics:
    return evaluate(simulate(site, topic, make_policy(topic), pages), topic.labels)
