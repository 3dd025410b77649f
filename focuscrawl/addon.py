"""The focuscrawl Scrapy add-on: ``ADDONS = {"focuscrawl.addon.FocusCrawlAddon": 0}``.

Registers the scheduler, middlewares, pipelines and extensions, and the ``FOCUSCRAWL_*``
defaults, at ``addon`` priority so a project's settings and ``-s`` options still win.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy.settings import BaseSettings

from focuscrawl.defaults import DEFAULTS

logger = logging.getLogger(__name__)

DOWNLOADER_MIDDLEWARES = {
    # process_response runs from high orders to low: below 590 (decompression), 600
    # (redirects) and 550 (retries) it sees only final, decoded bodies
    "focuscrawl.middlewares.partition.PartitionMiddleware": 90,
    # above partition: sees the fetched HTML first and fetches an empty script shell again
    # in the browser (FOCUSCRAWL_RENDER_JS; off when never)
    "focuscrawl.middlewares.render.RenderMiddleware": 100,
    # below partition: it fingerprints the parsed page; it also adds the conditional headers
    "focuscrawl.middlewares.conditional_get.ConditionalGetMiddleware": 80,
    # archives bodies as they came off the wire (above decompression, 590) and every redirect
    # hop (above 600), and only responses the address guard (760) let through; off unless
    # FOCUSCRAWL_WARC_DIR is set
    "focuscrawl.middlewares.warc.WarcMiddleware": 755,
    # cluster only (opts out without Redis): per-host limits shared by all workers
    "focuscrawl.cluster.middleware.ClusterPolitenessMiddleware": 990,
    # refuses private, loopback, … addresses (FOCUSCRAWL_ALLOW_PRIVATE); above HttpProxy (750),
    # so it sees the proxy, and above Retry (550), so a refusal is not retried
    "focuscrawl.middlewares.addresses.AddressGuardMiddleware": 760,
    # Scrapy's decompression, which stops at DOWNLOAD_MAXSIZE, plus a stat for the bombs
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "focuscrawl.middlewares.compression.CountedHttpCompressionMiddleware": 590,
    # the work mark (JOBDIR): set before the first process_response, cleared after the last
    "focuscrawl.middlewares.workmark.WorkStartDownloaderMiddleware": 995,
    "focuscrawl.middlewares.workmark.WorkEndDownloaderMiddleware": 5,
}
SPIDER_MIDDLEWARES = {
    # outermost: acknowledges a frontier entry once its response's output is consumed
    "focuscrawl.middlewares.ack.FrontierAckMiddleware": 10,
    # outside it: the work mark around the callback and each step of its output (JOBDIR)
    "focuscrawl.middlewares.workmark.WorkMarkSpiderMiddleware": 5,
}
ITEM_PIPELINES = {
    "focuscrawl.middlewares.workmark.WorkStartPipeline": 1,  # the work mark (JOBDIR)
    "focuscrawl.pipelines.relevance.RelevancePipeline": 300,
    # near-duplicates only (FOCUSCRAWL_DEDUP): a copy is not a second relevant page
    "focuscrawl.pipelines.dedup.DuplicatePipeline": 310,
    "focuscrawl.pipelines.change.ChangeDetectionPipeline": 500,
    "focuscrawl.pipelines.index.IndexPipeline": 800,
    # FOCUSCRAWL_CHANGE_WEBHOOK only: significant changes to a webhook, through an outbox
    "focuscrawl.pipelines.webhook.ChangeWebhookPipeline": 900,
    "focuscrawl.middlewares.workmark.WorkEndPipeline": 999,
}
EXTENSIONS = {
    "scrapy.extensions.logstats.LogStats": None,
    # spider.state written whole or not at all (a full disk leaves the previous one)
    "scrapy.extensions.spiderstate.SpiderState": None,
    "focuscrawl.extensions.spiderstate.SpiderState": 0,
    "focuscrawl.extensions.progress.HarvestLogStats": 0,
    "focuscrawl.extensions.crawllog.CrawlLog": 10,
    "focuscrawl.extensions.statsfile.StatsFile": 20,
    "focuscrawl.cluster.stats.ClusterStats": 30,  # cluster only
    "focuscrawl.extensions.gcfreeze.GcFreeze": 5,  # before StatsFile: its stats are written
    "focuscrawl.extensions.reactorlag.ReactorLagStats": 6,  # before StatsFile, as GcFreeze
    "focuscrawl.extensions.summary.CrawlSummary": 40,  # the readable summary at the end
}
SCRAPY_DEFAULTS: dict[str, Any] = {
    "SCHEDULER": "focuscrawl.frontier.scheduler.FocusScheduler",
    "ROBOTSTXT_OBEY": True,
    "REDIRECT_MAX_TIMES": 10,
    "COOKIES_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,
    "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    # a page's callback yields one item and its links; Scrapy (2.13+, asyncio) starts this many
    # worker tasks for every response's output: 100 by default, ~100 tasks a page (~6 % of a
    # crawl's CPU in cProfile); 16 still overlaps the pipelines' I/O (bench_crawl: topical
    # 185 -> 200 pages/s in the same session)
    "CONCURRENT_ITEMS": 16,
    # a stranger's server must not fill the memory or hold a slot forever: bodies are cut at
    # DOWNLOAD_MAXSIZE (also after decompression), and DOWNLOAD_TIMEOUT bounds the whole
    # response, body included (Scrapy's defaults: 1 GB, 32 MB warning, 180 s)
    "DOWNLOAD_MAXSIZE": 10 * 1024 * 1024,
    "DOWNLOAD_WARNSIZE": 2 * 1024 * 1024,
    "DOWNLOAD_TIMEOUT": 30,
    # a dropped item (every unchanged page of a recrawl, every irrelevant page) is counted and
    # summarised, not logged as a WARNING with its whole text (DEBUG: one line with its URL)
    "LOG_FORMATTER": "focuscrawl.extensions.logformatter.QuietLogFormatter",
}


class FocusCrawlAddon:
    def update_settings(self, settings: BaseSettings) -> None:
        for name, value in {**DEFAULTS, **SCRAPY_DEFAULTS}.items():
            settings.set(name, value, priority="addon")
        for key, components in (
            ("DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES),
            ("SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARES),
            ("ITEM_PIPELINES", ITEM_PIPELINES),
            ("EXTENSIONS", EXTENSIONS),
        ):
            for path, order in components.items():
                settings[key].set(path, order, priority="addon")
        _check(settings)


def _check(settings: BaseSettings) -> None:
    """Another project's crawl (the project's own ``scrapy crawl`` checked before): one line per
    wrong value, then ``SystemExit(2)``: the process ends before the engine starts, as a usage
    error (a script that runs crawlers can catch it)."""
    from focuscrawl.validation import setting_errors

    errors = setting_errors(settings)
    if not errors:  # FOCUSCRAWL_RENDER_JS: the browser's download handler and settings
        from focuscrawl.middlewares.render import configure

        errors = configure(settings)
    for error in errors:
        logger.error("focuscrawl: error: %s", error)
    if errors:
        raise SystemExit(2)
