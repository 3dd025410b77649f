"""Parse each HTML response once; the spider reads the Page from ``response.meta``.

``PartitionMiddleware.process_response`` partitions every 2xx HTML response into a
:class:`~focuscrawl.blocks.Page` and stores it in ``request.meta["focuscrawl_page"]`` (the dict
``response.meta`` returns once the response reaches the spider). Responses that give no page are
counted in the stats as ``focuscrawl/partition/<case>``: ``status`` (not 2xx), ``non_html``,
``empty``, ``binary``, ``unparsable``, ``error`` (an unexpected exception, logged); bodies over
``FOCUSCRAWL_MAX_PAGE_BYTES`` are cut to that size first (``truncated``) and still parsed.
Links that a host repeats on at least ``FOCUSCRAWL_TEMPLATE_LINK_SHARE`` of its pages (once
``FOCUSCRAWL_TEMPLATE_LINK_MIN_PAGES`` pages are seen) are marked ``template`` and ``noise``
(``focuscrawl/partition/template_links``); a share of 0 turns that off.

A page cut down by a budget of the partition (:mod:`focuscrawl.blocks.rules`: CSS past its size,
attributes past 256 a tag, the document past 100,000 elements, links past
``FOCUSCRAWL_MAX_LINKS_PER_PAGE``, libxml2's depth and text limits) is still used, and counted
once per budget as ``focuscrawl/skip/<name>`` (pages: ``css``, ``attributes``, ``elements``,
``links``, ``depth``, ``text``); ``focuscrawl/skip/links_dropped`` adds up the links not
recorded. Each such page logs one INFO line.

Register it below ``HttpCompressionMiddleware`` (590) and the redirect/retry middlewares, e.g.
at 90, so it sees the final, decompressed body exactly once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.http import HtmlResponse, Response, TextResponse

from focuscrawl import defaults
from focuscrawl.blocks import Page, TemplateLinks, partition, rules
from focuscrawl.blocks.decode import is_binary
from focuscrawl.blocks.kind_model import DEFAULT_KIND_MODEL, KindModel, load_kind_model
from focuscrawl.blocks.learned import DEFAULT_MODEL, BlockModel, load_model
from focuscrawl.meta import PAGE_META

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

_HTML_TYPES = (b"html", b"xhtml")


class PartitionMiddleware:
    def __init__(
        self,
        stats: StatsCollector,
        *,
        max_page_bytes: int,
        context_levels: int,
        context_words: int,
        template_links: TemplateLinks | None = None,
        max_links: int = rules.MAX_LINKS_PER_PAGE,
        block_model: BlockModel | None = None,
        kind_model: KindModel | None = None,
    ) -> None:
        self.stats = stats
        self.max_page_bytes = max_page_bytes
        self.context_levels = context_levels
        self.context_words = context_words
        self.template_links = template_links
        self.max_links = max_links
        self.block_model = block_model
        self.kind_model = kind_model

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PartitionMiddleware:
        settings = crawler.settings
        assert crawler.stats is not None
        return cls(
            crawler.stats,
            max_page_bytes=defaults.read(settings, "FOCUSCRAWL_MAX_PAGE_BYTES"),
            context_levels=defaults.read(settings, "FOCUSCRAWL_LINK_CONTEXT_LEVELS"),
            context_words=defaults.read(settings, "FOCUSCRAWL_LINK_CONTEXT_WORDS"),
            template_links=_template_links(settings),
            max_links=defaults.read(settings, "FOCUSCRAWL_MAX_LINKS_PER_PAGE"),
            block_model=_block_model(defaults.read(settings, "FOCUSCRAWL_BLOCK_MODEL")),
            kind_model=_kind_model(defaults.read(settings, "FOCUSCRAWL_KIND_MODEL")),
        )

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        try:
            page = self._page(response)
        except Exception:  # a parser bug must not lose the response: count, log, go on
            logger.exception("partition failed for %s", response.url)
            self._count("error")
            return response
        if page is not None:
            request.meta[PAGE_META] = page
        return response

    def _page(self, response: Response) -> Page | None:
        if not 200 <= response.status < 300:
            self._count("status")
            return None
        if not self._is_html(response):
            self._count("non_html")
            return None
        assert isinstance(response, TextResponse)
        body = response.body
        if not body.strip():
            self._count("empty")
            return None
        if is_binary(body):
            self._count("binary")
            return None
        if self.max_page_bytes and len(body) > self.max_page_bytes:
            self._count("truncated")
            text = body[: self.max_page_bytes].decode(response.encoding, errors="replace")
        else:
            text = response.text
        page = partition(
            text,
            response.url,
            context_levels=self.context_levels,
            context_words=self.context_words,
            max_links=self.max_links,
            block_model=self.block_model,
            kind_model=self.kind_model,
        )
        if page.cuts:
            self._count_cuts(response.url, page.cuts)
        if page.error:
            self._count(page.error)
            return None
        self._count("pages")
        if self.template_links is not None:
            marked = self.template_links.mark(page)
            if marked:
                self.stats.inc_value("focuscrawl/partition/template_links", marked)
        return page

    @staticmethod
    def _is_html(response: Response) -> bool:
        if isinstance(response, HtmlResponse):
            return True
        if not isinstance(response, TextResponse):
            return False
        ctype = (response.headers.get(b"Content-Type") or b"").lower()
        return any(t in ctype for t in _HTML_TYPES)

    def _count(self, case: str) -> None:
        self.stats.inc_value(f"focuscrawl/partition/{case}")

    def _count_cuts(self, url: str, cuts: dict[str, int]) -> None:
        for name in cuts:
            self.stats.inc_value(f"focuscrawl/skip/{name}")
        if "links" in cuts:
            self.stats.inc_value("focuscrawl/skip/links_dropped", cuts["links"])
        logger.info(
            "page cut by the partition's budgets: %s (%s)",
            url,
            ", ".join(f"{name} {amount}" for name, amount in sorted(cuts.items())),
        )


def _template_links(settings: BaseSettings) -> TemplateLinks | None:
    share = defaults.read(settings, "FOCUSCRAWL_TEMPLATE_LINK_SHARE")
    if share <= 0:
        return None  # template-link marking off
    return TemplateLinks(
        min_pages=defaults.read(settings, "FOCUSCRAWL_TEMPLATE_LINK_MIN_PAGES"),
        share=min(share, 1.0),
    )


def _block_model(value: str) -> BlockModel | None:
    """``FOCUSCRAWL_BLOCK_MODEL``: ``""`` (the rules), ``builtin`` or a model path; a model that
    does not load stops the crawl at start with the reason (``ValueError``)."""
    value = value.strip()
    if not value:
        return None
    return load_model(DEFAULT_MODEL if value == "builtin" else value)


def _kind_model(value: str) -> KindModel | None:
    """``FOCUSCRAWL_KIND_MODEL``: ``""`` (the rules tell the kind), ``builtin`` or a model path;
    a model that does not load stops the crawl at start with the reason (``ValueError``)."""
    value = value.strip()
    if not value:
        return None
    return load_kind_model(DEFAULT_KIND_MODEL if value == "builtin" else value)
