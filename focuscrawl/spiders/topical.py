"""``scrapy crawl topical -a topic=...``: the focused crawl.

The spider is an adapter: the page comes parsed from the partition middleware, the page judge
(:class:`~focuscrawl.relevance.judge.PageJudge`) and the link policy
(:class:`~focuscrawl.strategy.policy.CrawlPolicy`) are plain objects; the spider turns their
answers into an item, a crawl-log record and scored requests.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from focuscrawl import defaults
from focuscrawl.blocks import Page, partition
from focuscrawl.change.recrawl import NewLinks
from focuscrawl.crawlstop import Unfinished, stop_crawl
from focuscrawl.dedup.hook import DuplicateHook
from focuscrawl.frontier.state import RequestState, state_of
from focuscrawl.frontier.urls import TrapLimits
from focuscrawl.items import PageItem
from focuscrawl.meta import FINGERPRINTS_META, NO_CONDITIONAL_META, PAGE_META, STATE_META
from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.judge import Judgement, PageJudge
from focuscrawl.relevance.labels import UserLabels
from focuscrawl.relevance.loading import UNCALIBRATED_THRESHOLD, load_model
from focuscrawl.signals import page_fetched, request_done, request_failed
from focuscrawl.spiders.rescore import FrontierRescore
from focuscrawl.strategy.policy import CrawlPolicy
from focuscrawl.strategy.scoring import SEED_SCORE, SharkParams
from focuscrawl.topic import Topic, load_topic

logger = logging.getLogger(__name__)

USAGE_EXIT = 2  # the exit status of a usage error (as the crawl command's own checks)
TRUST_SHOWN = 20  # hosts whose trust the stats (and the crawl summary) show
MAX_IDLE_WAITS = 24  # idle rounds (5 s each) a recrawl waits for its sitemaps' answers


class TopicalSpider(Spider):
    name = "topical"
    #: the callbacks a frontier entry may name (sitemaps and feeds come back to parse_signals)
    frontier_callbacks = ("parse", "errback", "parse_signals")

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
        self.new_links: NewLinks | None = None  # recrawl: what a revisited page follows
        self.refused = False  # set up with a setting it cannot run with: closes at once
        self.discovery: Any = None  # FOCUSCRAWL_SIGNALS: sitemaps and feeds (spiders.discovery)
        self.signal_store: Any = None
        self.due_pending = False  # recrawl with signals: the due list waits for the sitemaps
        self.signals_in_flight = 0  # signal documents asked for and not answered yet
        self.stored_urls: set[str] = set()  # recrawl with signals: the change store's pages
        self.idle_waits = 0

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
            threshold=threshold or UNCALIBRATED_THRESHOLD,
            adapt=s.getbool("FOCUSCRAWL_ADAPT_TOPIC"),
            retrain_every=s.getint("FOCUSCRAWL_RETRAIN_EVERY"),
            retrain_labels=defaults.read(s, "FOCUSCRAWL_LABELS_RETRAIN"),
            retrain_sync=defaults.read(s, "FOCUSCRAWL_RETRAIN_SYNC"),
        )
        self.page_judge = PageJudge(
            model,
            auto_threshold=auto,
            calibrate=s.get("FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION") if auto else "",
        )
        self.labels = UserLabels.from_settings(
            s, self._redis_labels() if shared_frontier(s) else None
        )
        self.policy = CrawlPolicy(
            self.page_judge,
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
                hits_every=defaults.read(s, "FOCUSCRAWL_HITS_EVERY"),
            ),
            TrapLimits(
                max_length=s.getint("FOCUSCRAWL_MAX_URL_LENGTH"),
                max_path_depth=s.getint("FOCUSCRAWL_MAX_PATH_DEPTH"),
                max_repeated_segments=s.getint("FOCUSCRAWL_MAX_REPEATED_SEGMENTS"),
            ),
        )
        if self._upgrade_queued is not None:  # the scheduler opened first and offered it
            self.policy.upgrade_directly()
        if defaults.read(s, "FOCUSCRAWL_LABELS_RETRAIN") and hasattr(model, "take_rescored"):
            # the model retrains from the labels: its frontier re-scored after each retrain
            # (not by HITS or the learned judge: they keep tables of the links they scored,
            # which a page scored twice would enter twice; they re-score by their own epochs)
            self.rescore = FrontierRescore(
                self.policy.links
                if self.policy.hits is None and self.policy.link_judge is None
                else _no_links
            )
        strategy = self.policy.strategy
        if strategy == "hits" and shared_frontier(s):
            # HITS keeps its graph in this process and re-scores the queue from it: workers
            # sharing a Redis frontier would each rank it from their own part of the crawl
            logger.error(
                "strategy %s runs with the in-process frontier only (FOCUSCRAWL_FRONTIER="
                "memory, no REDIS_URL): choose another strategy for a Redis frontier",
                strategy,
            )
            self.refused = True  # no start requests: nothing to fail, exit status 2 stays
            stop_crawl(self.crawler, f"{strategy}_needs_local_frontier", USAGE_EXIT)
        elif self.policy.link_judge is not None and shared_frontier(s):
            self._share_judge()
        self.duplicates = DuplicateHook.from_crawler(self.crawler, self.policy)  # None: off
        if self.mode == "recrawl" and defaults.read(s, "FOCUSCRAWL_CHANGE_ENABLED"):
            from focuscrawl.pipelines.change import thresholds_from

            self.new_links = NewLinks.from_settings(s, thresholds_from(s))
            self.new_links.open()
        if defaults.read(s, "FOCUSCRAWL_SIGNALS"):
            self._open_signals()
        # without the partition middleware (a project that disabled it) the spider parses
        mws = s.getwithbase("DOWNLOADER_MIDDLEWARES")
        self.parse_here = not mws.get("focuscrawl.middlewares.partition.PartitionMiddleware")
        logger.info(
            "Topic %r, strategy %s, model %s",
            self.topic.name,
            self.policy.strategy,
            type(model).__name__,
        )

    def _open_signals(self) -> None:
        """Sitemaps and feeds (:mod:`focuscrawl.spiders.discovery`), their lastmods and the
        hosts' trust kept beside the change store (its backend: shared by a Redis crawl)."""
        from focuscrawl.change.signal_store import open_signal_store
        from focuscrawl.change.sitemaps import SignalLimits
        from focuscrawl.change.store import StoreError, open_store
        from focuscrawl.netguard import AddressPolicy
        from focuscrawl.spiders.discovery import SignalDiscovery

        s = self.crawler.settings
        store = None
        if defaults.read(s, "FOCUSCRAWL_CHANGE_ENABLED"):
            try:
                store = open_signal_store(open_store(s))
                store.open()
            except StoreError as exc:
                logger.warning("signals: no signal store, lastmods not kept: %s", exc)
                store = None
        self.signal_store = store
        limits = SignalLimits(
            max_bytes=defaults.read(s, "FOCUSCRAWL_SIGNALS_MAX_BYTES"),
            max_entries=defaults.read(s, "FOCUSCRAWL_SIGNALS_MAX_ENTRIES"),
            max_sitemaps=defaults.read(s, "FOCUSCRAWL_SIGNALS_MAX_SITEMAPS"),
        )
        policy = AddressPolicy.parse(defaults.read(s, "FOCUSCRAWL_ALLOW_PRIVATE"))
        self.discovery = SignalDiscovery(limits, policy, store, self.crawler.stats)
        if self.mode == "recrawl" and store is not None:
            self.due_pending = True
            self.crawler.signals.connect(self._emit_due, signals.spider_idle)

    def _redis_labels(self) -> Any:
        """A cluster crawl's labels: the stream ``<prefix>:labels`` in the frontier's Redis
        (:mod:`focuscrawl.cluster.labels`), shared by every worker."""
        from focuscrawl.cluster.labels import RedisLabelBook
        from focuscrawl.frontier.connection import (
            connect,
            frontier_options,
            redis_cluster,
            redis_url,
        )

        s = self.crawler.settings
        url = redis_url(s)
        prefix = frontier_options(s, self.name)["prefix"]
        return RedisLabelBook(connect(url, redis_cluster(s)), prefix, url)

    def _share_judge(self) -> None:
        """The learned link judge of one worker of a Redis crawl: its epochs counted with the
        other workers' and (``FOCUSCRAWL_JUDGE_SHARE=outcomes``) their pages' outcomes learned,
        through the frontier's Redis (:mod:`focuscrawl.cluster.judgeshare`)."""
        from focuscrawl.cluster.judgeshare import RedisJudgeShare
        from focuscrawl.cluster.state import worker_id
        from focuscrawl.frontier.connection import (
            connect,
            frontier_options,
            redis_cluster,
            redis_url,
        )

        s = self.crawler.settings
        url = redis_url(s)
        prefix = frontier_options(s, self.name)["prefix"]
        mode = defaults.read(s, "FOCUSCRAWL_JUDGE_SHARE")
        self.judge_share = RedisJudgeShare(
            connect(url, redis_cluster(s)),
            prefix,
            f"{worker_id()}:{id(self):x}",
            share=mode == "outcomes",
            url=url,
        )
        self.policy.share_judge(self.judge_share)

    page_judge: PageJudge
    policy: CrawlPolicy
    judge_share: Any = None  # the learned judge's Redis exchange (a Redis crawl only)
    duplicates: DuplicateHook | None = None  # FOCUSCRAWL_DEDUP: set up when the spider opens
    rescore: FrontierRescore | None = None  # a retraining model's re-scored pages
    _upgrade_queued: Callable[[list[Any]], int] | None = None  # the scheduler's, if offered

    @property
    def model(self) -> PageScorer:
        return self.page_judge.model

    def judge_page(self, page: Page, state: RequestState) -> Judgement:
        """The fetched page's judgement, and what the link policy learns from it. Subclasses
        extend it here (the Redis spider first judges the seed pages other workers fetched).
        A page the user labelled is judged as labelled (an on-topic one teaches the topic as
        an example page does)."""
        labels = getattr(self, "labels", None)
        label = labels.label_of(page.url) if labels is not None else None
        if labels is not None and self.rescore is not None:  # the model retrains from them
            teach = getattr(self.model, "label", None)
            for changed in labels.take_changed():
                if teach is not None:
                    teach(changed.url, changed.on_topic)
        example = state.example or label is True
        judgement = self.page_judge.judge(page, seed=state.seed, example=example)
        if label is not None and label != judgement.relevant and not state.seed:
            judgement = Judgement(judgement.relevance, label)
            self.crawler.stats.inc_value("focuscrawl/labels/judged_as_labelled")
        self.policy.learn(page, state, judgement)
        return judgement

    def _label_requests(self) -> Iterator[Request]:
        """The on-topic pages the user labelled and the crawl has not learned from yet, fetched
        as example pages (again, if the crawl fetched one before it was labelled)."""
        labels = getattr(self, "labels", None)
        for url in labels.take_examples() if labels is not None else ():
            self.crawler.stats.inc_value("focuscrawl/labels/examples")
            request = self._request(url, SEED_SCORE + 1, RequestState(example=True))
            # in full: a page stored unchanged would answer 304 and teach nothing
            meta = {**request.meta, NO_CONDITIONAL_META: True}
            yield request.replace(dont_filter=True, meta=meta)

    # -- start ----------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Request]:
        for item in self.start_requests():
            yield item

    def start_requests(self) -> Iterator[Request]:
        if self.refused:
            return
        if self.mode == "recrawl":
            yield from self._recrawl_requests()
            return
        for url in self.topic.example_urls():
            yield self._request(url, SEED_SCORE + 1, RequestState(example=True))
        yield from self._label_requests()
        for url in self.topic.seeds:
            yield self._request(url, SEED_SCORE, RequestState(seed=True))

    def _recrawl_requests(self) -> Iterator[Request]:
        """The topic's seeds (fetched in full: they calibrate the relevance judge as in a
        crawl), then the stored pages that are due, best first; 404/410 reach the spider as
        tombstones. Every one of them is a revisit (``re``): it follows only its new links."""
        from focuscrawl.change.recrawl import due_urls

        if self.due_pending:  # the sitemaps first: the due list is made when they are read
            yield from self._recrawl_signal_requests()
            return
        urls = due_urls(self.crawler.settings)
        self.crawler.stats.set_value("focuscrawl/recrawl/due", len(urls))
        logger.info("Recrawl: %d stored pages are due", len(urls))
        seeds = list(dict.fromkeys(self.topic.seeds))
        for url in seeds:
            state = RequestState(seed=True, revisit=True, score=SEED_SCORE + 1)
            yield self._revisit(url, state, full=True)
        known = set(seeds)
        for rank, url in enumerate(urls):
            if url not in known:
                yield self._revisit(url, RequestState(revisit=True, score=SEED_SCORE - rank))

    def _recrawl_signal_requests(self) -> Iterator[Request]:
        """The seeds in full, and the robots.txt of every stored host (its sitemaps next)."""
        from focuscrawl.change.store import open_store

        for url in dict.fromkeys(self.topic.seeds):
            state = RequestState(seed=True, revisit=True, score=SEED_SCORE + 1)
            yield self._revisit(url, state, full=True)
        store = open_store(self.crawler.settings)
        store.open()
        try:
            # a sitemap's stored pages are the due list's to revisit: only new ones are queued
            self.stored_urls = {r.url for r in store.records()}
        finally:
            store.close()
        sites = list(dict.fromkeys(_site(url) for url in self.stored_urls))
        for site in sites:
            for doc in self.discovery.documents_for(site + "/", b""):
                yield self._signal_request(doc, RequestState(score=SEED_SCORE + 1))

    def _emit_due(self, spider: Spider) -> None:
        """At the first idle of a recrawl with signals (every sitemap read): the due list."""
        if not self.due_pending:
            return
        from scrapy.exceptions import DontCloseSpider

        from focuscrawl.change.recrawl import signal_plan

        # idle also while the scheduler holds requests back (politeness): wait for the
        # sitemaps' answers, a bounded number of idle rounds (a lost request must not hang it)
        if self.signals_in_flight > 0 and self.idle_waits < MAX_IDLE_WAITS:
            self.idle_waits += 1
            raise DontCloseSpider

        self.due_pending = False
        plan = signal_plan(self.crawler.settings)
        stats = self.crawler.stats
        stats.set_value("focuscrawl/recrawl/due", len(plan.urls))
        stats.set_value("focuscrawl/recrawl/signals/due_at_once", plan.signalled)
        stats.set_value("focuscrawl/recrawl/signals/skipped", plan.skipped)
        stats.set_value("focuscrawl/recrawl/signals/audited", plan.audited)
        for state_name in ("trusted", "probation", "distrusted"):
            n = sum(1 for v in plan.states.values() if v == state_name)
            stats.set_value(f"focuscrawl/recrawl/signals/hosts_{state_name}", n)
        logger.info(
            "Recrawl: %d stored pages are due (%d by their signals, %d skipped by them)",
            len(plan.urls),
            plan.signalled,
            plan.skipped,
        )
        seeds = set(self.topic.seeds)
        for rank, url in enumerate(plan.urls):
            if url not in seeds:
                state = RequestState(revisit=True, score=SEED_SCORE - rank)
                self.crawler.engine.crawl(self._revisit(url, state))
        if plan.urls:
            raise DontCloseSpider

    def _signal_request(self, url: str, state: RequestState) -> Request:
        self.signals_in_flight += 1
        return Request(
            url,
            callback=self.parse_signals,
            errback=self.errback,
            meta={STATE_META: state},
            dont_filter=True,  # the discovery's walk asks for each document once
        )

    def parse_signals(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        """A robots.txt, sitemap or feed: the documents it names, and its entries' URLs
        scored like the links of a page (their URL words or titles as anchors)."""
        from focuscrawl.relevance.judge import Judgement
        from focuscrawl.spiders.discovery import entry_pages

        self.signals_in_flight -= 1
        if self.discovery is None or response.status != 200:
            return
        state = state_of(response.meta) or RequestState()
        docs, entries = self.discovery.read(response.url, response.body)
        if self.stored_urls:
            entries = [e for e in entries if e.url not in self.stored_urls]
        for doc in docs:
            yield self._signal_request(doc, RequestState(state.depth, score=state.score))
        for page in entry_pages(response.url, entries):
            relevance = self.model.score_text(page.blocks[0].text)
            judgement = Judgement(relevance, relevance >= self.model.threshold)
            for target, _score, child in self.policy.links(page, response.url, state, judgement):
                yield Request(target, errback=self.errback, meta={STATE_META: child})
            self._send_upgrades()

    def _check_signal(self, url: str, previous: float, status: str) -> None:
        """What this fetch proves about the host's signal for ``url`` (trust evidence)."""
        from focuscrawl.change.signals import check, host_of

        store = self.signal_store
        # a new page has nothing to compare; an insignificant change (layout, an ad) proves
        # nothing either way: an honest sitemap may move its lastmod for it, or not
        if store is None or status in ("new", "insignificant"):
            return
        try:
            lastmod = store.lastmods([url]).get(url)
            verdict = check(lastmod, previous, status == "significant")
            if verdict is not None:
                store.add_evidence(host_of(url), verdict)
                self.crawler.stats.inc_value(f"focuscrawl/recrawl/signals/{verdict}")
        except Exception as exc:  # a store outage costs the evidence, never the crawl
            logger.warning("signals: no trust evidence for %s: %s", url, exc)

    def _trust_stats(self, store: Any) -> None:
        """Each host's trust and its evidence in the stats (the most checked hosts first)."""
        from focuscrawl.change.signals import TrustRules

        s = self.crawler.settings
        rules = TrustRules(
            min_checks=defaults.read(s, "FOCUSCRAWL_SIGNALS_MIN_CHECKS"),
            max_error=defaults.read(s, "FOCUSCRAWL_SIGNALS_MAX_ERROR"),
        )
        try:
            trust = store.trust()
        except Exception as exc:  # a store outage costs the report, never the crawl
            logger.warning("signals: no trust to report: %s", exc)
            return
        for host in sorted(trust, key=lambda h: -trust[h].checks)[:TRUST_SHOWN]:
            t = trust[host]
            self.crawler.stats.set_value(
                f"focuscrawl/signals/trust/{host}",
                f"{t.state(rules)} ({t.agreed} agreed, {t.missed} missed, "
                f"{t.false_moves} false of {t.checks} checks)",
            )

    def _check_not_modified(self, url: str) -> None:
        """A 304's trust evidence: unchanged since the visit before the one just recorded."""
        try:
            record = self.new_links.store.get(url) if self.new_links is not None else None
        except Exception as exc:  # a store outage costs the evidence, never the crawl
            logger.warning("signals: no trust evidence for %s: %s", url, exc)
            return
        if record is not None and len(record.history) >= 2:
            self._check_signal(url, record.history[-2][0], "unchanged")

    def _revisit(self, url: str, state: RequestState, full: bool = False) -> Request:
        meta: dict[str, Any] = {STATE_META: state, "handle_httpstatus_list": [404, 410]}
        if full:
            meta[NO_CONDITIONAL_META] = True
        return Request(url, errback=self.errback, dont_filter=True, meta=meta)

    def _request(self, url: str, score: float, state: RequestState) -> Request:
        state.score = score
        return Request(url, errback=self.errback, meta={STATE_META: state})

    # -- responses ------------------------------------------------------------------------
    def parse(self, response: Response, **kwargs: Any) -> Iterator[PageItem | Request]:
        state = state_of(response.meta) or RequestState()
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
        copy = self.duplicates.check(response, page) if self.duplicates is not None else None
        dup = copy.match if copy is not None else None
        if dup is not None:  # a copy: judged, counted and expanded once, as the page it copies
            relevance, relevant = dup.relevance, False
            seq = self._log_fetch(
                response.url, response.status, state, None, kind=page.kind, dup=dup.url
            )
        else:
            judgement = self.judge_page(page, state)
            relevance, relevant = judgement.relevance, judgement.relevant
            if copy is not None:
                copy.remember(relevance)
            seq = self._log_fetch(
                response.url, response.status, state, relevance, relevant, page.kind
            )
        yield PageItem(
            url=response.url,
            title=page.title,
            relevance=round(relevance, 6),
            relevant=relevant,
            depth=state.depth,
            parent=state.parent,
            seq=seq,
            fetched_at=time.time(),
            status=response.status,
            text=page.main_text,
            blocks=_block_counts(page),
            kind=page.kind,
            kind_confidence=page.kind_confidence,
            score=_state_score(state),
            headers=_validators(response),
            fingerprints=response.meta.get(FINGERPRINTS_META) or {},
            duplicate_of=dup.url if dup is not None else "",
            canonical=copy.canonical if copy is not None else "",
        )
        yield from self._label_requests()
        if self.discovery is not None and dup is None:
            for doc in self.discovery.documents_for(response.url, response.body):
                yield self._signal_request(doc, RequestState(state.depth, score=SEED_SCORE))
        if dup is not None or (state.example and not self.topic.seeds):
            return
        follow = self._new_links(response, page) if state.revisit else None
        queued = 0
        for target, _score, child in self.policy.links(page, response.url, state, judgement):
            if follow is not None and target not in follow:
                continue
            queued += 1
            yield Request(target, errback=self.errback, meta={STATE_META: child})
        self._send_upgrades(recrawl=follow is not None)
        if follow is not None and queued:
            self.crawler.stats.inc_value("focuscrawl/recrawl/new_links", queued)
        if self.rescore is not None and follow is None:
            self.rescore.remember(response.url, page, state, judgement, self.model.threshold)
            yield from self._rescored_requests()

    def use_queue_upgrades(self, upgrade: Callable[[list[Any]], int]) -> None:
        """Called by a scheduler whose frontier moves queued URLs up in process: better scores
        for links queued from earlier pages go to ``upgrade`` instead of being sent as requests
        (:meth:`CrawlPolicy.upgrade_directly`, :meth:`FocusScheduler.upgrade_queued`)."""
        if not defaults.read(self.crawler.settings, "FOCUSCRAWL_DIRECT_UPGRADES"):
            return
        self._upgrade_queued = upgrade
        if getattr(self, "policy", None) is not None:
            self.policy.upgrade_directly()

    def _send_upgrades(self, recrawl: bool = False) -> int:
        """The policy's better scores for links queued from earlier pages, to the frontier
        (a recrawl follows only a page's new links: dropped there); returns how many."""
        upgrades = self.policy.take_upgrades()
        if upgrades and not recrawl and self._upgrade_queued is not None:
            self._upgrade_queued(upgrades)
            return len(upgrades)
        return 0

    def _rescored_requests(self) -> Iterator[Request]:
        """After a retrain: the links of the recent pages the new model judges more relevant,
        sent again with their new scores (:mod:`focuscrawl.spiders.rescore`)."""
        rescore = self.rescore
        scores = self.model.take_rescored()  # type: ignore[attr-defined]
        if rescore is None or not (scores or rescore.pending):
            return
        labels = getattr(self, "labels", None)
        label_of = labels.book.get if labels is not None else (lambda url: None)
        pages = rescore.pages
        for target, _score, child in rescore.rescored(scores, self.model.threshold, label_of):
            yield Request(target, errback=self.errback, meta={STATE_META: child})
        # the re-scored pages' links queued from earlier pages: moved up directly
        rescore.sent += self._send_upgrades()
        stats = self.crawler.stats
        if scores:
            stats.inc_value("focuscrawl/labels/rescores")
        stats.inc_value("focuscrawl/labels/rescored_pages", rescore.pages - pages)
        stats.set_value("focuscrawl/labels/rescored_links", rescore.sent)

    def _new_links(self, response: Response, page: Page) -> frozenset[str] | None:
        """A revisited page's links to follow (asked before its item reaches the change
        pipeline): its new content links when it changed significantly, else none. ``None``
        (all of them) when the page has no stored version or the store cannot answer."""
        if self.new_links is None:
            return None
        from focuscrawl.change.fingerprint import Fingerprints, fingerprint
        from focuscrawl.change.store import StoreError
        from focuscrawl.frontier.urls import clean_url

        data = response.meta.get(FINGERPRINTS_META)
        try:
            if data:
                new = Fingerprints.from_dict(data)
            else:
                headers = _validators(response)
                headers = {
                    "ETag" if k == "etag" else "Last-Modified": v for k, v in headers.items()
                }
                new = fingerprint(
                    page, response.body, headers, thresholds=self.new_links.thresholds
                )
            previous = self.new_links.previous_fetch(response.url) if self.signal_store else 0.0
            status, urls = self.new_links.of(response.url, new)
            self._check_signal(response.url, previous, status)
        except (StoreError, ValueError) as exc:
            logger.warning("recrawl: no stored version of %s to compare (%s)", response.url, exc)
            self.crawler.stats.inc_value("focuscrawl/recrawl/store_error")
            return None
        stats = self.crawler.stats
        if urls is None:
            return None
        if not urls:
            stats.inc_value("focuscrawl/recrawl/not_expanded")
            return urls
        stats.inc_value("focuscrawl/recrawl/expanded")
        limits = self.policy.limits
        # the policy yields cleaned URLs: compare like with like
        return frozenset(clean_url(u, limits)[0] for u in urls)

    def errback(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if request.callback == self.parse_signals:  # a missing sitemap or feed: no error
            self.signals_in_flight -= 1
            self.crawler.stats.inc_value("focuscrawl/signals/failed")
            return
        response = getattr(failure.value, "response", None)
        status = response.status if response is not None else 0
        state = state_of(request.meta) or RequestState()
        if status == 304:  # not modified: the conditional-GET middleware recorded it
            self._log_fetch(request.url, status, state, None)
            if state.revisit and self.signal_store is not None and self.new_links is not None:
                self._check_not_modified(request.url)
            self.crawler.signals.send_catch_log(request_done, request=request, spider=self)
            return
        if failure.check(Unfinished):  # given up as the crawl stops: fetched again, not done
            return
        kind = failure.type.__name__ if failure.type else "error"
        self.crawler.stats.inc_value(f"focuscrawl/error/{kind}")
        self.crawler.signals.send_catch_log(request_failed, failure=failure, spider=self)
        if state.seed:
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
        state: RequestState,
        relevance: float | None,
        relevant: bool = False,
        kind: str = "",
        dup: str = "",
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
            "score": _state_score(state),
            "depth": state.depth,
            "parent": state.parent,
            "t": round(time.time(), 3),
        }
        if dup:  # a near-duplicate: not judged, not counted in the harvest (FOCUSCRAWL_DEDUP)
            record["duplicate_of"] = dup
        self.crawler.signals.send_catch_log(page_fetched, record=record, spider=self)
        return self.seq

    def closed(self, reason: str) -> None:
        signal_store, self.signal_store = getattr(self, "signal_store", None), None
        if signal_store is not None:
            self._trust_stats(signal_store)
            signal_store.close()
        new_links, self.new_links = getattr(self, "new_links", None), None
        if new_links is not None:
            new_links.close()
        policy = getattr(self, "policy", None)  # None when the spider never opened
        for why, count in policy.skipped.items() if policy is not None else ():
            self.crawler.stats.set_value(f"focuscrawl/skip/url/{why}", count)
        share, self.judge_share = self.judge_share, None
        if share is not None:
            stats = self.crawler.stats
            stats.set_value("focuscrawl/judge_share/sent", share.sent)
            stats.set_value("focuscrawl/judge_share/learned", policy.foreign_outcomes)
            stats.set_value("focuscrawl/judge_share/errors", share.errors)
            stats.set_value("focuscrawl/judge_share/skipped", share.skipped)
            stats.set_value("focuscrawl/judge_share/not_sent", policy.outbox_dropped)
            share.client.close()
        labels = getattr(self, "labels", None)
        if labels is not None:
            stats = self.crawler.stats
            stats.set_value("focuscrawl/labels/known", len(labels.book))
            stats.set_value("focuscrawl/labels/skipped", labels.book.skipped)
            client = getattr(labels.book, "client", None)
            if client is not None:  # the cluster's labels in Redis
                stats.set_value("focuscrawl/labels/redis_errors", labels.book.errors)
                client.close()
            model = getattr(getattr(self, "page_judge", None), "model", None)
            if self.rescore is not None and model is not None:
                stats.set_value("focuscrawl/labels/retrains", model.label_retrains)
                on, off = model.trained_labels
                stats.set_value("focuscrawl/labels/model_labels_on", on)
                stats.set_value("focuscrawl/labels/model_labels_off", off)
        judge = getattr(self, "page_judge", None)
        close = getattr(judge.model, "close", None) if judge is not None else None
        if close is not None:
            close()  # a retraining model stops its worker
        pages = self.crawler.stats.get_value("focuscrawl/harvest/pages", 0)
        if pages:
            self.crawler.stats.set_value(
                "focuscrawl/harvest/rate", round(self.relevant_count / pages, 4)
            )


def _no_links(*args: Any) -> list[Any]:
    return []


def shared_frontier(settings: Any) -> bool:
    """Whether the crawl's frontier is Redis (shared by workers), as the factory decides."""
    from focuscrawl.frontier.factory import redis_url

    backend = defaults.read(settings, "FOCUSCRAWL_FRONTIER")
    return backend == "redis" or bool(backend == "memory" and redis_url(settings))


def _site(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _state_score(state: RequestState) -> float:
    return 0.0 if state.score is None else state.score


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
