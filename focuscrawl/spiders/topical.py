"""``scrapy crawl topical -a topic=...``: the focused crawl.

The spider is an adapter: the page comes parsed from the partition middleware, the relevance
model and the link scorer are plain objects; the spider turns their answers into an item, a
crawl-log record and scored requests.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from focuscrawl.blocks import Page, partition
from focuscrawl.frontier.linkmemory import LinkMemory
from focuscrawl.frontier.scoring import SEED_SCORE, LinkScorer, ParentState, SharkParams
from focuscrawl.frontier.urls import TrapLimits, clean_url
from focuscrawl.items import PageItem
from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.loading import load_model
from focuscrawl.signals import page_fetched, request_done
from focuscrawl.topic import Topic, load_topic

logger = logging.getLogger(__name__)

PAGE_META = "focuscrawl_page"  # set by focuscrawl.middlewares.partition.PartitionMiddleware


class TopicalSpider(Spider):
    name = "topical"

    def __init__(
        self,
        topic: str | None = None,
        seeds: str | None = None,
        strategy: str | None = None,
        model: str | None = None,
        mode: str = "crawl",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.topic: Topic = load_topic(topic, seeds)
        self.strategy_arg = strategy
        self.model_arg = model
        self.mode = mode
        self.seq = 0
        self.relevant_count = 0
        self.link_memory = LinkMemory()

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TopicalSpider:
        spider: TopicalSpider = super().from_crawler(crawler, *args, **kwargs)
        # add-on settings are applied after the spider is built: read them when it opens
        crawler.signals.connect(spider.setup, signals.spider_opened)
        return spider

    def setup(self, spider: Spider) -> None:
        spider = self
        s = self.crawler.settings
        spider.model = load_model(
            spider.model_arg or s.get("FOCUSCRAWL_MODEL"),
            spider.topic,
            threshold=s.getfloat("FOCUSCRAWL_RELEVANCE_THRESHOLD"),
        )
        spider.link_scorer = LinkScorer(
            spider.strategy_arg or s.get("FOCUSCRAWL_STRATEGY"),
            spider.model.score_text,
            spider.model.threshold,
            SharkParams(
                delta=s.getfloat("FOCUSCRAWL_SHARK_DELTA"),
                beta=s.getfloat("FOCUSCRAWL_SHARK_BETA"),
                gamma=s.getfloat("FOCUSCRAWL_SHARK_GAMMA"),
                grey=s.getbool("FOCUSCRAWL_TUNNEL_GREY"),
                black=s.getbool("FOCUSCRAWL_TUNNEL_BLACK"),
                tunnel_max_depth=s.getint("FOCUSCRAWL_TUNNEL_MAX_DEPTH"),
            ),
        )
        spider.trap_limits = TrapLimits(
            max_length=s.getint("FOCUSCRAWL_MAX_URL_LENGTH"),
            max_path_depth=s.getint("FOCUSCRAWL_MAX_PATH_DEPTH"),
            max_repeated_segments=s.getint("FOCUSCRAWL_MAX_REPEATED_SEGMENTS"),
        )

    model: PageScorer
    link_scorer: LinkScorer
    trap_limits: TrapLimits

    # -- start ----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Request]:
        for item in self.start_requests():
            yield item

    def start_requests(self) -> Iterator[Request]:
        for url in self.topic.example_urls():
            yield self._request(url, SEED_SCORE + 1, {"d": 0, "ex": 1})
        for url in self.topic.seeds:
            yield self._request(url, SEED_SCORE, {"d": 0, "seed": 1})

    def _request(self, url: str, score: float, state: dict[str, Any]) -> Request:
        state["score"] = score
        return Request(url, errback=self.errback, meta={"focuscrawl": state})

    # -- responses ------------------------------------------------------------------------
    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | Request]:
        state = response.meta.get("focuscrawl") or {}
        page: Page | None = response.meta.get(PAGE_META)
        if page is None and isinstance(response, TextResponse):
            page = partition(response.text, response.url)  # middleware disabled
        if page is None:
            self.crawler.stats.inc_value("focuscrawl/skip/non_html")
            self._log_fetch(response.url, response.status, state, None)
            return
        if state.get("seed") or state.get("ex"):
            self.model_add_text(page)
        relevance = self.model.score_page(page)
        relevant = relevance >= self.model.threshold
        self.model.observe(page, relevance)
        seq = self._log_fetch(response.url, response.status, state, relevance, relevant)
        yield PageItem(
            url=response.url,
            title=page.title,
            relevance=round(relevance, 6),
            relevant=relevant,
            depth=int(state.get("d", 0)),
            parent=state.get("par"),
            seq=seq,
            fetched_at=time.time(),
            status=response.status,
            text=page.main_text,
            blocks=_block_counts(page),
            score=float(state.get("score", 0.0)),
            headers=_validators(response),
        )
        if state.get("ex") and not self.topic.seeds:
            return
        yield from self._follow(page, response.url, state, relevance, relevant)

    def model_add_text(self, page: Page) -> None:
        add_text = getattr(self.model, "add_text", None)
        if add_text is not None:
            add_text(f"{page.title}\n{page.main_text}")

    def _follow(
        self, page: Page, url: str, state: dict[str, Any], relevance: float, relevant: bool
    ) -> Iterator[Request]:
        parent = ParentState(
            url=url,
            depth=int(state.get("d", 0)),
            relevance=relevance,
            relevant=relevant,
            inherited=float(state.get("inh", 0.0)),
            budget=int(state.get("tb", 0)),
        )
        stats = self.crawler.stats
        memory = self.link_memory
        limits = self.trap_limits
        for link, score, child in self.link_scorer.score(page, parent):
            if link.nofollow:
                continue
            target, reason = clean_url(link.url, limits)
            if reason is not None:
                stats.inc_value(f"focuscrawl/skip/url/{reason}")
                continue
            if not memory.improves(target, score):
                continue  # queued or fetched already with a score at least as good
            child["par"] = url
            yield self._request(target, score, child)

    def errback(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        response = getattr(failure.value, "response", None)
        status = response.status if response is not None else 0
        kind = failure.type.__name__ if failure.type else "error"
        self.crawler.stats.inc_value(f"focuscrawl/error/{kind}")
        state = request.meta.get("focuscrawl") or {}
        if state.get("seed"):
            self.crawler.stats.inc_value("focuscrawl/error/seed")
            logger.warning("Seed failed: %s (%s)", request.url, failure.getErrorMessage())
        else:
            logger.info("Failed %s: %s", request.url, failure.getErrorMessage())
        if response is not None:
            self._log_fetch(request.url, status, state, None)
        self.crawler.signals.send_catch_log(request_done, request=request, spider=self)

    def _log_fetch(
        self,
        url: str,
        status: int,
        state: dict[str, Any],
        relevance: float | None,
        relevant: bool = False,
    ) -> int:
        self.seq += 1
        stats = self.crawler.stats
        stats.inc_value("focuscrawl/pages")
        if relevance is not None:
            stats.inc_value("focuscrawl/harvest/pages")
            if relevant:
                self.relevant_count += 1
                stats.inc_value("focuscrawl/harvest/relevant")
        record = {
            "seq": self.seq,
            "url": url,
            "status": status,
            "relevance": None if relevance is None else round(relevance, 6),
            "relevant": relevant,
            "score": float(state.get("score", 0.0)),
            "depth": int(state.get("d", 0)),
            "parent": state.get("par"),
            "t": round(time.time(), 3),
        }
        self.crawler.signals.send_catch_log(page_fetched, record=record, spider=self)
        return self.seq

    def closed(self, reason: str) -> None:
        pages = self.crawler.stats.get_value("focuscrawl/harvest/pages", 0)
        if pages:
            self.crawler.stats.set_value(
                "focuscrawl/harvest/rate", round(self.relevant_count / pages, 4)
            )


def _block_counts(page: Page) -> dict[str, int]:
    counts: dict[str, int] = {}
    for block in page.blocks:
        counts[block.kind] = counts.get(block.kind, 0) + 1
    return counts


def _validators(response: Response) -> dict[str, str]:
    out = {}
    for name in ("ETag", "Last-Modified"):
        value = response.headers.get(name)
        if value:
            out[name.lower()] = value.decode("latin-1")
    return out
