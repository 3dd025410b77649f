"""focuscrawl's own signals (sent with ``crawler.signals.send_catch_log``)."""

from __future__ import annotations

# A request's final failure has been handled (kwargs: request, spider). The scheduler
# acknowledges the frontier entry (and releases its lease) on this or on response_received.
request_done = object()

# A response has been fetched and judged (kwargs: record — the crawl-log dict, spider).
page_fetched = object()
