"""``ChangeWebhookPipeline``: every significant change goes to ``FOCUSCRAWL_CHANGE_WEBHOOK``.

A thin adapter over :class:`focuscrawl.change.webhook.WebhookSender`, the last item pipeline
(after the index): an item with ``change == "significant"`` becomes a notification keyed by its
URL and new content hash, queued in ``<FOCUSCRAWL_DATA_DIR>/webhook-outbox.sqlite3`` and posted
from the sender's thread. When the spider closes the sender has up to
``FOCUSCRAWL_CHANGE_WEBHOOK_CLOSE_WAIT`` seconds (in a thread; the engine waits for the
Deferred, so the stats are in before they are written) to deliver what is due; the rest is sent
by the next crawl. Off (``NotConfigured``) when the URL is empty. Stats:
``focuscrawl/webhook/queued/{added,known,full}``, ``…/delivered``, ``…/failed``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from twisted.internet import reactor
from twisted.internet.threads import deferToThread

from focuscrawl import defaults
from focuscrawl.change.outbox import notification_key
from focuscrawl.change.webhook import WebhookSender, change_payload, receiver_name
from focuscrawl.netguard import AddressPolicy

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

OUTBOX = "webhook-outbox.sqlite3"


class ChangeWebhookPipeline:
    def __init__(self, sender: WebhookSender, close_wait: float) -> None:
        self.sender = sender
        self.close_wait = close_wait

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangeWebhookPipeline:
        s = crawler.settings
        url = str(defaults.read(s, "FOCUSCRAWL_CHANGE_WEBHOOK") or "")
        if not url:
            raise NotConfigured  # no message: Scrapy logs none for an opted-out part
        stats = crawler.stats
        assert stats is not None

        def count(name: str) -> None:  # from the sender's thread: stats change on the reactor
            reactor.callFromThread(stats.inc_value, f"focuscrawl/webhook/{name}")  # type: ignore[attr-defined]

        data_dir = Path(str(s.get("FOCUSCRAWL_DATA_DIR") or "focuscrawl-data"))
        sender = WebhookSender(
            url,
            data_dir / OUTBOX,
            AddressPolicy.parse(s.getlist("FOCUSCRAWL_ALLOW_PRIVATE")),
            secret=str(defaults.read(s, "FOCUSCRAWL_CHANGE_WEBHOOK_SECRET") or ""),
            retry=defaults.read(s, "FOCUSCRAWL_CHANGE_WEBHOOK_RETRY"),
            retry_max=defaults.read(s, "FOCUSCRAWL_CHANGE_WEBHOOK_RETRY_MAX"),
            count=count,
        )
        return cls(sender, defaults.read(s, "FOCUSCRAWL_CHANGE_WEBHOOK_CLOSE_WAIT"))

    def open_spider(self, spider: Spider | None = None) -> None:
        logger.info("change notifications go to %s", receiver_name(self.sender.url))
        self.sender.start()

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        if adapter.get("change") != "significant":
            return item
        url = str(adapter.get("url") or "")
        fingerprints = adapter.get("fingerprints") or {}
        version = str(fingerprints.get("t") or fingerprints.get("b") or adapter.get("fetched_at"))
        diff = adapter.get("change_diff") or {}
        payload = change_payload(
            url,
            str(adapter.get("title") or ""),
            diff if isinstance(diff, dict) else {},
            float(adapter.get("fetched_at") or 0.0),
        )
        self.sender.submit(notification_key(url, version), payload)
        return item

    def close_spider(self, spider: Spider | None = None) -> Deferred:
        return deferToThread(self.sender.close, self.close_wait)
