"""The index written inline against the writer thread, in the same run: ``scrapy crawl topical``
over the synthetic test web, modes alternating round by round so each sees the same load.

Modes: ``inline`` (``FOCUSCRAWL_INDEX_WRITER_THREAD=False``, the default), ``thread`` (on, with
the engine paused while ``FOCUSCRAWL_INDEX_PENDING_MAX`` responses wait: the fix of
docs/faults.md) and ``unbounded`` (on, the bound out of reach: the behaviour before the fix).
Prints, per mode, the median pages/s (wall) and CPU ms a page (the crawl process's user + sys),
and the ratios to ``inline``. The machine is shared: wall figures are noisy, CPU less so.

    .venv/bin/python bench/bench_index_writer.py [--pages 1500] [--rounds 3]
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

from bench_crawl import COMMON, pages_per_s  # noqa: E402

MODES: dict[str, list[str]] = {
    "inline": ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=False"],
    "thread": ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True"],
    "unbounded": [
        "-s",
        "FOCUSCRAWL_INDEX_WRITER_THREAD=True",
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
    args = parser.parse_args()
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    rate: dict[str, list[float]] = {m: [] for m in MODES}
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    waits: dict[str, list[int]] = {m: [] for m in MODES}
    with TestWebProcess(corpus="synthetic") as web, tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        seeds = json.dumps(web.seeds[args.topic])
        topic.write_text(f'name = "{args.topic}"\nkeywords = ["{args.topic}"]\nseeds = {seeds}\n')
        for r in range(args.rounds):
            for mode, extra in MODES.items():
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
                print(
                    f"round {r + 1} {mode:9s} {rate[mode][-1]:7.1f} pages/s "
                    f"{cpu[mode][-1]:6.2f} CPU ms/page ({pages} pages, "
                    f"{waits[mode][-1]} writer waits)",
                    flush=True,
                )
    base_rate = statistics.median(rate["inline"])
    base_cpu = statistics.median(cpu["inline"])
    print(f"\nmedians of {args.rounds} rounds, {args.pages} pages a crawl:")
    for mode in MODES:
        r, c = statistics.median(rate[mode]), statistics.median(cpu[mode])
        print(
            f"{mode:9s} {r:7.1f} pages/s ({r / base_rate:.2f}x inline)  "
            f"{c:6.2f} CPU ms/page ({c / base_cpu:.2f}x inline)"
        )


if __name__ == "__main__":
    main()
