"""The end of every crawl: a short, readable summary, and a crawl that fetched nothing says why.

At ``spider_closed`` it logs (INFO)::

    Crawl finished (finished): 511 pages in 6 s (84 pages/s), 283 relevant of 500 judged (harvest rate 0.566)
      top hosts: 127.0.0.2 120, 127.0.0.3 98, 127.0.0.5 77
      not fetched: status 404 12, forbidden by robots.txt 3, address not allowed 2
      changes: new 3, significant 5, insignificant 2, unchanged 480, deleted 1
      dropped: 497 items (recrawl: unchanged or insignificant 482, irrelevant 15); LOG_LEVEL=DEBUG lists them
      wrote: items harvest.jsonl; crawl log crawl.jsonl; index focuscrawl-data/index.sqlite; WARC warc/ (2 files)

A crawl that fetched no page because its seeds failed (refused, timed out, 404, robots-disallowed,
an address not allowed, …) ends with one ERROR line per seed and why, and sets the stat
``focuscrawl/exit_status`` to :data:`NOTHING_FETCHED`, which the project's ``scrapy crawl``
command turns into its exit status. A run that fetched nothing because nothing was new (a resumed
JOBDIR crawl at its end, a cluster worker the others left nothing to) ends normally.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Spider, signals

from focuscrawl import defaults
from focuscrawl.frontier.state import state_of
from focuscrawl.signals import page_fetched, request_failed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: the exit status of a crawl that fetched no page (2 is a usage error)
NOTHING_FETCHED = 3
TOP_HOSTS = 5
MAX_SEEDS = 1000  # seeds whose fate is kept for the summary
MAX_HOSTS = 100_000  # hosts counted for the "top hosts" line
#: the change statuses the ``changes`` line counts, in its order (focuscrawl/change/<status>)
CHANGE_STATUSES = ("new", "significant", "insignificant", "unchanged", "deleted")


def failure_reason(failure: Failure) -> str:
    """Why a request failed, in a few words a user can act on."""
    name = failure.type.__name__ if failure.type else "error"
    message = failure.getErrorMessage()
    response = getattr(failure.value, "response", None)
    if response is not None:
        return f"status {response.status}"
    if "robots.txt" in message:
        return "forbidden by robots.txt"
    if name == "AddressBlocked":
        return "address not allowed (FOCUSCRAWL_ALLOW_PRIVATE)"
    if "Refused" in name or "refused" in message.lower():
        return "connection refused"
    if "Timeout" in name or "timed out" in message.lower():
        return "timeout"
    if name == "DNSLookupError":
        return "DNS lookup failed"
    if name == "DownloadCancelledError" or "maxsize" in message.lower():
        return "too large (DOWNLOAD_MAXSIZE)"
    return f"{name}: {message}"[:200]


def change_counts(stats: dict[str, Any]) -> dict[str, int]:
    """Pages by change status (all five, zeros included) if change detection ran, else ``{}``."""
    counts = {k: int(stats.get(f"focuscrawl/change/{k}", 0) or 0) for k in CHANGE_STATUSES}
    return counts if any(counts.values()) else {}


class CrawlSummary:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.hosts: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.fetched: dict[str, int] = {}  # URL -> status, for the seeds' fate (bounded below)
        self.failed: dict[str, str] = {}  # URL -> why, likewise

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlSummary:
        ext = cls(crawler)
        crawler.signals.connect(ext.page_fetched, page_fetched)
        crawler.signals.connect(ext.request_failed, request_failed)
        crawler.signals.connect(ext.spider_closed, signals.spider_closed)
        return ext

    # -- what happened --------------------------------------------------------------------
    def page_fetched(self, record: dict[str, Any], spider: Spider) -> None:
        host = urlsplit(record["url"]).hostname or "?"
        if host in self.hosts or len(self.hosts) < MAX_HOSTS:  # bounded on a web-scale crawl
            self.hosts[host] += 1
        if record.get("depth") == 0 and len(self.fetched) < MAX_SEEDS:  # seeds and examples
            self.fetched[record["url"]] = record["status"]

    def request_failed(self, failure: Failure, spider: Spider) -> None:
        reason = failure_reason(failure)
        self.failures[reason.split(":")[0]] += 1
        request = failure.request  # type: ignore[attr-defined]
        state = state_of(request.meta)
        if state is not None and state.depth == 0 and len(self.failed) < MAX_SEEDS:
            self.failed[request.url] = reason

    def seed_outcomes(self, spider: Spider) -> dict[str, str]:
        topic = getattr(spider, "topic", None)
        seeds = list(getattr(topic, "seeds", []) or []) or list(self.failed)
        out = {}
        for url in seeds:
            if url in self.fetched:
                out[url] = f"fetched (status {self.fetched[url]})"
            else:
                out[url] = self.failed.get(url, "no response (filtered, or redirected elsewhere)")
        return out

    # -- the end ------------------------------------------------------------------------
    def spider_closed(self, spider: Spider, reason: str) -> None:
        stats = self.crawler.stats
        assert stats is not None
        get = stats.get_value
        pages = get("focuscrawl/pages", 0)
        if not pages and self.failed:  # the seeds were requested and failed
            stats.set_value("focuscrawl/exit_status", NOTHING_FETCHED)
            logger.error("Nothing was fetched (%s).", reason)
            for url, outcome in self.seed_outcomes(spider).items():
                logger.error("  seed %s: %s", url, outcome)
            return
        if not pages:  # a resumed crawl with nothing left, a cluster worker the others outran
            logger.info("Crawl %s: nothing new to fetch (the seeds were seen before)", reason)
            return
        judged = get("focuscrawl/harvest/pages", 0)
        relevant = get("focuscrawl/harvest/relevant", 0)
        seconds = float(get("elapsed_time_seconds", 0) or 0)
        rate = f" ({pages / seconds:.0f} pages/s)" if seconds else ""
        logger.info(
            "Crawl %s: %d pages in %.0f s%s, %d relevant of %d judged (harvest rate %.3f)",
            reason, pages, seconds, rate, relevant, judged, relevant / judged if judged else 0.0,
        )  # fmt: skip
        top = ", ".join(f"{h} {n}" for h, n in self.hosts.most_common(TOP_HOSTS))
        logger.info("  top hosts: %s", top)
        if self.failures:
            shown = ", ".join(f"{why} {n}" for why, n in self.failures.most_common(8))
            logger.info("  not fetched: %s", shown)
        changes = change_counts(stats.get_stats())
        if changes:
            logger.info("  changes: %s", ", ".join(f"{k} {n}" for k, n in changes.items()))
        dropped = self._dropped()
        if dropped:
            logger.info("  dropped: %s; LOG_LEVEL=DEBUG lists them", dropped)
        for line in signal_lines(stats.get_stats()):
            logger.info("  %s", line)
        outputs = self._outputs()
        if outputs:
            logger.info("  wrote: %s", "; ".join(outputs))

    def _dropped(self) -> str:
        """``497 items (recrawl: unchanged or insignificant 482, irrelevant 15)``, or ``""``."""
        stats = self.crawler.stats
        assert stats is not None
        total = int(stats.get_value("item_dropped_count", 0) or 0)
        if not total:
            return ""
        parts = []
        if defaults.read(self.crawler.settings, "FOCUSCRAWL_CHANGE_DROP"):
            recrawl = int(stats.get_value("focuscrawl/change/dropped", 0) or 0)
            if recrawl:
                parts.append(f"recrawl: unchanged or insignificant {recrawl}")
        irrelevant = int(stats.get_value("focuscrawl/harvest/dropped_irrelevant", 0) or 0)
        if irrelevant:
            parts.append(f"irrelevant {irrelevant}")
        detail = f" ({', '.join(parts)})" if parts else ""
        return f"{total} items{detail}"

    def _outputs(self) -> list[str]:
        settings = self.crawler.settings
        stats = self.crawler.stats
        assert stats is not None
        out = []
        feeds = settings.getdict("FEEDS")
        if feeds:
            out.append("items " + ", ".join(str(uri) for uri in feeds))
        if settings.get("FOCUSCRAWL_CRAWL_LOG"):
            out.append(f"crawl log {settings.get('FOCUSCRAWL_CRAWL_LOG')}")
        if any(k.startswith("focuscrawl/index/") for k in stats.get_stats()):
            from focuscrawl.index.backend import describe
            from focuscrawl.pipelines.index import index_path

            out.append(f"index {describe(index_path(settings))}")
        if stats.get_value("focuscrawl/warc/response") or stats.get_value(
            "focuscrawl/warc/revisit"
        ):
            out.append(f"WARC {settings.get('FOCUSCRAWL_WARC_DIR')}")
        return out


_SIGNAL_COUNTS = ("due_at_once", "skipped", "audited", "agreed", "missed", "false_move")


def signal_lines(stats: dict[str, Any]) -> list[str]:
    """The recrawl's change-signal lines (FOCUSCRAWL_SIGNALS): what the signals decided, and
    each host's trust with its evidence (``focuscrawl/signals/trust/<host>``)."""
    lines = []
    pre = "focuscrawl/recrawl/signals/"
    if pre + "due_at_once" in stats:
        n = {k: int(stats.get(pre + k, 0)) for k in _SIGNAL_COUNTS}
        lines.append(
            f"signals: {n['due_at_once']} due at once, {n['skipped']} skipped, "
            f"{n['audited']} audited; checks {n['agreed']} agreed, {n['missed']} missed "
            f"(stale), {n['false_move']} false (lying)"
        )
    trust = sorted((k, v) for k, v in stats.items() if k.startswith("focuscrawl/signals/trust/"))
    for key, value in trust:
        lines.append(f"trust {key.rsplit('/', 1)[-1]}: {value}")
    return lines
