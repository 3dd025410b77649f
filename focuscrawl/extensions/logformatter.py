"""``QuietLogFormatter``: a dropped item is one DEBUG line with its URL, never its body.

Scrapy's own formatter logs every dropped item as ``WARNING: Dropped: <reason>`` followed by the
whole item (its full text). A recrawl drops every unchanged page by design, and a focused crawl
every irrelevant one, so that floods the log with page texts a stranger wrote. Drops are counted
instead (Scrapy's ``item_dropped_count`` and ``item_dropped_reasons_count/*``, focuscrawl's
``focuscrawl/change/dropped`` and ``focuscrawl/harvest/dropped_irrelevant``) and summarised at
the end of the crawl (:mod:`focuscrawl.extensions.summary`). An exception raised with an explicit
``log_level`` (``DropItem("why", log_level="WARNING")``) keeps it.

The add-on sets ``LOG_FORMATTER`` to this class at ``addon`` priority; a project's own
``LOG_FORMATTER`` wins.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter, is_item
from scrapy.logformatter import LogFormatter

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.http import Response
    from scrapy.logformatter import LogFormatterResult
    from twisted.python.failure import Failure

MAX_SHOWN = 300  # characters of a URL or reason a drop line shows (both come from the page)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def item_url(item: Any) -> str:
    """The item's URL if it has one (any item type Scrapy knows), else ``?``."""
    try:
        url = ItemAdapter(item).get("url") if is_item(item) else None
    except Exception:  # noqa: BLE001 (another project's item type: no URL to show)
        url = None
    return _short(url) if url else "?"


class QuietLogFormatter(LogFormatter):
    def dropped(
        self,
        item: Any,
        exception: BaseException,
        response: Response | Failure | None,
        spider: Spider,
    ) -> LogFormatterResult:
        level: int | str = getattr(exception, "log_level", None) or logging.DEBUG
        if isinstance(level, str):
            level = logging.getLevelName(level.upper())
            if not isinstance(level, int):  # an unknown name: the quiet default
                level = logging.DEBUG
        return {
            "level": level,
            "msg": "Dropped %(url)s: %(exception)s",
            "args": {"url": item_url(item), "exception": _short(exception)},
        }
