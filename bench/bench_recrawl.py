"""Recrawl benchmark: ``focuscrawl eval-recrawl`` in full (six-cycle tables for 10..50 changed
pages, freshness at equal budget with the oracle ceiling, and on the change-detection corpora the
same run for every technique: APFC precision/recall, website versions (HTML, and Markdown regions
rendered), injected noise, ms per compare).

    .venv/bin/python bench/bench_recrawl.py [eval-recrawl options, e.g. --only six]
"""

from __future__ import annotations

import argparse
import sys

from focuscrawl.commands import eval_recrawl


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    eval_recrawl.add_arguments(parser)
    return eval_recrawl.run(parser.parse_args(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
