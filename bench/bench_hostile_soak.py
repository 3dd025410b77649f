"""Soak: a long ``scrapy crawl topical`` of the synthetic web mixed with hostile pages
(``focuscrawl testweb --corpus hostile-mix``: one article in 50 links to a fresh copy of a
hostile page, and the start page of the hostile host links to every wire trick and trap), beside
the same crawl of the same synthetic web without them, in the same run.

Samples the crawl process's RSS every second; prints RSS (start, peak, last), pages/s, hostile
pages fetched and counted, requests that reached the internal addresses (must be 0), and the
ratios hostile / clean. Plots RSS and pages/s over time (``--plot``).

    .venv/bin/python bench/bench_hostile_soak.py [--parts web,soak] [--pages 20000] \\
        [--web-pages 30000] [--plot docs/security/soak.png]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from focuseval.testweb import TestWebProcess


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def crawl(web: TestWebProcess, tmp: Path, name: str, pages: int, allow: str) -> dict[str, Any]:
    topic = tmp / f"{name}.toml"
    seeds = web.seeds["birds"]
    topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = {json.dumps(seeds)}\n')
    settings = {
        "FOCUSCRAWL_ALLOW_PRIVATE": allow,
        "FOCUSCRAWL_CRAWL_LOG": tmp / f"{name}.jsonl",
        "FOCUSCRAWL_STATS_FILE": tmp / f"{name}-stats.json",
        "FOCUSCRAWL_DATA_DIR": tmp / f"{name}-data",
        "FOCUSCRAWL_EXPORT_IRRELEVANT": False,
        "CLOSESPIDER_PAGECOUNT": pages,  # 0: until the frontier is empty
        "DOWNLOAD_TIMEOUT": 10,
        "RETRY_TIMES": 1,
        "LOG_LEVEL": "WARNING",
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    samples: list[tuple[float, float]] = []
    start = time.monotonic()
    with (tmp / f"{name}.log").open("w") as out:
        proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(1.0):
                mb = rss_mb(proc.pid)
                if mb is not None:
                    samples.append((time.monotonic() - start, mb))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = proc.wait()
        done.set()
        sampler.join()
    log = [json.loads(x) for x in (tmp / f"{name}.jsonl").read_text().splitlines()]
    stats = json.loads((tmp / f"{name}-stats.json").read_text())
    return {"code": code, "log": log, "stats": stats, "rss": samples}


def canary_hits(web: TestWebProcess) -> int:
    with urllib.request.urlopen(f"{web.base_urls[0]}/_canary", timeout=30) as r:
        return int(json.load(r)["hits"])


def summary(name: str, run: dict[str, Any]) -> dict[str, Any]:
    rss = [mb for _, mb in run["rss"]] or [0.0]
    stats = run["stats"]
    hostile = [r for r in run["log"] if "/h/" in r["url"] or "/net/" in r["url"]]
    skips = {k.split("/", 2)[2]: v for k, v in stats.items() if k.startswith("focuscrawl/skip/")}
    seconds = stats.get("elapsed_time_seconds", 0) or 1
    row = {
        "crawl": name,
        "exit": run["code"],
        "finish": stats.get("finish_reason"),
        "pages": stats.get("response_received_count", 0),
        "pages/s": stats.get("response_received_count", 0) / seconds,
        "rss_start_mb": rss[0],
        "rss_peak_mb": max(rss),
        "rss_last_mb": rss[-1],
        "hostile_fetched": len(hostile),
        "skips": skips,
    }
    print(
        f"{name:8s} exit {row['exit']} {row['finish']}: {row['pages']} pages in {seconds:.0f} s "
        f"({row['pages/s']:.1f} pages/s), RSS start/peak/last {rss[0]:.0f}/{max(rss):.0f}/"
        f"{rss[-1]:.0f} MB, hostile responses {len(hostile)}"
    )
    return row


def plot(runs: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, run in runs.items():
        t = [s for s, _ in run["rss"]]
        ax1.plot(t, [mb for _, mb in run["rss"]], label=name)
        times = sorted(r["t"] for r in run["log"])
        if times:
            t0, width = times[0], 10.0
            buckets: dict[int, int] = {}
            for x in times:
                buckets[int((x - t0) // width)] = buckets.get(int((x - t0) // width), 0) + 1
            xs = sorted(buckets)
            ax2.plot([x * width for x in xs], [buckets[x] / width for x in xs], label=name)
    ax1.set_ylabel("crawl RSS (MB)")
    ax1.legend()
    ax2.set_ylabel("pages/s (10 s buckets)")
    ax2.set_xlabel("seconds")
    fig.suptitle("Soak: synthetic web with and without hostile pages")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


def hostile_web_alone() -> None:
    """The hostile web by itself (60 ordinary pages among the hostile ones): the crawl must end
    by itself, fetch every ordinary page, stay under 1 GB and reach no internal address."""
    with tempfile.TemporaryDirectory() as tmp, TestWebProcess("hostile") as web:
        run = crawl(web, Path(tmp), "web", 0, ",".join(web.hosts))
        hits = canary_hits(web)
    row = summary("web", run)
    ok = {r["url"] for r in run["log"] if r["status"] == 200 and "/ok/" in r["url"]}
    print(
        f"hostile web: finish {row['finish']}, ordinary pages fetched {len(ok)}/60, "
        f"peak RSS {row['rss_peak_mb']:.0f} MB, requests to internal addresses {hits}"
    )
    print(f"skips counted: {json.dumps(row['skips'], sort_keys=True)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="web,soak", help="web (the hostile web alone), soak")
    parser.add_argument("--pages", type=int, default=5000, help="pages per soak crawl")
    parser.add_argument("--web-pages", type=int, default=0, help="synthetic web size (0: 3000)")
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "web" in parts:
        hostile_web_alone()
    if "soak" not in parts:
        return
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with TestWebProcess("hostile-mix", pages=args.web_pages) as web:
            allow = ",".join(web.hosts)
            runs["hostile"] = crawl(web, Path(tmp), "hostile", args.pages, allow)
            hits = canary_hits(web)
        with TestWebProcess("synthetic", pages=args.web_pages) as clean:
            runs["clean"] = crawl(clean, Path(tmp), "clean", args.pages, ",".join(clean.hosts))
        rows = {name: summary(name, run) for name, run in runs.items()}
        h, c = rows["hostile"], rows["clean"]
        print(f"requests to internal addresses: {hits}")
        print(f"hostile skips counted: {json.dumps(h['skips'], sort_keys=True)}")
        print(
            f"ratio hostile/clean: pages/s {h['pages/s'] / max(c['pages/s'], 1e-9):.2f}, "
            f"peak RSS {h['rss_peak_mb'] / max(c['rss_peak_mb'], 1e-9):.2f}"
        )
        if args.plot:
            plot(runs, args.plot)


if __name__ == "__main__":
    main()
