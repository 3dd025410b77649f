"""The index written inline against the writer thread, in the same run: ``scrapy crawl topical``
over the synthetic test web, modes alternating round by round so each sees the same load.

Modes: ``inline`` (``FOCUSCRAWL_INDEX_WRITER_THREAD=False`` and
``FOCUSCRAWL_CHANGE_WRITER_THREAD=False``: both stores written on the reactor, the defaults
before issue 29), ``thread`` (the index's writer thread, with the engine paused while
``FOCUSCRAWL_INDEX_PENDING_MAX`` pages wait: the fix of docs/faults.md; the change store
inline), ``both`` (the change store's writer thread too: the defaults now) and ``unbounded``
(the index's thread, the bound out of reach: the behaviour before the fix). Prints, per mode,
the median pages/s (wall), CPU ms a page (the crawl process's user + sys) and harvest rate, and
the ratios to ``inline``. The machine is shared: wall figures are noisy, CPU less so.

    .venv/bin/python bench/bench_index_writer.py [--pages 1500] [--rounds 3] [--modes inline,both]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from focuseval.testweb import TestWebProcess

from focuscrawl.netguard import allow_private_args

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_crawl import COMMON, harvest_rate, pages_per_s  # noqa: E402

CHANGE_INLINE = ["-s", "FOCUSCRAWL_CHANGE_WRITER_THREAD=False"]
MODES: dict[str, list[str]] = {
    "inline": ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=False", *CHANGE_INLINE],
    "thread": ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True", *CHANGE_INLINE],
    "both": [
        "-s",
        "FOCUSCRAWL_INDEX_WRITER_THREAD=True",
        "-s",
        "FOCUSCRAWL_CHANGE_WRITER_THREAD=True",
    ],
    "unbounded": [
        "-s",
        "FOCUSCRAWL_INDEX_WRITER_THREAD=True",
        *CHANGE_INLINE,
        "-s",
        "FOCUSCRAWL_INDEX_PENDING_MAX=1000000",
    ],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crawl(cmd: list[str], stats_path: Path, env: dict[str, str]) -> tuple[dict, float]:
    """The crawl's stats and its CPU seconds (user + sys)."""
    before = children_cpu()
    subprocess.run(cmd, check=True, env=env, cwd=HERE.parent, timeout=900)
    return json.loads(stats_path.read_text()), children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--topic", default="birds")
    parser.add_argument("--modes", default=",".join(MODES), help="of " + ", ".join(MODES))
    args = parser.parse_args()
    modes = {m: MODES[m] for m in ["inline", *args.modes.split(",")] if m}  # inline: the base
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    rate: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    waits: dict[str, list[int]] = {m: [] for m in modes}
    harvest: dict[str, list[float]] = {m: [] for m in modes}
    with TestWebProcess(corpus="synthetic") as web, tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        seeds = json.dumps(web.seeds[args.topic])
        topic.write_text(f'name = "{args.topic}"\nkeywords = ["{args.topic}"]\nseeds = {seeds}\n')
        for r in range(args.rounds):
            for mode, extra in modes.items():
                stats_path = Path(tmp) / f"{mode}{r}.json"
                cmd = [
                    sys.executable,
                    "-m",
                    "scrapy",
                    "crawl",
                    "topical",
                    "-a",
                    f"topic={topic}",
                    *COMMON,
                    "-s",
                    f"CLOSESPIDER_PAGECOUNT={args.pages}",
                    "-s",
                    f"FOCUSCRAWL_STATS_FILE={stats_path}",
                    "-s",
                    f"FOCUSCRAWL_DATA_DIR={tmp}/{mode}{r}",
                    *extra,
                    *allow_private_args(web.hosts),
                ]
                stats, seconds = crawl(cmd, stats_path, env)
                pages = stats["response_received_count"]
                rate[mode].append(pages_per_s(stats))
                cpu[mode].append(seconds * 1000 / pages)
                waits[mode].append(int(stats.get("focuscrawl/index/writer_waits", 0)))
                harvest[mode].append(harvest_rate(stats))
                print(
                    f"round {r + 1} {mode:9s} {rate[mode][-1]:7.1f} pages/s "
                    f"{cpu[mode][-1]:6.2f} CPU ms/page harvest {harvest[mode][-1]:.3f} "
                    f"({pages} pages, {waits[mode][-1]} writer waits)",
                    flush=True,
                )
    base_rate = statistics.median(rate["inline"])
    base_cpu = statistics.median(cpu["inline"])
    print(f"\nmedians of {args.rounds} rounds, {args.pages} pages a crawl:")
    for mode in modes:
        r, c = statistics.median(rate[mode]), statistics.median(cpu[mode])
        h = statistics.median(harvest[mode])
        print(
            f"{mode:9s} {r:7.1f} pages/s ({r / base_rate:.2f}x inline)  "
            f"{c:6.2f} CPU ms/page ({c / base_cpu:.2f}x inline)  harvest rate {h:.3f}"
        )


if __name__ == "__main__":
    main()
