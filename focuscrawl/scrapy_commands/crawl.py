"""``scrapy crawl``, checking the topical spider's arguments first.

A bad topic (a phrase without seeds, a malformed or missing topic file) ends with one error line
and exit status 2, instead of a traceback from inside the reactor.
"""

from __future__ import annotations

import argparse
import sys

from scrapy.commands.crawl import Command as ScrapyCrawl

from focuscrawl.topic import TopicError, load_topic


class Command(ScrapyCrawl):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        spargs = opts.spargs
        joining = args and args[0] == "topical_redis" and "topic" not in spargs  # topic in Redis
        if args and args[0].startswith("topical") and not joining:
            try:
                load_topic(spargs.get("topic"), spargs.get("seeds"))
                if spargs.get("model"):
                    from focuscrawl.relevance.model import RelevanceModel

                    RelevanceModel.load(spargs["model"])
            except (TopicError, OSError, ValueError) as exc:
                print(f"scrapy crawl {args[0]}: error: {exc}", file=sys.stderr)
                self.exitcode = 2
                return
        super().run(args, opts)
