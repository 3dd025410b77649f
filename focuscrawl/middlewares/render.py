"""Render JavaScript pages in a browser: ``FOCUSCRAWL_RENDER_JS`` = ``never`` / ``auto`` / ``always``.

``auto``: a fetched HTML page whose markup is an empty script shell
(:func:`focuscrawl.render.shell.scan`) is fetched once more, through the browser, if its host
may render (``FOCUSCRAWL_RENDER_HOSTS``) and has budget left (``FOCUSCRAWL_RENDER_BUDGET``);
the shell never reaches the spider, the rendered page does. The new request carries
``meta["focuscrawl_render"]`` (a frontier entry may hold it; :mod:`focuscrawl.frontier.trust`),
so a page is rendered once and never again, even if it is still a shell.

``always``: every request but robots.txt goes through the browser, within the same hosts and
budget (past them, a plain fetch).

scrapy-playwright's own meta keys (``playwright``, ``playwright_context_kwargs``) are set here,
in ``process_request``, after the frontier, and removed from any request this middleware does
not render: a queue entry cannot steer the browser. The browser's traffic goes through the
address guard proxy of :mod:`focuscrawl.middlewares.render_handler`.

Stats: ``focuscrawl/render/shell`` (shells seen), ``…/requested``, ``…/rendered`` (pages
the browser returned), ``…/failed``, ``…/skip/<host|budget|hosts_cap>``, ``…/blocked``
(connections the browser was refused).
"""

from __future__ import annotations

import logging
import shutil
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.httpobj import urlparse_cached

from focuscrawl.meta import NO_CONDITIONAL_META, RENDER_META
from focuscrawl.render import browser
from focuscrawl.render.policy import RenderPolicy
from focuscrawl.render.shell import scan

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

PLAYWRIGHT_META = ("playwright", "playwright_context_kwargs")
STATS = "focuscrawl/render"
HANDLER = "focuscrawl.middlewares.render_handler.GuardedPlaywrightHandler"


class RenderMiddleware:
    def __init__(self, mode: str, policy: RenderPolicy, stats: StatsCollector) -> None:
        self.mode = mode
        self.policy = policy
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        s = crawler.settings
        mode = s.get("FOCUSCRAWL_RENDER_JS") or "never"
        if mode == "never":  # the default: a DEBUG line, not Scrapy's "Disabled" warning
            logger.debug("off: FOCUSCRAWL_RENDER_JS is never")
            raise NotConfigured
        assert crawler.stats is not None
        policy = RenderPolicy.parse(
            s.getlist("FOCUSCRAWL_RENDER_HOSTS"), s.getint("FOCUSCRAWL_RENDER_BUDGET")
        )
        return cls(mode, policy, crawler.stats)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        host = urlparse_cached(request).hostname or ""
        if meta.get(RENDER_META):  # a shell found in auto mode (its host's budget charged)
            if self.policy.host_allowed(host):
                self._render(request)
                return
            meta.pop(RENDER_META)
            self.stats.inc_value(f"{STATS}/skip/host")
        elif self.mode == "always" and not meta.get("dont_obey_robotstxt"):
            why = self.policy.admit(host)
            if why is None:
                meta[RENDER_META] = True
                self._render(request)
                return
            self.stats.inc_value(f"{STATS}/skip/{why}")
        for key in PLAYWRIGHT_META:
            meta.pop(key, None)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Request | Response:
        if request.meta.get("playwright"):
            self.stats.inc_value(f"{STATS}/rendered")
            return response
        if (
            self.mode != "auto"
            or request.meta.get(RENDER_META)
            or response.status != 200
            or not isinstance(response, HtmlResponse)
        ):
            return response
        verdict = scan(response.body)
        if not verdict.shell:
            return response
        self.stats.inc_value(f"{STATS}/shell")
        why = self.policy.admit(urlparse_cached(request).hostname or "")
        if why is not None:
            self.stats.inc_value(f"{STATS}/skip/{why}")
            return response
        self.stats.inc_value(f"{STATS}/requested")
        logger.debug("Render %s: %s", request.url, ", ".join(verdict.reasons))
        meta = {**request.meta, RENDER_META: True, NO_CONDITIONAL_META: True}
        return request.replace(meta=meta, dont_filter=True)

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        if request.meta.get("playwright"):
            self.stats.inc_value(f"{STATS}/failed")
            logger.info("Render of %s failed: %s", request.url, exception)

    def _render(self, request: Request) -> None:
        request.meta["playwright"] = True
        request.meta["playwright_context_kwargs"] = browser.CONTEXT_KWARGS


def configure(settings: BaseSettings) -> list[str]:
    """The add-on's part for rendering: with ``FOCUSCRAWL_RENDER_JS`` other than ``never``,
    the download handlers and scrapy-playwright's settings (at ``addon`` priority, so a
    project's own ``PLAYWRIGHT_*`` still win). Returns what stops the crawl, one line each."""
    mode = settings.get("FOCUSCRAWL_RENDER_JS") or "never"
    if mode == "never":
        return []
    errors: list[str] = []
    try:
        import scrapy_playwright  # noqa: F401
    except ImportError:
        errors.append(
            f"FOCUSCRAWL_RENDER_JS={mode} needs scrapy-playwright: pip install 'focuscrawl[render]'"
        )
    executable = settings.get("FOCUSCRAWL_RENDER_BROWSER") or ""
    if not shutil.which(executable):
        errors.append(
            f"FOCUSCRAWL_RENDER_BROWSER: no chromium at {executable!r} "
            "(scripts/setup-system installs Debian's chromium)"
        )
    if errors:
        return errors
    for scheme in ("http", "https"):  # a project's own handler (higher priority) still wins
        settings["DOWNLOAD_HANDLERS"].set(scheme, HANDLER, priority="addon")
    opts: dict[str, Any] = {
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": browser.launch_options(executable),
        "PLAYWRIGHT_MAX_CONTEXTS": 1,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": settings.getint("FOCUSCRAWL_RENDER_CONCURRENCY"),
        "PLAYWRIGHT_ABORT_REQUEST": "focuscrawl.render.browser.abort_request",
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": settings.getfloat("DOWNLOAD_TIMEOUT", 30) * 1000,
    }
    for name, value in opts.items():
        settings.set(name, value, priority="addon")
    return []
