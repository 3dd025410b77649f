"""focuscrawl's own signals (sent with ``crawler.signals.send_catch_log``)."""

from __future__ import annotations

# A request's final failure has been handled (kwargs: request, spider). The scheduler
# acknowledges the frontier entry (and releases its lease) on this or on response_received.
request_done = object()

# A response has been fetched and judged (kwargs: record — the crawl-log dict, spider).
page_fetched = object()

# A request failed for good (kwargs: failure — its ``request`` attribute is the request, spider);
# sent by the spider's errback, read by the crawl summary.
request_failed = object()

# An item went through the pipelines but what must follow them failed (the change store could not
# record its visit): its page must not be acknowledged, so it is fetched again (kwargs: item,
# spider). Sent before the item's ``item_scraped`` handlers after the sender's have run.
item_held = object()

# An item's visit is queued in the change store, not written yet (kwargs: item, deferred — fires
# once the write's reply came, fails if it did not go through): its page is acknowledged only
# after the Deferred fires, held back if it fails. Sent before the item's ``item_scraped``
# handlers after the sender's have run (the acknowledgement middleware's). ``thread=True``: the
# SQLite change store's writer thread queued it (the index pipeline's bound on unacknowledged
# pages counts it); absent: the Redis store's write-behind.
item_write_pending = object()
