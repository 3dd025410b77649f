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
from focuscrawl.crawlstop import Unfinished
from focuscrawl.frontier.policy import CrawlPolicy
from focuscrawl.frontier.scoring import SEED_SCORE, SharkParams
from focuscrawl.frontier.urls import TrapLimits
from focuscrawl.items import PageItem
from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.loading import load_model
from focuscrawl.signals import page_fetched, request_done, request_failed
from focuscrawl.topic import Topic, load_topic

logger = logging.getLogger(__name__)

PAGE_META = "focuscrawl_page"  # set by focuscrawl.middlewares.partition.PartitionMiddleware
FINGERPRINTS_META = "focuscrawl_fingerprints"  # set by the conditional-GET middleware


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

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> TopicalSpider:
        spider: TopicalSpider = super().from_crawler(crawler, *args, **kwargs)
        # add-on settings are applied after the spider is built: read them when it opens
        crawler.signals.connect(spider.setup, signals.spider_opened)
        return spider

    def setup(self, spider: Spider) -> None:
        s = self.crawler.settings
        threshold = s.getfloat("FOCUSCRAWL_RELEVANCE_THRESHOLD")
        model_path = self.model_arg or s.get("FOCUSCRAWL_MODEL")
        # threshold 0 with the cosine model: calibrated on the seed pages as they are judged
        auto = s.getfloat("FOCUSCRAWL_AUTO_THRESHOLD") if not (threshold or model_path) else 0.0
        model = load_model(
            model_path,
            self.topic,
            threshold=threshold or 0.25,
            adapt=s.getbool("FOCUSCRAWL_ADAPT_TOPIC"),
            retrain_every=s.getint("FOCUSCRAWL_RETRAIN_EVERY"),
        )
        self.policy = CrawlPolicy(
            model,
            self.strategy_arg or s.get("FOCUSCRAWL_STRATEGY"),
            SharkParams(
                delta=s.getfloat("FOCUSCRAWL_SHARK_DELTA"),
                beta=s.getfloat("FOCUSCRAWL_SHARK_BETA"),
                gamma=s.getfloat("FOCUSCRAWL_SHARK_GAMMA"),
                grey=s.getbool("FOCUSCRAWL_TUNNEL_GREY"),
                black=s.getbool("FOCUSCRAWL_TUNNEL_BLACK"),
                tunnel_max_depth=s.getint("FOCUSCRAWL_TUNNEL_MAX_DEPTH"),
                tunnel_penalty=s.getfloat("FOCUSCRAWL_TUNNEL_PENALTY"),
                votes=s.getfloat("FOCUSCRAWL_SHARK_VOTES"),
                vote_saturation=s.getfloat("FOCUSCRAWL_SHARK_VOTE_SATURATION"),
                vote_gated=s.getbool("FOCUSCRAWL_SHARK_VOTE_GATED"),
                block_mix=s.getfloat("FOCUSCRAWL_SHARK_BLOCK_MIX"),
                noise_floor=s.getfloat("FOCUSCRAWL_SHARK_NOISE_FLOOR"),
                normalize=s.getbool("FOCUSCRAWL_SHARK_NORMALIZE"),
                learn=s.getfloat("FOCUSCRAWL_LINK_LEARNER"),
                learn_every=s.getint("FOCUSCRAWL_LINK_LEARNER_EVERY"),
                learn_features=s.get("FOCUSCRAWL_LINK_LEARNER_FEATURES"),
                words=s.getfloat("FOCUSCRAWL_LINK_WORDS"),
                words_top=s.getint("FOCUSCRAWL_LINK_WORDS_TOP"),
            ),
            TrapLimits(
                max_length=s.getint("FOCUSCRAWL_MAX_URL_LENGTH"),
                max_path_depth=s.getint("FOCUSCRAWL_MAX_PATH_DEPTH"),
                max_repeated_segments=s.getint("FOCUSCRAWL_MAX_REPEATED_SEGMENTS"),
            ),
            auto_threshold=auto,
            calibrate=s.get("FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION") if auto else "",
        )
        # without the partition middleware (a project that disabled it) the spider parses
        mws = s.getwithbase("DOWNLOADER_MIDDLEWARES")
        self.parse_here = not mws.get("focuscrawl.middlewares.partition.PartitionMiddleware")
        logger.info(
            "Topic %r, strategy %s, model %s",
            self.topic.name,
            self.policy.strategy,
            type(model).__name__,
        )

    policy: CrawlPolicy

    @property
    def model(self) -> PageScorer:
        return self.policy.model

    # -- start ----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Request]:
        for item in self.start_requests():
            yield item

    def start_requests(self) -> Iterator[Request]:
        if self.mode == "recrawl":
            yield from self._recrawl_requests()
            return
        for url in self.topic.example_urls():
            yield self._request(url, SEED_SCORE + 1, {"d": 0, "ex": 1})
        for url in self.topic.seeds:
            yield self._request(url, SEED_SCORE, {"d": 0, "seed": 1})

    def _recrawl_requests(self) -> Iterator[Request]:
        """The stored pages that are due, best first; 404/410 reach the spider as tombstones."""
        from focuscrawl.change.recrawl import due_urls

        urls = due_urls(self.crawler.settings)
        self.crawler.stats.set_value("focuscrawl/recrawl/due", len(urls))
        logger.info("Recrawl: %d stored pages are due", len(urls))
        for rank, url in enumerate(urls):
            state = {"d": 0, "seed": 1, "re": 1, "score": SEED_SCORE - rank}
            yield Request(
                url,
                errback=self.errback,
                dont_filter=True,
                meta={"focuscrawl": state, "handle_httpstatus_list": [404, 410]},
            )

    def _request(self, url: str, score: float, state: dict[str, Any]) -> Request:
        state["score"] = score
        return Request(url, errback=self.errback, meta={"focuscrawl": state})

    # -- responses ------------------------------------------------------------------------
    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | Request]:
        state = response.meta.get("focuscrawl") or {}
        if response.status in (404, 410):  # a revisited page is gone: a tombstone
            seq = self._log_fetch(response.url, response.status, state, None)
            yield PageItem(
                url=response.url,
                status=response.status,
                seq=seq,
                fetched_at=time.time(),
                change="deleted",
            )
            return
        page: Page | None = response.meta.get(PAGE_META)
        if page is None and self.parse_here and isinstance(response, TextResponse):
            page = partition(response.text, response.url)
            page = None if page.error else page
        if page is None:  # not HTML, or a body the partition middleware refused (counted there)
            self.crawler.stats.inc_value("focuscrawl/skip/no_page")
            self._log_fetch(response.url, response.status, state, None)
            return
        judgement = self.policy.judge(page, state)
        relevance, relevant = judgement.relevance, judgement.relevant
        seq = self._log_fetch(response.url, response.status, state, relevance, relevant, page.kind)
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
            kind=page.kind,
            kind_confidence=page.kind_confidence,
            score=float(state.get("score", 0.0)),
            headers=_validators(response),
            fingerprints=response.meta.get(FINGERPRINTS_META) or {},
        )
        if state.get("ex") and not self.topic.seeds:
            return
        for target, _score, child in self.policy.links(page, response.url, state, judgement):
            yield Request(target, errback=self.errback, meta={"focuscrawl": child})

    def errback(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        response = getattr(failure.value, "response", None)
        status = response.status if response is not None else 0
        state = request.meta.get("focuscrawl") or {}
        if status == 304:  # not modified: the conditional-GET middleware recorded it
            self._log_fetch(request.url, status, state, None)
            self.crawler.signals.send_catch_log(request_done, request=request, spider=self)
            return
        if failure.check(Unfinished):  # given up as the crawl stops: fetched again, not done
            return
        kind = failure.type.__name__ if failure.type else "error"
        self.crawler.stats.inc_value(f"focuscrawl/error/{kind}")
        self.crawler.signals.send_catch_log(request_failed, failure=failure, spider=self)
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
        kind: str = "",
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
            "kind": kind,  # page kind (blocks.kind); "" when the page was not partitioned
            "score": float(state.get("score", 0.0)),
            "depth": int(state.get("d", 0)),
            "parent": state.get("par"),
            "t": round(time.time(), 3),
        }
        self.crawler.signals.send_catch_log(page_fetched, record=record, spider=self)
        return self.seq

    def closed(self, reason: str) -> None:
        policy = getattr(self, "policy", None)  # None when the spider never opened
        for why, count in policy.skipped.items() if policy is not None else ():
            self.crawler.stats.set_value(f"focuscrawl/skip/url/{why}", count)
        close = getattr(policy.model, "close", None) if policy is not None else None
        if close is not None:
            close()  # a retraining model stops its worker
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
