"""JavaScript pages: what ``FOCUSCRAWL_RENDER_JS=auto`` costs a crawl, side by side in one run.

``crawl``: ``scrapy crawl topical`` of the script-page test web (``focuscrawl testweb --corpus
jsweb``: the synthetic web where 5 % of the articles are empty script shells) with ``never``
and ``auto``, alternating rounds; pages per second (pages exported, each page once: a rendered
shell counts once), the pages rendered, and the ratio auto / never.

``scan``: the shell verdict alone on every page of that web: microseconds a page.

    .venv/bin/python bench/bench_render.py [--parts scan,crawl] [--pages 600] [--rounds 2]
        [--render-concurrency 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from focuseval.testweb import TestWebProcess


def scan_part(rounds: int) -> None:
    from focuseval.jsweb import ScriptWeb
    from focuseval.site import loopback_hosts

    from focuscrawl.render.shell import scan

    web = ScriptWeb(loopback_hosts(6), 8000)
    bodies = [web.get(p.host, p.path).body for p in web.web.pages]  # type: ignore[union-attr]
    shells = sum(scan(b).shell for b in bodies)
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for body in bodies:
            scan(body)
        times.append(time.process_time() - start)
    t = statistics.median(times)
    print(
        f"scan: {len(bodies)} pages, {shells} shells ({100 * shells / len(bodies):.1f} %, "
        f"{len(web.script_urls)} served as shells): {t * 1e6 / len(bodies):.0f} us a page"
    )


def crawl_part(pages_n: int, rounds: int, concurrency: int) -> None:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    speed: dict[str, list[float]] = {"never": [], "auto": []}
    runs: list[tuple[int, float, int]] = []  # auto rounds: pages, seconds, pages rendered
    with TestWebProcess(corpus="jsweb") as web, tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        seeds = json.dumps(web.seeds["birds"])
        topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = {seeds}\n')
        for r in range(rounds):
            for mode in ("never", "auto"):
                stats = Path(tmp) / f"{mode}{r}.json"
                cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
                settings = {
                    "LOG_LEVEL": "WARNING",
                    "CLOSESPIDER_ITEMCOUNT": pages_n,
                    "FOCUSCRAWL_RENDER_JS": mode,
                    "FOCUSCRAWL_RENDER_BUDGET": 0,
                    "FOCUSCRAWL_RENDER_CONCURRENCY": concurrency,
                    "FOCUSCRAWL_STATS_FILE": stats,
                    "FOCUSCRAWL_DATA_DIR": Path(tmp) / f"data-{mode}{r}",
                    "FOCUSCRAWL_ALLOW_PRIVATE": web.allow_private,
                }
                for k, v in settings.items():
                    cmd += ["-s", f"{k}={v}"]
                subprocess.run(cmd, check=True, env=env, cwd=tmp, timeout=900)
                s = json.loads(stats.read_text())
                items = s.get("item_scraped_count", 0)
                speed[mode].append(items / s["elapsed_time_seconds"])
                rendered = s.get("focuscrawl/render/rendered", 0)
                if mode == "auto":
                    runs.append((items, s["elapsed_time_seconds"], rendered))
                print(
                    f"  round {r} {mode:5s} {speed[mode][-1]:6.1f} pages/s ({items} pages, "
                    f"{rendered} rendered)",
                    flush=True,
                )
    a, b = statistics.median(speed["never"]), statistics.median(speed["auto"])
    print(f"crawl: never {a:.1f} pages/s, auto {b:.1f} pages/s, ratio auto/never {b / a:.2f}")
    # the rounds render different numbers of pages (which pages a crawl reaches first varies):
    # the crawl time a render adds, against never's median speed, compares them
    extra = [(t - n / a) / r for n, t, r in runs if r]
    if extra:
        print(f"  crawl time added per page rendered: {statistics.median(extra):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="scan,crawl")
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--render-concurrency", type=int, default=2)
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "scan" in parts:
        scan_part(max(args.rounds, 3))
    if "crawl" in parts:
        crawl_part(args.pages, args.rounds, args.render_concurrency)


if __name__ == "__main__":
    main()
