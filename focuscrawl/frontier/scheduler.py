"""``FocusScheduler``: Scrapy's ``SCHEDULER`` over a focuscrawl frontier.

Scores are floats read from the request state (``request.meta["focuscrawl"].score``, a
:class:`~.state.RequestState`; else the request's integer priority). The frontier de-duplicates
by request fingerprint, moves a URL up when it is found again with a better score, and pops
around hosts whose downloader slot is full, so one host with many high scores neither starves
the others nor stalls the crawl.

Faults (:mod:`focuscrawl.frontier.guard`): a JOBDIR another crawl uses, an evicting Redis or
refused credentials stop the crawl at start with one line; a full disk under the JOBDIR journal
stops it (resumable); Redis away or full pauses it without blocking the reactor, the links and
acks meanwhile kept here and sent when it is back.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.exceptions import CloseSpider
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.reactor import is_reactor_installed

from focuscrawl import defaults
from focuscrawl.crawlstop import STORAGE_FAULT_EXIT
from focuscrawl.credentials import RedisAuthError, first_report
from focuscrawl.faults import as_fault
from focuscrawl.frontier.base import Frontier, FrontierEntry, PushResult, host_of
from focuscrawl.frontier.factory import build_frontier
from focuscrawl.frontier.guard import FrontierGuard
from focuscrawl.frontier.hostdelay import HostDelays
from focuscrawl.frontier.journal import JobdirBusy
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.redis_health import FrontierUnavailable, RedisPolicyError
from focuscrawl.frontier.requests import FP_META, BadEntry, decode, encode, score_of
from focuscrawl.frontier.state import RequestState
from focuscrawl.frontier.traps import TrapCaps
from focuscrawl.meta import DELAY_META, STATE_META
from focuscrawl.signals import request_done

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
BATCH = 64  # pushes sent in one round trip at most (batching frontiers)
HANDED_HOSTS_MAX = 4096  # hosts whose last hand-out time is kept, past it the old ones go
HANDED_FORGET_SECONDS = 60.0  # as Scrapy forgets an idle downloader slot


class FocusScheduler(BaseScheduler):
    def __init__(
        self,
        crawler: Crawler,
        host_slots: int = 0,
        max_pages_per_host: int = 0,
        max_pages_per_pattern: int = 0,
        max_query_variants: int = 0,
        download_delay: float = 0.0,
        delay_ready: str = "drawn",
        delay_jitter: float = 0.5,
        slot_settings: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.crawler = crawler
        self.traps = TrapCaps(max_query_variants, max_pages_per_pattern)
        self.stats = crawler.stats
        self.host_slots = host_slots
        self.max_pages_per_host = max_pages_per_host
        self.frontier: Frontier | None = None
        self.spider: Spider | None = None
        self._per_host: Counter[str] = Counter()
        self._live: dict[bytes, Request] = {}  # requests whose fields are not JSON-able
        self._bad_kinds: set[str] = set()  # kinds of dropped entries logged so far
        # a frontier with push_many (Redis) gets new links in batches: sent, with the ack of
        # the page they came from, in one round trip; flushed before any pop, count or ack
        self._batch: list[tuple[Request, tuple[Any, ...]]] | None = None
        self._acks: list[bytes] = []  # acks kept while the frontier is paused (Redis away)
        self._replacing: list[tuple[tuple[Any, ...], bytes]] = []  # (redirect, parent) kept
        self._guard: FrontierGuard | None = None
        self._waited_for_leases = False  # the wait for leases held elsewhere was logged
        self._delay = download_delay  # DOWNLOAD_DELAY: > 0 pops hosts past their delay first
        # when a host is ready for its next request (FOCUSCRAWL_DELAY_READY)
        self._delays = HostDelays(
            download_delay, delay_jitter, delay_ready, HANDED_HOSTS_MAX, HANDED_FORGET_SECONDS
        )
        self._slot_settings = slot_settings or {}  # DOWNLOAD_SLOTS: a host's own delay
        self._delayed = False  # the last pop skipped a host only for its download delay
        self._earliest = math.inf  # when the first of the hosts the last pop skipped is ready
        self._wake: CallLaterResult | None = None  # asks the engine again at that time
        self._wake_due = math.inf  # when it is due (monotonic)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FocusScheduler:
        s = crawler.settings
        sched = cls(
            crawler,
            host_slots=s.getint("FOCUSCRAWL_HOST_SLOTS")
            or s.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            max_pages_per_host=s.getint("FOCUSCRAWL_MAX_PAGES_PER_HOST"),
            max_pages_per_pattern=s.getint("FOCUSCRAWL_MAX_PAGES_PER_PATTERN"),
            max_query_variants=s.getint("FOCUSCRAWL_MAX_QUERY_VARIANTS"),
            download_delay=s.getfloat("DOWNLOAD_DELAY"),
            delay_ready=delay_rule(s),
            delay_jitter=s.getfloat("DOWNLOAD_DELAY_JITTER", 0.5)
            if s.getbool("RANDOMIZE_DOWNLOAD_DELAY", True)
            else 0.0,
            slot_settings=s.getdict("DOWNLOAD_SLOTS"),
        )
        # acknowledged once its outcome is handled: the spider's output consumed
        # (FrontierAckMiddleware) or a final failure (the errback); a lease (Redis) expires
        # for a worker that died first
        crawler.signals.connect(sched._on_done, request_done)
        # a redirect or retry of a popped request replaces it: ack the parent as it is
        # scheduled (sent even when offsite filtering then drops the new request)
        crawler.signals.connect(sched._on_done, signals.request_scheduled)
        if sched._delays.draws:  # a request's slot waits the delay drawn for it here
            crawler.signals.connect(
                sched._on_reached_downloader, signals.request_reached_downloader
            )
        return sched

    # -- lifecycle ------------------------------------------------------------------------
    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.frontier = build_frontier(self.crawler.settings, spider.name)
        try:
            self.frontier.open()
        except RedisAuthError as exc:
            self._refuse(str(exc))
        except JobdirBusy as exc:
            self._refuse(str(exc), "jobdir_busy", exit_status=2)
        except RedisPolicyError as exc:
            self._refuse(str(exc), "redis_config", exit_status=2)
        except OSError as exc:
            fault = as_fault(
                f"frontier journal in JOBDIR {self.crawler.settings.get('JOBDIR')}", exc
            )
            if fault is None:
                raise
            self._refuse(str(fault), fault.reason, exit_status=STORAGE_FAULT_EXIT)
        self._guard = FrontierGuard(self.crawler, self.frontier, self._send_kept)
        self._guard.start()
        self._report_quarantine()
        if hasattr(self.frontier, "push_many"):
            self._batch = []
        offer = getattr(spider, "use_queue_upgrades", None)
        if callable(offer) and hasattr(self.frontier, "upgrade"):
            offer(self.upgrade_queued)
        if len(self.frontier):
            logger.info("Resuming crawl with %d queued URLs", len(self.frontier))

    def _refuse(self, message: str, reason: str = "redis_auth", exit_status: int = 0) -> None:
        """The frontier cannot open (Redis refused the credentials, the JOBDIR is another
        crawl's, …): one line, then the spider closes once open (an empty local frontier until
        then; raising here would leave Scrapy's scraper unopened)."""
        logger.log(*first_report(message))
        self.frontier = MemoryFrontier(None)
        if exit_status:
            self.stats.set_value("focuscrawl/exit_status", exit_status)

        def close_now(spider: Spider) -> None:
            raise CloseSpider(reason)

        self._close_now = close_now  # the signal holds a weak reference
        self.crawler.signals.connect(close_now, signals.spider_opened)

    def close(self, reason: str) -> None:
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        if self.frontier is not None:
            guard = self._guarded
            guard.stop()
            if guard.paused:  # Redis away or full: what this worker holds comes back by itself
                logger.error(
                    "Closing while the Redis frontier is unavailable: %d link(s) and %d ack(s) "
                    "not sent; the pages they came from stay leased and are fetched again "
                    "when their leases expire",
                    len(self._batch or ()) + len(self._replacing),
                    len(self._acks),
                )
            else:
                self._flush()
                left = guard.call(len, self.frontier, default=-1)
                if left >= 0:
                    self.stats.set_value("focuscrawl/frontier/left", left)
            try:
                self.frontier.close()
            except FrontierUnavailable as exc:
                logger.error("Redis frontier not closed cleanly (%s): leases will expire", exc)
            self._report_quarantine()
            if self.frontier.redelivered:
                self.stats.set_value("focuscrawl/quarantine/redelivered", self.frontier.redelivered)

    def _report_quarantine(self) -> None:
        """Count and log (one line each) the URLs the frontier quarantined since the last call:
        their processing killed the crawler or its worker ``quarantine_after`` times."""
        assert self.frontier is not None
        records, self.frontier.quarantined = self.frontier.quarantined, []
        for record in records:
            self.stats.inc_value("focuscrawl/quarantine/urls")
            logger.warning(
                "Quarantined %s: the crawler died %d times while it was in flight; not "
                "fetched again (fingerprint %s)",
                record.url,
                record.attempts,
                record.fingerprint,
            )

    @property
    def _guarded(self) -> FrontierGuard:
        if self._guard is None:  # opened without open() (tests): a guard with no timers
            assert self.frontier is not None
            self._guard = FrontierGuard(self.crawler, self.frontier, self._send_kept)
        return self._guard

    def has_pending_requests(self) -> bool:
        if self.frontier is None:
            return False
        if self._guarded.paused:
            return True  # Redis away or full: the crawl waits for it, it does not end
        self._flush()
        if self._guarded.call(len, self.frontier, default=0) > 0 or self._guarded.paused:
            return True
        return self._leased_elsewhere()

    def _leased_elsewhere(self) -> bool:
        """Nothing queued, but entries leased by another worker or by an earlier run that
        stopped without giving them back (Redis was away, a kill): the crawl waits for them
        (their leases expire into the queue, or their workers acknowledge them), logged once."""
        elsewhere = getattr(self.frontier, "leased_elsewhere", None)
        if elsewhere is None:
            return False
        n = self._guarded.call(elsewhere, default=0)
        if n > 0 and not self._waited_for_leases:
            self._waited_for_leases = True
            logger.info(
                "Frontier empty but %d entr%s leased elsewhere (another worker, or a run that "
                "stopped without giving them back): waiting until they are acknowledged or "
                "their leases expire (FOCUSCRAWL_REDIS_LEASE)",
                n,
                "y" if n == 1 else "ies",
            )
        return n > 0 or self._guarded.paused

    def __len__(self) -> int:
        if self.frontier is None or self._guarded.paused:
            return 0
        self._flush()
        return self._guarded.call(len, self.frontier, default=0)

    # -- queue ----------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        assert self.frontier is not None and self.spider is not None
        parent_fp = request.meta.get(FP_META)
        host = host_of(request.url)
        if self.max_pages_per_host and self._per_host[host] >= self.max_pages_per_host:
            self.stats.inc_value("focuscrawl/frontier/rejected/host_cap")
            return False
        trap = self.traps.reject(request.url, counted=not request.dont_filter)
        if trap is not None:
            self.stats.inc_value(f"focuscrawl/frontier/rejected/{trap}")
            return False
        fingerprint = self.crawler.request_fingerprinter.fingerprint(request)
        score = score_of(request)
        try:
            data = encode(request, self.spider)
        except (TypeError, ValueError):
            # not JSON-able (a callback outside the spider, objects in meta): keep it live
            self._live[fingerprint] = request
            data = {"live": 1}
            self.stats.inc_value("focuscrawl/frontier/live_requests")
        item = (request.url, score, fingerprint, data, request.dont_filter)
        if parent_fp:  # a redirect or retry of a popped request: the new request replaces it
            return self._push_replacing(request, item, bytes.fromhex(parent_fp))
        if self._batch is not None:
            self._batch.append((request, item))
            if len(self._batch) >= BATCH:
                self._flush()
            return True  # its outcome (added, upgraded, duplicate) is counted at the flush
        result = self._guarded.call(self.frontier.push, *item, default=None)
        if result is None:  # not written (a storage fault stops the crawl): its page is not
            return False  # acknowledged either, so the resumed crawl finds it again
        if self._count(request, result):
            return True
        self._dropped(request)
        return False

    def upgrade_queued(self, links: Iterable[tuple[str, float, RequestState]]) -> int:
        """Move queued links up to new scores (``(url, score, state)``) without sending a
        request through the spider middlewares and the engine: the learned judge's re-scores,
        some 200 links every 25 pages, of URLs queued already. A link that is not queued
        (fetched since, or refused by a middleware or a cap when it was found) stays out: an
        upgrade never adds. Offered to the spider (``use_queue_upgrades``) only by frontiers
        that can do it in process (the in-memory one); returns the links moved."""
        assert self.frontier is not None and self.spider is not None
        errback = getattr(self.spider, "errback", None)
        fingerprint = self.crawler.request_fingerprinter.fingerprint
        moved = missed = 0
        for url, score, state in links:
            request = Request(url, errback=errback, meta={STATE_META: state})
            try:
                data = encode(request, self.spider)
            except (TypeError, ValueError):
                continue
            item = (url, score, fingerprint(request), data)
            result = self._guarded.call(self.frontier.upgrade, *item, default=None)  # type: ignore[attr-defined]
            if result is PushResult.UPGRADED:
                moved += 1
            elif result is PushResult.ABSENT:
                missed += 1
        if moved:
            self.stats.inc_value("focuscrawl/frontier/upgraded", moved)
            self.stats.inc_value("focuscrawl/frontier/upgraded_direct", moved)
        if missed:
            self.stats.inc_value("focuscrawl/frontier/upgrade_absent", missed)
        return moved

    def _push_replacing(self, request: Request, item: tuple[Any, ...], parent: bytes) -> bool:
        """Push ``item`` and acknowledge the request it replaces (one script with Redis)."""
        assert self.frontier is not None
        self._flush()
        if self._guarded.paused:
            self._replacing.append((item, parent))
            return True
        push = self.frontier.push_replacing  # type: ignore[attr-defined]
        result = self._guarded.call(push, item, parent, default=None)
        if result is None:
            if self._guarded.paused:
                self._replacing.append((item, parent))
                return True
            return False
        if self._count(request, result):
            return True
        self._dropped(request)
        return False

    def _flush(self, ack: tuple[bytes, ...] = (), force: bool = False) -> None:
        """Send the batched pushes (then ``ack``) without waiting; their outcomes are counted
        when the frontier reads the reply (with its next pop or count: one round trip for both)."""
        if (self._guarded.paused and not force) or self._guarded.stopped:
            self._acks.extend(ack)  # sent, after the links they follow, when it is back
            return
        if not self._batch and not ack and not self._acks:
            return
        assert self.frontier is not None
        batch, self._batch = self._batch or [], [] if self._batch is not None else None
        acks, self._acks = (*self._acks, *ack), []

        def counted(results: list[PushResult]) -> None:
            for (request, _), result in zip(batch, results, strict=True):
                if not self._count(request, result):
                    self._dropped(request)

        # on a Redis Cluster the frontier may send now (its held links past a limit) and meet
        # a failing master: the links and acks stay in the frontier, sent again when it is
        # back; the crawl pauses as for any other call (a signal handler must not raise).
        # ``force`` (the resend when Redis is back): raised to the outage, which tries again
        push = self.frontier.push_many  # type: ignore[attr-defined]
        items = [item for _, item in batch]
        if force:
            push(items, acks, counted)
        else:
            self._guarded.call(push, items, acks, counted, default=None)

    def _send_kept(self) -> None:
        """Redis is back: what was kept while it was away goes now (raises while it cannot)."""
        assert self.frontier is not None
        replacing, self._replacing = self._replacing, []
        for n, (item, parent) in enumerate(replacing):
            try:
                self.frontier.push_replacing(item, parent)  # type: ignore[attr-defined]
            except FrontierUnavailable:
                self._replacing[:0] = replacing[n:]
                raise
        self._flush(force=True)
        self.frontier.flush()  # type: ignore[attr-defined]

    def _count(self, request: Request, result: PushResult) -> bool:
        if result is PushResult.ADDED:
            self._per_host[host_of(request.url)] += 1
            self.traps.added(request.url)
            self.stats.inc_value("focuscrawl/frontier/enqueued")
            return True
        if result is PushResult.UPGRADED:
            self.stats.inc_value("focuscrawl/frontier/upgraded")
            return True
        self.stats.inc_value("focuscrawl/frontier/duplicate")
        if "redirect_urls" in request.meta:
            self.stats.inc_value("focuscrawl/skip/redirect_loop")
            logger.info(
                "Redirect loop or repeat: %s (via %s)",
                request.url,
                request.meta["redirect_urls"][-3:],
            )
        return False

    def _dropped(self, request: Request) -> None:
        """What the engine does when ``enqueue_request`` returns False, for a batched push."""
        self.crawler.signals.send_catch_log(
            signals.request_dropped, request=request, spider=self.spider
        )

    def next_request(self) -> Request | None:
        assert self.frontier is not None and self.spider is not None
        guard = self._guarded
        if guard.paused or guard.stopped:
            return None  # Redis away or full, or a storage fault: nothing handed out
        self._flush()
        if self.frontier.quarantined:  # by the last pop (a Redis lease expired)
            self._report_quarantine()
        while True:  # an entry that cannot become a request is dropped: pop the next one
            entry = self._pop()
            if entry is None:
                return None
            self.stats.inc_value("focuscrawl/frontier/dequeued")
            wait = self._delays.handed(host_of(entry.url), time.monotonic())
            if isinstance(entry.data, dict) and entry.data.get("live"):
                request = self._live.pop(entry.fingerprint, None)
                if request is None:  # a live request from another process (journal or Redis)
                    self.stats.inc_value("focuscrawl/frontier/lost_live")
                    self._guarded.call(self.frontier.ack, entry.fingerprint, default=None)
                    continue
                request.meta[FP_META] = entry.fingerprint.hex()
            else:
                try:
                    request = decode(entry.url, entry.fingerprint, entry.data, self.spider)
                except BadEntry as exc:
                    self._bad_entry(entry.url, entry.fingerprint, exc)
                    continue
            if wait is not None:
                request.meta[DELAY_META] = wait
            return request

    def _bad_entry(self, url: str, fingerprint: bytes, exc: BadEntry) -> None:
        """An entry that breaks a rule of :mod:`.trust` (written by someone else into Redis or
        the journal): acknowledged, never re-queued; counted; logged once per kind."""
        assert self.frontier is not None
        self._guarded.call(self.frontier.ack, fingerprint, default=None)
        self.stats.inc_value("focuscrawl/skip/bad_queue_entry")
        self.stats.inc_value(f"focuscrawl/skip/bad_queue_entry/{exc.kind}")
        if exc.kind not in self._bad_kinds:
            self._bad_kinds.add(exc.kind)
            logger.warning(
                "Dropped a frontier entry this crawler did not write (%s): %r; others of this "
                "kind are only counted (focuscrawl/skip/bad_queue_entry/%s)",
                exc, str(url)[:200], exc.kind,
            )  # fmt: skip

    def _pop(self) -> FrontierEntry | None:
        """The best entry of a host that can be fetched now. When every queued host waits out
        its download delay: nothing, and the engine is asked again when the first is ready
        (rule ``drawn``); the best of all, which waits in its downloader slot (the others)."""
        guard = self._guarded
        if self._delay <= 0:
            return guard.call(self.frontier.pop, self._busy, default=None)
        self._delayed, self._earliest = False, math.inf
        entry = guard.call(self.frontier.pop, self._waiting, default=None)
        if entry is None and self._delayed:
            self.stats.inc_value("focuscrawl/frontier/all_hosts_delayed")
            if self._delays.draws:
                self._wake_at(self._earliest)
                return None
            entry = guard.call(self.frontier.pop, self._busy, default=None)
        return entry

    def _wake_at(self, when: float) -> None:
        """Ask the engine for requests again at ``when`` (monotonic), when the first waiting
        host is ready: without it the engine asks only when a download ends or at its 5 s
        heartbeat. One call is pending at most (the earliest)."""
        if not math.isfinite(when) or not is_reactor_installed():  # no crawl running
            return
        if self._wake is not None:
            if self._wake_due <= when:
                return  # an earlier call is due
            self._wake.cancel()
        self._wake_due = when
        self._wake = call_later(max(0.0, when - time.monotonic()), self._ask_engine)

    def _ask_engine(self) -> None:
        self._wake = None
        slot = getattr(self.crawler.engine, "_slot", None)  # Scrapy has no public poke
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def _slot_delay(self, key: str) -> tuple[float, float]:
        """A download slot's own delay and jitter (``DOWNLOAD_SLOTS``, else the settings')."""
        own = self._slot_settings.get(key)
        if not own:
            return self._delays.delay, self._delays.jitter
        jitter = own.get("jitter")
        if jitter is None:
            jitter = 0.5 * bool(own["randomize_delay"]) if "randomize_delay" in own else None
        return (
            float(own.get("delay", self._delays.delay)),
            self._delays.jitter if jitter is None else float(jitter),
        )

    def _waiting(self, host: str) -> bool:
        """Busy (:meth:`_busy`), or not yet past its download delay (:mod:`.hostdelay`):
        handed out now, a request would hold one of the engine's ``CONCURRENT_REQUESTS`` while
        it waits in the host's downloader slot, when a request to another host could be
        downloading. The last hand-out counts as well as the slot's last download: a request
        is in no slot while the downloader middlewares (robots.txt, the address guard) still
        hold it."""
        if self._busy(host):
            return True
        engine = self.crawler.engine
        slot = engine.downloader.slots.get(host) if engine is not None else None
        if slot is not None and not self._delays.draws:  # its own (AutoThrottle sets it)
            delay, jitter = slot.delay, slot.jitter
        else:  # the slot's delay is the last draw: the host's own is in the settings
            delay, jitter = self._slot_delay(host)
        ready = self._delays.ready_at(
            host, slot.lastseen if slot is not None else 0.0, delay, jitter
        )
        if time.monotonic() < ready:
            self._delayed = True
            self._earliest = min(self._earliest, ready)
            return True
        return False

    def _on_reached_downloader(self, request: Request, spider: Spider | None = None) -> None:
        """The request is in its downloader slot: the slot waits the delay drawn for it when
        it was handed out (no jitter of its own: the draw is Scrapy's distribution), else the
        slot's own delay and jitter (robots.txt, a request another component sent)."""
        engine = self.crawler.engine
        key = request.meta.get("download_slot")
        slot = engine.downloader.slots.get(key) if engine is not None and key else None
        if slot is None:
            return
        wait = request.meta.pop(DELAY_META, None)
        delay, jitter = self._slot_delay(key)
        # only a draw of the slot's own distribution: never shorter nor longer than it allows
        if isinstance(wait, int | float) and delay * (1 - jitter) <= wait <= delay * (1 + jitter):
            slot.delay, slot.jitter = float(wait), 0.0
            if slot.latercall is not None:
                # armed when the host's last request went, for that request's own draw: the
                # slot would hold this one until then. Cancelled, the slot's next look (right
                # after this signal) waits this request's draw instead, from the same lastseen
                slot.latercall.cancel()
                slot.latercall = None
            if slot.lastseen and time.monotonic() < slot.lastseen + slot.delay:
                # handed out before its host was ready (it waits): the frontier's
                # readiness was wrong, or another request went to the host meanwhile
                self.stats.inc_value("focuscrawl/frontier/slot_waits")
        else:
            slot.delay, slot.jitter = delay, jitter
            self.stats.inc_value("focuscrawl/frontier/slot_undrawn")

    def _busy(self, host: str) -> bool:
        """A host is skipped while its downloader slot is full, or (cluster) while its shared
        slots across all workers are taken."""
        engine = self.crawler.engine
        if engine is None:
            return False
        slot = engine.downloader.slots.get(host)
        if slot is not None and len(slot.active) >= self.host_slots:
            return True
        gate = getattr(self.crawler, "focuscrawl_host_gate", None)
        if gate is None:
            return False
        try:
            return gate.busy(host)
        except Exception:  # Redis unreachable: the politeness middleware waits and retries
            return False

    def _on_done(self, request: Request, **kwargs: Any) -> None:
        fp = request.meta.get(FP_META)
        if fp and self.frontier is not None:
            if self._batch is not None:
                self._flush(ack=(bytes.fromhex(fp),))  # the page's links first, then its ack
            elif not self._guarded.stopped:  # after a storage fault: left in flight (resumed)
                self._guarded.call(self.frontier.ack, bytes.fromhex(fp), default=None)


def delay_rule(settings: Any) -> str:
    """``FOCUSCRAWL_DELAY_READY``; with AutoThrottle, which sets each slot's delay itself, a
    drawn delay would undo it: ``mean`` then."""
    rule = defaults.read(settings, "FOCUSCRAWL_DELAY_READY")
    if rule == "drawn" and settings.getbool("AUTOTHROTTLE_ENABLED"):
        return "mean"
    return rule
