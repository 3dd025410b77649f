"""``scrapy crawl``, checking the topical spider's arguments and every setting first.

A bad topic (a phrase without seeds, a malformed or missing topic file), a wrong spider argument
(``-a strategy=zzz``) or a wrong ``FOCUSCRAWL_*`` value (``-s FOCUSCRAWL_LINK_WORDS=abc``) ends
with one error line per mistake and exit status 2, instead of a traceback from inside the
reactor; so does a ``JOBDIR`` another crawl is using (locked for the process that runs it: see
:mod:`focuscrawl.frontier.journal`) or that cannot be written. A crawl that fetched no page ends with exit status 3 (see
:mod:`focuscrawl.extensions.summary`). scrapyd runs this same command, so its jobs fail the same
way, with the line in the job's log.
"""

from __future__ import annotations

import argparse
import logging
import sys

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from focuscrawl.faults import storage_fault
from focuscrawl.frontier.journal import JobdirBusy, lock_jobdir
from focuscrawl.topic import TopicError, load_topic
from focuscrawl.validation import argument_errors, setting_errors

logger = logging.getLogger(__name__)


class Command(ScrapyCrawl):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1 or not args[0].startswith("topical"):
            super().run(args, opts)
            return
        name = args[0]
        errors = self._errors(name, opts.spargs) or self._lock_jobdir()
        if errors:
            for error in errors:
                self._error(name, error)
            self.exitcode = 2
            return
        assert self.crawler_process is not None
        crawler = self._create_crawler(name)
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats is not None and crawler.stats.get_value("focuscrawl/exit_status"):
            self.exitcode = int(crawler.stats.get_value("focuscrawl/exit_status"))

    def _errors(self, name: str, spargs: dict[str, str]) -> list[str]:
        assert self.settings is not None
        # the add-on's defaults are applied when the crawler starts: check what was set
        errors = setting_errors(self.settings, only_set=True) + argument_errors(spargs)
        joining = name == "topical_redis" and "topic" not in spargs  # the topic is in Redis
        if joining:
            return errors
        try:
            load_topic(spargs.get("topic"), spargs.get("seeds"))
            if spargs.get("model"):
                from focuscrawl.relevance.model import RelevanceModel

                RelevanceModel.load(spargs["model"])
        except (TopicError, OSError, ValueError) as exc:
            errors.append(str(exc))
        return errors

    def _lock_jobdir(self) -> list[str]:
        """Hold the JOBDIR for this process: one crawl per JOBDIR (its journal and lock)."""
        assert self.settings is not None
        jobdir = self.settings.get("JOBDIR")
        if not jobdir:
            return []
        try:
            lock_jobdir(str(jobdir))
        except JobdirBusy as exc:
            return [str(exc)]
        except OSError as exc:
            return [f"JOBDIR {jobdir} cannot be written ({storage_fault(exc) or 'error'}): {exc}"]
        return []

    def _error(self, name: str, error: str) -> None:
        line = f"scrapy crawl {name}: error: {error}"
        print(line, file=sys.stderr)
        assert self.settings is not None
        if self.settings.get("LOG_FILE"):  # a scrapyd job: its log is the file, not stderr
            logger.error("%s", line)


__all__ = ["Command", "UsageError"]
