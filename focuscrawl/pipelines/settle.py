"""Work that must wait until an item is through every item pipeline.

The change store records a page's version; the index holds what the crawl found in it. If the
change store recorded a version the index never committed (the crawler killed in between), the
next visit would find the page "unchanged" and the index would miss it for good. So, when a
pipeline later in the chain answers an item only once its writes are durable (the index:
:attr:`IndexPipeline.DURABLE_ANSWER`), the change pipeline records the visit when the item
*settles*: ``item_scraped`` (through every pipeline) or ``item_dropped`` (a pipeline dropped it
on purpose). An ``item_error`` (a later pipeline failed, e.g. a full disk) records nothing: the
page is new or changed again at its next visit, and reaches the index then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from focuscrawl.crawlstop import HeldItem

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)


class Answer:
    """A pipeline's later answer to an item: awaitable (Scrapy awaits it without the warning a
    returned Deferred gets), and its ``deferred`` for callers that do not await."""

    __slots__ = ("deferred",)

    def __init__(self, deferred: Deferred[Any]) -> None:
        self.deferred = deferred

    def __await__(self) -> Generator[Any, None, Any]:
        from scrapy.utils.defer import maybe_deferred_to_future

        return maybe_deferred_to_future(self.deferred).__await__()


def durable_pipeline_after(crawler: Crawler, me: type) -> bool:
    """Whether an item pipeline after ``me`` answers items only once their writes are durable
    (a class attribute ``DURABLE_ANSWER`` and, when it has one, ``enabled(settings)`` true)."""
    settings = crawler.settings
    paths = build_component_list(settings.getwithbase("ITEM_PIPELINES"))
    classes = []
    for path in paths:
        try:
            classes.append(load_object(path) if isinstance(path, str) else path)
        except (ImportError, NameError, ValueError):
            continue
    if me not in classes:
        return False
    for cls in classes[classes.index(me) + 1 :]:
        if getattr(cls, "DURABLE_ANSWER", False):
            enabled = getattr(cls, "enabled", None)
            if enabled is None or enabled(settings):
                return True
    return False


class ItemSettlement:
    """``after(item, fn)``: call ``fn()`` once ``item`` is scraped or dropped; never if it
    fails. Callbacks of items still in flight when the spider closes are not run."""

    def __init__(self, crawler: Crawler) -> None:
        self._pending: dict[int, tuple[Any, Callable[[], None]]] = {}
        crawler.signals.connect(self._settled, signals.item_scraped)
        crawler.signals.connect(self._dropped, signals.item_dropped)
        crawler.signals.connect(self._failed, signals.item_error)

    def after(self, item: Any, fn: Callable[[], None]) -> None:
        self._pending[id(item)] = (item, fn)

    def __len__(self) -> int:
        return len(self._pending)

    def _take(self, item: Any) -> Callable[[], None] | None:
        found = self._pending.get(id(item))
        if found is None or found[0] is not item:
            return None
        del self._pending[id(item)]
        return found[1]

    def _settled(self, item: Any, **kw: Any) -> None:
        fn = self._take(item)
        if fn is not None:
            fn()

    def _dropped(self, item: Any, exception: BaseException | None = None, **kw: Any) -> None:
        if isinstance(exception, HeldItem):  # a storage fault: as a failure, nothing recorded
            self._failed(item)
        else:
            self._settled(item)

    def _failed(self, item: Any, **kw: Any) -> None:
        if self._take(item) is not None:
            logger.debug("an item failed after change detection: its visit is not recorded")
