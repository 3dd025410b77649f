"""The quiet drop line (``focuscrawl.extensions.logformatter``) and the summary's change counts."""

from __future__ import annotations

import logging

from scrapy import Spider
from scrapy.exceptions import DropItem

from focuscrawl.extensions.logformatter import MAX_SHOWN, QuietLogFormatter
from focuscrawl.extensions.summary import change_counts
from focuscrawl.items import PageItem


def _dropped(item: object, exc: BaseException) -> dict:
    return dict(QuietLogFormatter().dropped(item, exc, None, Spider(name="t")))


def test_a_dropped_item_is_one_debug_line_with_its_url_not_its_text() -> None:
    item = PageItem(url="http://127.0.0.1/a", title="A", text="secret page text " * 1000)
    entry = _dropped(item, DropItem("unchanged: not sent to the index in a recrawl"))
    assert entry["level"] == logging.DEBUG
    line = entry["msg"] % entry["args"]
    assert line == "Dropped http://127.0.0.1/a: unchanged: not sent to the index in a recrawl"


def test_an_explicit_level_is_kept_and_hostile_values_are_cut() -> None:
    url = "http://127.0.0.1/" + "x" * 5000
    entry = _dropped({"url": url}, DropItem("y" * 5000, log_level="WARNING"))
    assert entry["level"] == logging.WARNING
    assert len(entry["msg"] % entry["args"]) < 3 * MAX_SHOWN
    entry = _dropped(object(), DropItem("odd", log_level="NO-SUCH-LEVEL"))
    assert entry["level"] == logging.DEBUG
    assert entry["msg"] % entry["args"] == "Dropped ?: odd"


def test_change_counts_list_all_five_statuses_once_change_detection_ran() -> None:
    assert change_counts({"focuscrawl/pages": 3}) == {}
    stats = {"focuscrawl/change/unchanged": 7, "focuscrawl/change/significant": 2}
    assert list(change_counts(stats).items()) == [
        ("new", 0), ("significant", 2), ("insignificant", 0), ("unchanged", 7), ("deleted", 0),
    ]  # fmt: skip
