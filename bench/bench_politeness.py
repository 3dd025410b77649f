"""Crawl speed under politeness: ``scrapy crawl topical`` against a plain Scrapy breadth-first
spider with the same politeness settings, over a many-host web whose server answers late.

The web is Wikispeedia on ``--hosts`` loopback hosts (48), every response ``--latency-ms`` late
(300 ms: a distant server); both crawlers run ``--seconds`` (30) with ``DOWNLOAD_DELAY``
(1 s) and one request per host at a time (``CONCURRENT_REQUESTS_PER_DOMAIN=1``), robots.txt
obeyed, from the same seeds. Runs alternate (plain, topical, plain, …) so both see the same
machine. Printed per crawler: pages/s and the topic's relevant pages fetched (by the corpus
labels), and the ratios topical / plain (targets: pages/s >= 0.95, relevant pages well above).
The focused crawl is judged here by what a polite frontier must not do: collapse onto a few
hosts and wait out their delays.

    FOCUSCRAWL_CORPORA=../shared/corpora .venv/bin/python bench/bench_politeness.py \\
        [--topic Birds] [--hosts 48] [--latency-ms 300] [--delay 1] [--seconds 30] [--rounds 2]
        [--variant 'learned:FOCUSCRAWL_STRATEGY=learned']   # one more topical crawl per round
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from focuseval.corpora import corpora_dir
from focuseval.harness import build_topic
from focuseval.metrics import normalize_url
from focuseval.testweb import TestWebProcess
from focuseval.topics import write_topic_toml

from focuscrawl.netguard import allow_private_args

HERE = Path(__file__).resolve().parent
STEADY_AFTER = 10.0  # seconds after the first page from which the steady rate is counted


def polite(args: argparse.Namespace) -> list[str]:
    return [
        *("-s", "LOG_LEVEL=WARNING"),
        *("-s", "TELNETCONSOLE_ENABLED=False"),
        *("-s", "ROBOTSTXT_OBEY=True"),
        *("-s", f"CONCURRENT_REQUESTS={args.concurrency}"),
        *("-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1"),
        *("-s", f"DOWNLOAD_DELAY={args.delay}"),
        *("-s", f"CLOSESPIDER_TIMEOUT={args.seconds}"),
    ]


def records_of(path: Path) -> list[dict]:
    """The records of a JSON-lines file (the plain spider's items, the topical crawl log)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def steady_rate(times: list[float], skip: float) -> float:
    """Pages a second from ``skip`` seconds after the first page to the last: the rate of a
    long crawl, without its start (a topic model's load, every host's robots.txt)."""
    times = sorted(times)
    if not times:
        return 0.0
    start = times[0] + skip
    later = [t for t in times if t >= start]
    span = times[-1] - start
    return len(later) / span if span > 0 else 0.0


def crawl(cmd: list[str], env: dict[str, str], cwd: Path, stats: Path, fetched: Path) -> dict:
    before = os.times()
    subprocess.run(cmd, check=True, env=env, cwd=cwd, timeout=600)
    after = os.times()
    s = json.loads(stats.read_text())
    records = records_of(fetched)
    urls = [r["url"] for r in records]
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {
        "cpu_per_second": cpu / s["elapsed_time_seconds"],
        "pages_per_second": s["response_received_count"] / s["elapsed_time_seconds"],
        "steady_per_second": steady_rate([r["t"] for r in records if "t" in r], STEADY_AFTER),
        "urls": urls,
        "hosts": len({u.split("/")[2] for u in urls}),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topic", default="Birds")
    p.add_argument("--hosts", type=int, default=48)
    p.add_argument("--latency-ms", type=int, default=300)
    p.add_argument("--delay", type=float, default=1.0, help="DOWNLOAD_DELAY, seconds")
    p.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS")
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--strategy", default="")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME:SETTING=VALUE[;SETTING=VALUE]: one more topical crawl per round with these "
        "settings (-s), alternating with the others",
    )
    args = p.parse_args()
    corpora = corpora_dir()
    if corpora is None or not (corpora / "wikispeedia").exists():
        print("bench_politeness: no Wikispeedia corpus (FOCUSCRAWL_CORPORA); skipped")
        return 0
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    plain_env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    variants = [
        (name, dict(kv.split("=", 1) for kv in assigns.split(";")))
        for name, _, assigns in (v.partition(":") for v in args.variant)
    ]
    rows: dict[str, list[dict]] = {"plain": [], "topical": [], **{n: [] for n, _ in variants}}
    web = TestWebProcess(
        corpus="wikispeedia", hosts=args.hosts, corpora=corpora, latency_ms=args.latency_ms
    )
    with web, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        topic = build_topic("wikispeedia", args.topic, web, corpora)
        relevant = topic.labels.relevant
        topic_file = write_topic_toml(topic, tmp / "topic.toml")
        for r in range(args.rounds):
            sp, st = tmp / f"plain{r}.json", tmp / f"topical{r}.json"
            items, log = tmp / f"plain{r}.jsonl", tmp / f"topical{r}.jsonl"
            plain_cmd = [
                *(sys.executable, "-m", "scrapy", "runspider", str(HERE / "plain_spider.py")),
                *("-a", "seeds=" + ",".join(topic.seeds)),
                *polite(args),
                *("-s", 'EXTENSIONS={"focuscrawl.extensions.statsfile.StatsFile": 0}'),
                *("-s", f"FOCUSCRAWL_STATS_FILE={sp}"),
                *("-o", f"{items}:jsonlines"),
            ]
            topical_cmd = [
                *(sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic_file}"),
                *polite(args),
                *("-s", f"FOCUSCRAWL_STATS_FILE={st}"),
                *("-s", f"FOCUSCRAWL_CRAWL_LOG={log}"),
                *("-s", f"FOCUSCRAWL_DATA_DIR={tmp}/data{r}"),
                *allow_private_args(web.hosts),
            ]
            if args.strategy:
                topical_cmd += ["-a", f"strategy={args.strategy}"]
            runs = [
                ("plain", plain_cmd, plain_env, tmp, sp, items),
                ("topical", topical_cmd, env, HERE.parent, st, log),
            ]
            for name, extra in variants:
                vs, vl = tmp / f"{name}{r}.json", tmp / f"{name}{r}.jsonl"
                cmd = [
                    *topical_cmd[: topical_cmd.index(f"FOCUSCRAWL_STATS_FILE={st}")],
                    f"FOCUSCRAWL_STATS_FILE={vs}",
                    *("-s", f"FOCUSCRAWL_CRAWL_LOG={vl}"),
                    *("-s", f"FOCUSCRAWL_DATA_DIR={tmp}/{name}{r}"),
                    *topical_cmd[topical_cmd.index(f"FOCUSCRAWL_DATA_DIR={tmp}/data{r}") + 1 :],
                ]
                cmd += [arg for kv in extra.items() for arg in ("-s", "=".join(kv))]
                runs.append((name, cmd, env, HERE.parent, vs, vl))
            for name, cmd, e, cwd, stats, fetched in runs:
                row = crawl(cmd, e, cwd, stats, fetched)
                row["relevant"] = sum(
                    1 for u in set(map(normalize_url, row["urls"])) if u in relevant
                )
                top = Counter(u.split("/")[2] for u in row["urls"]).most_common(1)
                row["top_host_share"] = top[0][1] / max(1, len(row["urls"])) if top else 0.0
                rows[name].append(row)
                print(
                    f"round {r + 1} {name:8s} {row['pages_per_second']:6.2f} pages/s "
                    f"({row['steady_per_second']:.2f} after {STEADY_AFTER:.0f} s), "
                    f"{len(row['urls'])} pages on {row['hosts']} hosts "
                    f"(top host {row['top_host_share']:.0%}), {row['relevant']} relevant, "
                    f"CPU {row['cpu_per_second']:.2f} s/s",
                    flush=True,
                )

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in rows[name])

    pps = med("topical", "pages_per_second") / med("plain", "pages_per_second")
    rel = med("topical", "relevant") / max(1.0, med("plain", "relevant"))
    print(
        f"\n{args.hosts} hosts, {args.latency_ms} ms responses, DOWNLOAD_DELAY={args.delay}, "
        f"one request per host, {args.seconds} s, topic {args.topic}, medians of {args.rounds}"
    )
    print(
        f"plain Scrapy BFS   {med('plain', 'pages_per_second'):6.2f} pages/s, {med('plain', 'relevant'):.0f} relevant"
    )
    print(
        f"focuscrawl topical {med('topical', 'pages_per_second'):6.2f} pages/s, {med('topical', 'relevant'):.0f} relevant"
    )
    steady = med("topical", "steady_per_second") / max(1e-9, med("plain", "steady_per_second"))
    print(
        f"ratio topical / plain: pages/s {pps:.2f} (target >= 0.95), after the first "
        f"{STEADY_AFTER:.0f} s {steady:.2f}, relevant pages {rel:.2f}"
    )
    for name, _ in variants:
        vp = med(name, "pages_per_second") / med("plain", "pages_per_second")
        vs = med(name, "steady_per_second") / max(1e-9, med("plain", "steady_per_second"))
        vr = med(name, "relevant") / max(1.0, med("plain", "relevant"))
        print(
            f"ratio {name} / plain: pages/s {vp:.2f}, after the first {STEADY_AFTER:.0f} s "
            f"{vs:.2f}, relevant pages {vr:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
