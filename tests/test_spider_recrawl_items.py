"""A recrawl follows the new items of a changed hub page, and nothing else of a revisited page:
``new_links`` on two versions, then ``scrapy crawl topical -a mode=recrawl`` against the evolving
test web whose hub pages gain items (focuseval.hub_items)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from focuseval.hub_items import ServedWeb

from focuscrawl.blocks import partition
from focuscrawl.change.fingerprint import fingerprint
from focuscrawl.change.recrawl import new_links
from focuscrawl.netguard import allow_private_args

HUB = """<html><head><title>Guide to owls</title></head><body><nav><a href="/">Home</a>
<a href="/about">About</a></nav><main><article><h1>Guide to owls</h1>{extra}
<p>Owls hunt at night; their feathers make no sound.</p><ul>
<li><a href="http://x.test/barn-owl">Barn owl</a></li>
<li><a href="http://x.test/snowy-owl">Snowy owl</a></li></ul></article></main></body></html>"""


def fp(extra: str = ""):  # type: ignore[no-untyped-def]
    html = HUB.format(extra=extra)
    return fingerprint(partition(html, "http://x.test/owls"), html.encode())


def test_new_links_of_two_versions() -> None:
    old = fp()
    item = '<h2>Latest</h2><ul><li><a href="http://x.test/eagle-owl">Eagle owl</a></li></ul>'
    status, urls = new_links(old, fp(item), "http://x.test/owls")
    assert status == "significant" and urls == {"http://x.test/eagle-owl"}
    # a new sentence, no new link: significant, nothing to follow
    status, urls = new_links(old, fp("<p>Updated survey counts.</p>"), "http://x.test/owls")
    assert status == "significant" and urls == frozenset()
    # markup only: insignificant, nothing to follow; the same body: unchanged
    assert new_links(old, fp('<div class="x"></div>'))[1] == frozenset()
    assert new_links(old, fp()) == ("unchanged", frozenset())
    # no stored version: a new page follows every link
    assert new_links(None, fp()) == ("new", None)


@pytest.fixture(scope="module")
def served() -> Iterator[ServedWeb]:
    web = ServedWeb(n_pages=240)
    yield web
    web.close()


def crawl(served: ServedWeb, tmp: Path, name: str, *args: str) -> tuple[list[dict], dict, list]:
    web = served.web
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(web.seeds["birds"]), "-a", "strategy=bfs", *args]
    cmd += allow_private_args(web.hosts)
    for setting in (
        "FOCUSCRAWL_DATA_DIR=data",
        "CLOSESPIDER_PAGECOUNT=1000",
        "FOCUSCRAWL_RECRAWL_PERIOD=1",
        "FOCUSCRAWL_RECRAWL_BUDGET=1000",
        f"FOCUSCRAWL_STATS_FILE={name}.json",
        f"FOCUSCRAWL_CRAWL_LOG={name}.log.jsonl",
    ):
        cmd += ["-s", setting]
    cmd += ["-O", f"{name}.jsonl:jsonlines"]
    proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]

    def lines(path: str) -> list[Any]:
        return [json.loads(x) for x in (tmp / path).read_text().splitlines()]

    stats = json.loads((tmp / f"{name}.json").read_text())
    return lines(f"{name}.jsonl"), stats, lines(f"{name}.log.jsonl")


def test_recrawl_follows_the_new_items_of_a_changed_hub(served: ServedWeb, tmp_path: Path) -> None:
    web = served.web
    first, _, _ = crawl(served, tmp_path, "first")
    stored = {i["url"] for i in first}
    hubs = {web.url(h) for h in web.hubs}
    assert hubs <= stored, "the first crawl stores the topic's hub pages"

    new = set(web.add_items(2))  # two new bird pages on each of the 3 hubs
    web.evolving.step(4)  # and a sentence (no link) added to the evolving web's victims
    items, stats, log = crawl(served, tmp_path, "second", "-a", "mode=recrawl")
    by_url = {i["url"]: i for i in items}
    assert new <= set(by_url), "every new item of a changed hub is fetched"
    assert all(by_url[u]["change"] == "new" and by_url[u]["relevant"] for u in new)
    for hub in hubs:
        assert by_url[hub]["change"] == "significant"
        assert {x["url"] for x in by_url[hub]["change_diff"]["items_added"]} <= new
    # only the hubs' new items were queued from revisited pages: the changed victims (a new
    # sentence) and every unchanged page queued none of their old links again
    assert stats["focuscrawl/recrawl/new_links"] == len(new)
    assert stats["focuscrawl/recrawl/expanded"] == len(hubs)
    victims = {web.url(v) for v in web.evolving.victims} & stored
    assert stats["focuscrawl/recrawl/not_expanded"] >= len(victims - hubs)
    # what was fetched: the due pages (and seeds), the new items, and the links of the new
    # items (stored pages not due are revisited with a conditional GET)
    due = stats["focuscrawl/recrawl/due"]
    new_items_links = 4 * len(new)
    assert len(log) <= due + len(web.seeds["birds"]) + len(new) + new_items_links
