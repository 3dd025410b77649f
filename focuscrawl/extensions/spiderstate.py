"""Scrapy's ``SpiderState`` (``JOBDIR/spider.state``), written whole or not at all.

Scrapy's extension opens ``spider.state`` for writing at ``spider_closed`` and pickles the
spider's ``state`` into it. On a full disk (a crawl stopped by ``storage_full``, its JOBDIR on
that disk) the write fails with a traceback and leaves the file cut, and the resumed crawl
cannot unpickle it. Here the state goes to ``spider.state.tmp`` and replaces the file only once
written; a write that fails leaves the previous state in place and says so in one line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.extensions.spiderstate import SpiderState as ScrapySpiderState

from focuscrawl.faults import as_fault

if TYPE_CHECKING:
    from scrapy import Spider

logger = logging.getLogger(__name__)


class SpiderState(ScrapySpiderState):
    def spider_closed(self, spider: Spider) -> None:
        if not self.jobdir:
            return
        target = Path(self.statefn)
        partial = target.with_name(target.name + ".tmp")
        try:
            with partial.open("wb") as f:
                pickle.dump(spider.state, f, protocol=4)  # type: ignore[attr-defined]
            os.replace(partial, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                partial.unlink()
            fault = as_fault(f"JOBDIR {self.jobdir}", exc)
            logger.error("spider state not saved, the previous one kept: %s", fault or exc)
