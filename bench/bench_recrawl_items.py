"""Does a recrawl follow the new items of changed hub pages, and what does it fetch besides?

Serves the evolving synthetic web with hubs that gain items
(:class:`focuseval.hub_items.HubItemsWeb`) on loopback, crawls topic *birds* with
``scrapy crawl topical`` (all 600 pages), then adds ``--items`` new bird pages to each of the
topic's 3 hub pages and applies the evolving web's significant change (a sentence, no new
links) to its 10 victim pages, and recrawls (``-a mode=recrawl``) with
``FOCUSCRAWL_RECRAWL_BUDGET=--budget``. Prints, for the recrawl: the new pages found (and how many
the crawl judged relevant), the due pages, the pages fetched that were neither (old links
re-expanded), responses 200 / 304, and the seconds it took.

    .venv/bin/python bench/bench_recrawl_items.py [--items 4] [--budget 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from focuseval.hub_items import ServedWeb

from focuscrawl.netguard import allow_private_args


def crawl(
    served: ServedWeb, workdir: Path, name: str, *args: str
) -> tuple[list[dict[str, Any]], dict[str, Any], float]:
    """``scrapy crawl topical`` of topic *birds*; returns its crawl log, stats and seconds."""
    web = served.web
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", "topic=birds"]
    cmd += ["-a", "seeds=" + ",".join(web.seeds["birds"]), *args]
    cmd += allow_private_args(web.hosts)
    for setting in (
        "FOCUSCRAWL_DATA_DIR=data",
        "CLOSESPIDER_PAGECOUNT=2000",
        "FOCUSCRAWL_RECRAWL_PERIOD=1",
        f"FOCUSCRAWL_CRAWL_LOG={name}.log.jsonl",
        f"FOCUSCRAWL_STATS_FILE={name}.stats.json",
        "LOG_LEVEL=WARNING",
    ):
        cmd += ["-s", setting]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"crawl {name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    log = [json.loads(x) for x in (workdir / f"{name}.log.jsonl").read_text().splitlines()]
    return log, json.loads((workdir / f"{name}.stats.json").read_text()), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=4, help="new pages per hub")
    parser.add_argument("--budget", type=int, default=100, help="FOCUSCRAWL_RECRAWL_BUDGET")
    parser.add_argument("--pages", type=int, default=600, help="size of the synthetic web")
    args = parser.parse_args(argv)
    served = ServedWeb(args.pages)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-recrawl-items-") as tmp:
            workdir = Path(tmp)
            first, _, secs = crawl(served, workdir, "first")
            stored = {r["url"] for r in first if r["status"] == 200}
            hubs = {served.web.url(h) for h in served.web.hubs}
            print(f"first crawl: {len(stored)} pages stored ({secs:.0f}s); hubs stored: "
                  f"{len(hubs & stored)} of {len(hubs)}")  # fmt: skip
            new = set(served.web.add_items(args.items))
            served.web.evolving.step(4)  # significant changes without new links
            budget = f"FOCUSCRAWL_RECRAWL_BUDGET={args.budget}"
            log, stats, secs = crawl(served, workdir, "recrawl", "-a", "mode=recrawl", "-s", budget)
            fetched = {r["url"] for r in log}
            found = new & fetched
            relevant = {r["url"] for r in log if r["url"] in new and r.get("relevant")}
            due = stats.get("focuscrawl/recrawl/due", 0)
            other = {r["url"] for r in log if r["url"] not in new and not r.get("score", 0) >= 9e5}
            print(
                f"recrawl (budget {args.budget}, {len(new)} new pages on {len(hubs)} hubs): "
                f"{len(log)} fetches, {due} due, new pages found {len(found)} of {len(new)} "
                f"({len(relevant)} judged relevant), other pages fetched {len(other)}, "
                f"200: {stats.get('downloader/response_status_count/200', 0)}, "
                f"304: {stats.get('downloader/response_status_count/304', 0)}, "
                f"hubs fetched {len(hubs & fetched)}, {secs:.0f}s"
            )
    finally:
        served.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
