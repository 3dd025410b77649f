"""RenderMiddleware with real Scrapy objects: which responses are fetched again in the browser,
once; which requests get scrapy-playwright's keys; the add-on's settings for each mode."""

from __future__ import annotations

from typing import Any

import pytest
from focuseval.jsweb import shell_page
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.settings import Settings
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.addon import FocusCrawlAddon
from focuscrawl.frontier.trust import META_RULES
from focuscrawl.middlewares.render import HANDLER, RENDER_META, RenderMiddleware

SHELL = shell_page("Falcons", "<p>Falcons hunt birds.</p>")
PAGE = b"<html><body><p>" + b"Falcons hunt birds over the cliffs. " * 20 + b"</p></body></html>"


def middleware(**settings: Any) -> RenderMiddleware:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_RENDER_JS": "auto", **settings})
    return build_from_crawler(RenderMiddleware, crawler)


def fetched(url: str, body: bytes, request: Request | None = None) -> HtmlResponse:
    return HtmlResponse(url, body=body, request=request or Request(url))


def stat(mw: RenderMiddleware, name: str) -> Any:
    return mw.stats.get_value(f"focuscrawl/render/{name}")


def test_never_is_not_configured() -> None:
    crawler = get_crawler(settings_dict={"FOCUSCRAWL_RENDER_JS": "never"})
    with pytest.raises(NotConfigured):
        build_from_crawler(RenderMiddleware, crawler)


def test_auto_fetches_a_shell_again_once_and_never_again() -> None:
    mw = middleware()
    request = Request("http://a.example/app", meta={"focuscrawl": {"score": 0.5}})
    again = mw.process_response(request, fetched(request.url, SHELL, request))
    assert isinstance(again, Request)
    assert again.url == request.url and again.dont_filter
    assert again.meta[RENDER_META] is True
    assert again.meta["focuscrawl"] == {"score": 0.5}
    assert "playwright" not in again.meta  # set after the frontier, in process_request
    mw.process_request(again)
    assert again.meta["playwright"] is True
    still_a_shell = fetched(again.url, SHELL, again)
    assert mw.process_response(again, still_a_shell) is still_a_shell  # rendered once
    assert stat(mw, "shell") == 1 and stat(mw, "requested") == 1 and stat(mw, "rendered") == 1


def test_ordinary_pages_and_other_responses_pass() -> None:
    mw = middleware()
    request = Request("http://a.example/page")
    page = fetched(request.url, PAGE, request)
    assert mw.process_response(request, page) is page
    text = TextResponse(request.url, body=SHELL, request=request)
    assert mw.process_response(request, text) is text  # not HTML
    missing = HtmlResponse(request.url, status=404, body=SHELL, request=request)
    assert mw.process_response(request, missing) is missing
    assert stat(mw, "shell") is None


def test_hosts_and_budget() -> None:
    mw = middleware(FOCUSCRAWL_RENDER_HOSTS="a.example", FOCUSCRAWL_RENDER_BUDGET=1)
    first = Request("http://www.a.example/1")
    assert isinstance(mw.process_response(first, fetched(first.url, SHELL, first)), Request)
    second = Request("http://www.a.example/2")  # the budget is per host
    response = fetched(second.url, SHELL, second)
    assert mw.process_response(second, response) is response
    other = Request("http://b.example/1")
    response = fetched(other.url, SHELL, other)
    assert mw.process_response(other, response) is response
    assert stat(mw, "skip/budget") == 1 and stat(mw, "skip/host") == 1


def test_a_queue_entry_cannot_steer_the_browser() -> None:
    mw = middleware(FOCUSCRAWL_RENDER_HOSTS="a.example")
    forged = Request("http://a.example/x", meta={"playwright": True, "playwright_page_methods": []})
    mw.process_request(forged)
    assert "playwright" not in forged.meta
    elsewhere = Request("http://b.example/x", meta={RENDER_META: True})
    mw.process_request(elsewhere)  # the render flag for a host that may not render
    assert "playwright" not in elsewhere.meta and RENDER_META not in elsewhere.meta
    assert "playwright" not in META_RULES and META_RULES[RENDER_META](True)


def test_always_renders_every_request_but_robots_txt_within_the_budget() -> None:
    mw = middleware(FOCUSCRAWL_RENDER_JS="always", FOCUSCRAWL_RENDER_BUDGET=2)
    requests = [Request(f"http://a.example/{n}") for n in range(3)]
    for request in requests:
        mw.process_request(request)
    assert [r.meta.get("playwright", False) for r in requests] == [True, True, False]
    robots = Request("http://b.example/robots.txt", meta={"dont_obey_robotstxt": True})
    mw.process_request(robots)
    assert "playwright" not in robots.meta
    response = fetched(requests[2].url, SHELL, requests[2])
    assert mw.process_response(requests[2], response) is response  # no re-request in always


def _addon_settings(**values: Any) -> Settings:
    settings = Settings()
    settings.setmodule("focuscrawl.settings", priority="project")
    for name, value in values.items():
        settings.set(name, value, priority="cmdline")
    FocusCrawlAddon().update_settings(settings)
    return settings


def test_never_leaves_the_download_handlers_and_playwright_alone() -> None:
    settings = _addon_settings()
    assert settings.get("FOCUSCRAWL_RENDER_JS") == "never"
    assert HANDLER not in settings.getdict("DOWNLOAD_HANDLERS").values()
    assert settings.get("PLAYWRIGHT_LAUNCH_OPTIONS") is None


def test_auto_sets_the_handler_and_the_browser() -> None:
    settings = _addon_settings(FOCUSCRAWL_RENDER_JS="auto", FOCUSCRAWL_RENDER_CONCURRENCY=3)
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    assert handlers["http"] == handlers["https"] == HANDLER
    options = settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert options["executable_path"] == "/usr/bin/chromium" and options["headless"]
    assert settings.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") == 3
    assert settings.getint("PLAYWRIGHT_MAX_CONTEXTS") == 1


def test_a_missing_browser_is_one_line_before_the_crawl() -> None:
    with pytest.raises(SystemExit) as exc:
        _addon_settings(FOCUSCRAWL_RENDER_JS="auto", FOCUSCRAWL_RENDER_BROWSER="/nonexistent/x")
    assert exc.value.code == 2
