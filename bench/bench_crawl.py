"""Crawl throughput: ``scrapy crawl topical`` (partition, relevance, Shark-Search, FocusScheduler)
against a plain Scrapy breadth-first spider over the same synthetic test web, in the same run.

Runs alternate (plain, topical, plain, topical, …) so both see the same machine load; prints
pages per second of each and the ratio (target >= 0.8).

    .venv/bin/python bench/bench_crawl.py [--pages 1500] [--rounds 2] [--strategy NAME] \
        [--against learned]    # another strategy alternating with it: pages/s and CPU per page
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from focuseval.testweb import TestWebProcess

from focuscrawl.netguard import allow_private_args

HERE = Path(__file__).resolve().parent
COMMON = [
    "-s",
    "LOG_LEVEL=WARNING",
    "-s",
    "CONCURRENT_REQUESTS=16",
    "-s",
    "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    "-s",
    "TELNETCONSOLE_ENABLED=False",
    "-s",
    "ROBOTSTXT_OBEY=True",
]


def run(cmd: list[str], stats_path: Path, env: dict[str, str], cwd: str | Path) -> float:
    return pages_per_s(run_stats(cmd, stats_path, env, cwd))


def run_stats(cmd: list[str], stats_path: Path, env: dict[str, str], cwd: str | Path) -> dict:
    """The crawl's stats, with its CPU seconds (``cpu``: user + system of the process)."""
    before = os.times()
    subprocess.run(cmd, check=True, env=env, cwd=cwd, timeout=900)
    after = os.times()
    stats = json.loads(stats_path.read_text())
    stats["cpu"] = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return stats


def cpu_ms_per_page(stats: dict) -> float:
    return 1000 * stats["cpu"] / max(1, stats["response_received_count"])


def crawl_cpu_ms_per_page(stats: dict) -> float:
    """CPU per page of the crawl itself (spider opened to closed, ``crawl_cpu_seconds``):
    without the process's start-up, whose imports vary with the machine's load by seconds."""
    return 1000 * stats.get("crawl_cpu_seconds", 0.0) / max(1, stats["response_received_count"])


def pages_per_s(stats: dict) -> float:
    return stats["response_received_count"] / stats["elapsed_time_seconds"]


def harvest_rate(stats: dict) -> float:
    judged = stats.get("focuscrawl/harvest/pages", 0)
    return stats.get("focuscrawl/harvest/relevant", 0) / judged if judged else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--strategy", default="")
    parser.add_argument(
        "--against",
        default="",
        help="another strategy's topical crawl in every round, alternating (CPU per page too)",
    )
    parser.add_argument("--topic", default="birds")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for the topical crawl (repeatable), e.g. FOCUSCRAWL_LINK_LEARNER=0",
    )
    parser.add_argument(
        "--against-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for the --against crawl only (after --set's, so it wins)",
    )
    args = parser.parse_args()
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    # the baseline runs outside the project: plain Scrapy defaults, no focuscrawl add-on
    plain_env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    plain, topical, harvest = [], [], []
    other: dict[str, list[float]] = {"pps": [], "cpu": [], "harvest": [], "crawl_cpu": []}
    cpu: list[float] = []
    crawl_cpu: list[float] = []
    with TestWebProcess(corpus="synthetic") as web, tempfile.TemporaryDirectory() as tmp:
        seeds = web.seeds[args.topic]
        topic = Path(tmp) / "topic.toml"
        topic.write_text(
            f'name = "{args.topic}"\nkeywords = ["{args.topic}"]\nseeds = {json.dumps(seeds)}\n'
        )
        for r in range(args.rounds):
            sp = Path(tmp) / f"plain{r}.json"
            st = Path(tmp) / f"topical{r}.json"
            plain_cmd = [
                sys.executable,
                "-m",
                "scrapy",
                "runspider",
                str(HERE / "plain_spider.py"),
                "-a",
                "seeds=" + ",".join(seeds),
                *COMMON,
                "-s",
                f"CLOSESPIDER_PAGECOUNT={args.pages}",
                "-s",
                'EXTENSIONS={"focuscrawl.extensions.statsfile.StatsFile": 0}',
                "-s",
                f"FOCUSCRAWL_STATS_FILE={sp}",
            ]
            topical_cmd = [
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
                f"FOCUSCRAWL_STATS_FILE={st}",
                "-s",
                f"FOCUSCRAWL_DATA_DIR={tmp}/data{r}",
                *allow_private_args(web.hosts),
            ]
            if args.strategy:
                topical_cmd += ["-a", f"strategy={args.strategy}"]
            for setting in args.set:
                topical_cmd += ["-s", setting]
            plain.append(run(plain_cmd, sp, plain_env, tmp))
            stats = run_stats(topical_cmd, st, env, HERE.parent)
            topical.append(pages_per_s(stats))
            harvest.append(harvest_rate(stats))
            cpu.append(cpu_ms_per_page(stats))
            crawl_cpu.append(crawl_cpu_ms_per_page(stats))
            line = (
                f"round {r + 1}: plain {plain[-1]:.1f} pages/s, topical {topical[-1]:.1f} pages/s"
                f" (harvest rate {harvest[-1]:.3f}, CPU {cpu[-1]:.1f} ms/page,"
                f" crawl only {crawl_cpu[-1]:.1f})"
            )
            if args.against:
                ot = Path(tmp) / f"other{r}.json"
                cmd = [
                    *[a.replace(str(st), str(ot)) for a in topical_cmd],
                    *("-s", f"FOCUSCRAWL_DATA_DIR={tmp}/other{r}", "-a"),
                    f"strategy={args.against}",
                ]
                for setting in args.against_set:
                    cmd += ["-s", setting]
                o = run_stats(cmd, ot, env, HERE.parent)
                other["pps"].append(pages_per_s(o))
                other["cpu"].append(cpu_ms_per_page(o))
                other["harvest"].append(harvest_rate(o))
                other["crawl_cpu"].append(crawl_cpu_ms_per_page(o))
                line += (
                    f"; {args.against} {other['pps'][-1]:.1f} pages/s (harvest rate "
                    f"{other['harvest'][-1]:.3f}, CPU {other['cpu'][-1]:.1f} ms/page,"
                    f" crawl only {other['crawl_cpu'][-1]:.1f})"
                )
            print(line, flush=True)
    p, t = statistics.median(plain), statistics.median(topical)
    print(f"\nplain Scrapy BFS  {p:8.1f} pages/s (median of {args.rounds})")
    print(f"focuscrawl topical {t:8.1f} pages/s (median of {args.rounds})")
    print(f"ratio topical / plain = {t / p:.2f} (target >= 0.8)")
    print(f"topical harvest rate {statistics.median(harvest):.3f} (median of {args.rounds})")
    if args.against:
        op, oc = statistics.median(other["pps"]), statistics.median(other["cpu"])
        tc = statistics.median(cpu)
        occ, tcc = statistics.median(other["crawl_cpu"]), statistics.median(crawl_cpu)
        per_round = [o / t for o, t in zip(other["crawl_cpu"], crawl_cpu, strict=True)]
        print(
            f"{args.against}: {op:.1f} pages/s = {op / t:.2f} x topical's, CPU {oc:.1f} ms/page "
            f"= {oc / tc:.2f} x topical's {tc:.1f} (medians of {args.rounds}); the crawl only "
            f"{occ:.1f} ms/page = {occ / tcc:.2f} x topical's {tcc:.1f} (per round "
            + " / ".join(f"{x:.2f}" for x in per_round)
            + ")"
        )


if __name__ == "__main__":
    main()
