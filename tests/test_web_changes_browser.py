"""End to end: a real crawl and recrawl (Scrapy subprocesses) of the evolving test web, served by
the real test server, with change detection and the index; then ``focuscrawl serve``'s changes
page in Debian's headless chromium (Playwright, never a downloaded browser): the changed pages
are listed with their diff, added text green, removed text red, hostile page text inert."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from focuseval.evolving import EvolvingWeb
from focuseval.server import bind_sockets, serve
from focuseval.site import Resource, loopback_hosts
from focuseval.synthetic import SyntheticWeb

from tests.browser import chromium, serving

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# text a page may carry; the changes page must show it, never run it
HOSTILE = "&lt;img src=x onerror=&quot;document.title='pwned'&quot;&gt; sold &lt;b&gt;out&lt;/b&gt;"
SHOWN = "<img src=x onerror=\"document.title='pwned'\"> sold <b>out</b>"

WATCH = Path(__file__).with_name("watch_crawl.py")  # the crawl, as its own process

_FIRST_WORD = re.compile(rb"<p>(\w+) ")


class HostileEdits:
    """The evolving web, where a significantly changed page also loses the first word of its
    first paragraph and gains hostile text there (escaped in its HTML, so it is page text)."""

    def __init__(self, web: EvolvingWeb) -> None:
        self.web = web
        self.removed: dict[str, str] = {}  # path → the word removed

    def get(self, host: str, path: str) -> Resource | None:
        res = self.web.get(host, path)
        state = self.web.state.get((host, path))
        if res is None or state is None or not state.significant:
            return res
        found = _FIRST_WORD.search(res.body)
        if found is None:
            return res
        self.removed[path] = found.group(1).decode()
        body = _FIRST_WORD.sub(b"<p>" + HOSTILE.encode() + b" ", res.body, count=1)
        return replace(res, body=body, etag="")

    def robots(self, host: str) -> str:
        return self.web.robots(host)


@pytest.fixture(scope="module")
def served_web() -> Iterator[tuple[EvolvingWeb, HostileEdits, int]]:
    hosts = loopback_hosts(2)
    port, socks = bind_sockets(hosts)
    base = SyntheticWeb(hosts=hosts, port=port, n_pages=240)
    web = EvolvingWeb(base, [(p.host, p.path) for p in base.pages[:12]], changed=3)
    site = HostileEdits(web)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        holder["runner"] = loop.run_until_complete(serve(site, socks))  # type: ignore[arg-type]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield web, site, port
    asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


def crawl(urls: list[str], data: Path, mode: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(WATCH), "-", "-", mode, str(data), "--index"],
        env={**os.environ, "URLS": json.dumps(urls)},
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def recrawled(
    served_web: tuple[EvolvingWeb, HostileEdits, int], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, set[str], dict[str, str]]:
    web, site, port = served_web
    data = tmp_path_factory.mktemp("changes") / "data"
    urls = [f"http://{h}:{port}{p}" for h, p in web.pages]
    crawl(urls, data, "crawl")
    web.step(4)  # significant: a sentence appended to the victims' first paragraph
    crawl(urls, data, "recrawl")
    victims = {f"http://{h}:{port}{p}" for h, p in web.victims}
    removed = {f"http://{h}:{port}{p}": site.removed[p] for h, p in web.victims}
    return data / "index.sqlite", victims, removed


@pytest.fixture(scope="module")
def server(recrawled: tuple[Path, set[str], dict[str, str]]) -> Iterator[str]:
    with serving("--index", str(recrawled[0])) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


def test_changes_page_shows_the_recrawls_diffs(
    recrawled: tuple[Path, set[str], dict[str, str]], server: str, browser: Any
) -> None:
    _, victims, removed = recrawled
    page = browser.new_page()
    page.goto(server)
    page.click("#nav-changes")  # linked from the main page
    page.wait_for_selector("#changes, #no-changes")
    assert page.url.endswith("/changes")
    changes = page.locator("#changes li.change")
    assert {changes.nth(i).locator(".url").inner_text() for i in range(changes.count())} == victims
    for i in range(changes.count()):
        change = changes.nth(i)
        url = change.locator(".url").inner_text()
        added = change.locator("li.added").all_inner_texts()
        gone = change.locator("li.removed").all_inner_texts()
        # the hostile text is shown as text; the sentence the recrawl found is there too
        assert any(SHOWN in a for a in added), added
        assert any(removed[url] in r for r in gone), (removed[url], gone)
        green = rgb(
            change.locator("li.added").first.evaluate("e => getComputedStyle(e).backgroundColor")
        )
        red = rgb(change.locator("li.removed").first.evaluate("e => getComputedStyle(e).backgroundColor"))  # fmt: skip
        assert green[1] > green[0] and green[1] > green[2], green
        assert red[0] > red[1] and red[0] > red[2], red
    assert page.locator("#changes img, #changes b").count() == 0  # nothing of the page's markup
    assert page.title() == "focuscrawl changes"  # the onerror never ran
    page.close()
