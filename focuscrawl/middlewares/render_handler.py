"""scrapy-playwright's download handler behind the render guard proxy.

:class:`GuardedPlaywrightHandler` is the ``http``/``https`` download handler when
``FOCUSCRAWL_RENDER_JS`` is not ``never`` (requests without ``meta["playwright"]`` go through
Scrapy's HTTP/1.1 handler, which it extends, exactly as before). At the first render (not at
engine start: a crawl that renders nothing starts no Playwright) it starts
:class:`~focuscrawl.render.proxy.GuardProxy` with the crawl's address policy, then
scrapy-playwright, whose browser is launched through the proxy; the proxy stops with the
handler. http and https share one handler instance: one driver, one browser, one proxy.
Browser pages are kept between renders (opening one is half a render's time), at most
``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT`` (``FOCUSCRAWL_RENDER_CONCURRENCY``) of them, each closed
after :data:`PAGE_USES` renders or a failed one.

A rendered response's peer is the proxy (127.0.0.1): it gets the address the proxy connected
to instead, or none, so the address guard judges the real peer. A navigation the proxy
refused becomes :class:`~focuscrawl.middlewares.addresses.AddressBlocked`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import weakref
from typing import TYPE_CHECKING, Any

from playwright.async_api import Page
from scrapy.utils.httpobj import urlparse_cached
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from focuscrawl.middlewares.addresses import STAT_BLOCKED, AddressBlocked
from focuscrawl.netguard import SETTING, AddressPolicy, normalize_host
from focuscrawl.render.proxy import REFUSED_HEADER, GuardProxy

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

STAT_PROXY_REFUSED = "focuscrawl/render/blocked"
MAX_LOGGED = 1000
PAGE_USES = 50  # renders a browser page serves before it is closed and a new one opened
_HANDLERS: weakref.WeakKeyDictionary[Crawler, GuardedPlaywrightHandler] = (
    weakref.WeakKeyDictionary()
)


class GuardedPlaywrightHandler(ScrapyPlaywrightDownloadHandler):
    lazy = False  # built with the downloader (Playwright itself starts at the first render)

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        policy = AddressPolicy.parse(crawler.settings.getlist(SETTING))
        cap = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.proxy = GuardProxy(policy, on_refused=self._refused, max_bytes=cap)
        self._logged: set[str] = set()
        self._closed = False
        self._started = False
        self._launch_lock = asyncio.Lock()
        # open browser pages kept between renders, and the renders at once: inside the gate
        # there is always an idle page or room for a new one (scrapy-playwright's own
        # semaphore, PLAYWRIGHT_MAX_PAGES_PER_CONTEXT, never makes a render wait)
        self._idle: list[tuple[Page, int]] = []
        self._gate = asyncio.Semaphore(self.config.max_pages_per_context)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GuardedPlaywrightHandler:
        # http and https share one handler: one Playwright driver, one browser, one proxy
        handler = _HANDLERS.get(crawler)
        if handler is None:
            handler = _HANDLERS[crawler] = cls(crawler)
        return handler

    async def close(self) -> None:
        if not self._closed:  # once, though registered for two schemes
            self._closed = True
            await super().close()

    async def _maybe_launch_in_thread(self) -> None:
        """Not at engine start: Playwright and the proxy start with the first render (a crawl
        in ``auto`` that meets no shell starts neither)."""

    async def _launch(self) -> None:
        await self.proxy.start()
        self.config.launch_options = {
            **self.config.launch_options,
            "proxy": self.proxy.launch_option(),
        }
        await super()._launch()

    async def _launched(self) -> None:
        async with self._launch_lock:
            if not self._started:
                await self._launch()
                self._started = True

    async def _close(self) -> None:
        try:
            await super()._close()
        finally:
            await self.proxy.close()

    async def download_request(  # type: ignore[override]
        self, request: Request, spider: Spider | None = None
    ) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        if not self._started:
            await self._launched()
        async with self._gate:
            response = await self._render(request)
        host = urlparse_cached(response).hostname or ""
        refused = response.headers.get(REFUSED_HEADER)
        if refused and response.status == 403:
            self.stats.inc_value(STAT_BLOCKED)
            why = refused.decode("latin-1", "replace")
            raise AddressBlocked(f"address refused: {host} is {why} and {SETTING} does not list it")
        address: Any = self.proxy.connected.get(normalize_host(host))
        return response.replace(ip_address=ipaddress.ip_address(address) if address else None)

    async def _render(self, request: Request) -> Response:
        """scrapy-playwright's download on a page kept from an earlier render (opening a page
        is about half a render's time); the page goes back to the idle list, or is closed if
        the render failed or it served :data:`PAGE_USES` renders."""
        page, uses = self._idle.pop() if self._idle else (None, 0)
        request.meta["playwright_include_page"] = True
        if page is not None:
            request.meta["playwright_page"] = page
        ok = False
        try:
            response = await super().download_request(request)
            ok = True
        finally:
            used = request.meta.pop("playwright_page", None)
            request.meta.pop("playwright_include_page", None)
            if isinstance(used, Page) and not used.is_closed():
                if ok and uses + 1 < PAGE_USES:
                    self._idle.append((used, uses + 1))
                else:
                    await used.close()
        return response

    def _refused(self, host: str, address: str, why: str) -> None:
        self.stats.inc_value(STAT_PROXY_REFUSED)
        if host not in self._logged and len(self._logged) < MAX_LOGGED:
            self._logged.add(host)
            logger.info(
                "Render: the browser was refused %s (%s is %s and %s does not list it); "
                "further refusals are only counted in %s",
                host, address, why, SETTING, STAT_PROXY_REFUSED,
            )  # fmt: skip
