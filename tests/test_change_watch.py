"""Watch rules of a topic file (``[[watch]]``): parsed and checked with the topic, applied by
the change detection (a CSS selector limits what is compared, ignored text, a price condition),
and end to end: recrawls of a real loopback shop page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.change.content import Content
from focuscrawl.change.watch import price_in, price_verdict, rule_for, watched_content
from focuscrawl.topic import TopicError, WatchRule, load_topic

RULES = """
name = "bird feeders"
keywords = ["bird feeder"]
seeds = ["http://127.0.0.1/"]

[[watch]]
url = "http://127.0.0.1:*/feeder*"
selector = "#price"
price = "drop"

[[watch]]
url = "http://127.0.0.1:*/*"
ignore = ["Visitors today: \\\\d+"]
"""


def topic_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return str(path)


def test_watch_rules_are_read_with_the_topic(tmp_path: Path) -> None:
    topic = load_topic(topic_file(tmp_path, RULES))
    assert topic.watch == (
        WatchRule("http://127.0.0.1:*/feeder*", "#price", (), "drop"),
        WatchRule("http://127.0.0.1:*/*", "", ("Visitors today: \\d+",)),
    )
    assert rule_for(topic.watch, "http://127.0.0.1:8/feeder/1").selector == "#price"
    assert rule_for(topic.watch, "http://127.0.0.1:8/other").ignore
    assert rule_for(topic.watch, "https://elsewhere.example/") is None


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('url = "h/*"\nselector = "##"', "bad selector"),
        ('url = "h/*"\nignore = ["("]', "bad 'ignore' pattern"),
        ('url = "h/*"\nprice = "down"', "'price' must be one of drop, rise, change"),
        ('url = "h/*"\nprice_below = "ten"', "'price_below' must be a number"),
        ('url = "h/*"\ncolour = "red"', "unknown key 'colour'"),
        ('selector = "#p"', "'url' must be a URL glob"),
    ],
)
def test_a_bad_watch_rule_is_one_clear_error(tmp_path: Path, rule: str, message: str) -> None:
    text = 'name = "t"\nseeds = ["http://127.0.0.1/"]\n[[watch]]\n' + rule + "\n"
    with pytest.raises(TopicError, match="watch rule 1") as err:
        load_topic(topic_file(tmp_path, text))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_selector_limits_what_is_compared_and_ignore_drops_text() -> None:
    rule = WatchRule("*", "#price, .stock")
    page = '<html><body><p>News of the day</p><div id="price">Now 64,99 €</div><p class="stock">In stock (3)</p></body></html>'
    content = watched_content(page, "http://h/", rule, noise=(("*", ("\\(\\d+\\)",)),))
    assert [t for _, t in content.lines] == ["Now 64,99 €", "In stock <noise>"]
    assert watched_content(b"\xff\xfe<<<", "http://h/", rule).lines == []  # never a crash


@pytest.mark.parametrize(
    ("text", "price"),
    [("Now 64,99 €", 64.99), ("Price: $1,299.00", 1299.0), ("1.299,00 EUR", 1299.0),
     ("59.99", 59.99), ("only 1299 left", 1299.0), ("no price here", None)],
)  # fmt: skip
def test_price_in(text: str, price: float | None) -> None:
    assert price_in(Content([("text", text)])) == price


def test_the_price_condition() -> None:
    def verdict(rule: WatchRule, old: str, new: str) -> bool:
        return price_verdict(rule, Content([("text", old)]), Content([("text", new)]))

    drop = WatchRule("*", price="drop")
    assert verdict(drop, "64,99 €", "59,99 €") and not verdict(drop, "59,99 €", "64,99 €")
    assert not verdict(drop, "sold out", "59,99 €")  # no price before: not a drop
    below = WatchRule("*", price="drop", price_below=50.0)
    assert not verdict(below, "64,99 €", "59,99 €") and verdict(below, "64,99 €", "49,99 €")
    assert verdict(WatchRule("*", price="rise"), "1", "2")


# -- end to end ------------------------------------------------------------------------------
FEEDER = """<html><head><title>Bird feeder</title></head><body>
<header>Visitors today: {visitors}</header><main><h1>Bird feeder for garden birds</h1>
<p>This bird feeder holds seed for garden birds: finches, tits and sparrows come to the bird
feeder all winter. A bird feeder of cedar wood, easy to clean, with a roof against the rain.</p>
<div id="price">Price: {price} €</div><p>{ad}</p></main></body></html>"""


class Shop:
    def __init__(self) -> None:
        self.state = {"visitors": 1, "price": "64,99", "ad": "Sponsored: a bird bath"}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path != "/feeder":
                    self.send_response(404)
                    self.end_headers()
                    return
                body = FEEDER.format(**outer.state).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/feeder"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()


@pytest.fixture
def shop() -> Iterator[Shop]:
    s = Shop()
    yield s
    s.server.shutdown()
    s.server.server_close()


def crawl(tmp: Path, name: str, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    settings = {
        "FOCUSCRAWL_DATA_DIR": "data",
        "FOCUSCRAWL_ALLOW_PRIVATE": "127.0.0.1",
        "FOCUSCRAWL_EXPORT_IRRELEVANT": True,
        "FOCUSCRAWL_RECRAWL_PERIOD": 1,
        "FOCUSCRAWL_STATS_FILE": f"{name}.json",
        "ROBOTSTXT_OBEY": False,
        "CLOSESPIDER_PAGECOUNT": 5,
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=t.toml", *args]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    proc = subprocess.run([*cmd, "-O", f"{name}.jsonl:jsonlines"], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(x) for x in (tmp / f"{name}.jsonl").read_text().splitlines()]
    return items, json.loads((tmp / f"{name}.json").read_text())


def test_recrawls_report_only_the_price_drop_of_the_watched_region(
    tmp_path: Path, shop: Shop
) -> None:
    rules = RULES.replace('seeds = ["http://127.0.0.1/"]', f'seeds = ["{shop.url}"]')
    (tmp_path / "t.toml").write_text(rules)
    items, _ = crawl(tmp_path, "first")
    assert [i["change"] for i in items] == ["new"]

    shop.state |= {"visitors": 2, "ad": "Sponsored: seed of every kind, now cheaper than ever"}
    items, stats = crawl(tmp_path, "ad", "-a", "mode=recrawl")  # outside the selector
    # the body changed, what the rule compares did not: not significant, not exported
    assert items == [] and stats["focuscrawl/change/insignificant"] == 1
    assert stats["focuscrawl/change/watch/selected"] == 1

    shop.state["price"] = "69,99"  # a rise: not what the rule watches for
    items, stats = crawl(tmp_path, "rise", "-a", "mode=recrawl")
    assert items == [] and stats["focuscrawl/change/watch/price_not_met"] == 1
    assert stats["focuscrawl/change/insignificant"] == 1

    shop.state["price"] = "59,99"  # the drop
    items, stats = crawl(tmp_path, "drop", "-a", "mode=recrawl")
    assert [i["change"] for i in items] == ["significant"]
    added = items[0]["change_diff"]["added"]
    assert any("59,99" in a for a in added) and not any("Sponsored" in a for a in added)
    assert stats["focuscrawl/change/watch/price_met"] == 1
