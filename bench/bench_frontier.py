"""Frontier benchmark: push N links with random scores and pop them all, against Scrapy's own
memory priority queue (one FIFO per integer priority) in the same run.

Prints bytes per queued URL (tracemalloc, Python allocations) and operations per second.
Scrapy's queue pops slowly with many distinct priorities (it takes a min over every priority key
whenever a queue empties), so its pop rate is measured on the first ``--scrapy-pops`` pops.

    .venv/bin/python bench/bench_frontier.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import subprocess
import sys
import time

from scrapy import Request
from scrapy.pqueues import ScrapyPriorityQueue
from scrapy.squeues import FifoMemoryQueue
from scrapy.utils.test import get_crawler

from focuscrawl.frontier.memory import MemoryFrontier


def links(n: int, seed: int = 1) -> list[tuple[str, float, bytes, dict]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        url = f"http://host{i % 997}.example/section/{i // 997}/page-{i}.html"
        score = rng.random()
        state = {"score": score, "d": rng.randint(1, 9), "inh": 0.25, "tb": 2}
        out.append((url, score, hashlib.sha1(url.encode()).digest(), state))
    return out


def rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure(name: str, push, pop, n: int, pops: int | None = None) -> dict[str, float]:
    """Memory as the growth of the process's resident set (each queue runs in its own process)."""
    gc.collect()
    base = rss()
    t0 = time.perf_counter()
    push()
    t_push = time.perf_counter() - t0
    gc.collect()
    used = rss() - base
    t0 = time.perf_counter()
    popped = pop(pops)
    t_pop = time.perf_counter() - t0
    row = {
        "bytes_per_url": used / n,
        "push_per_s": n / t_push,
        "pop_per_s": popped / t_pop if t_pop else float("inf"),
        "popped": popped,
    }
    print(
        f"{name:<36} {row['bytes_per_url']:>10.0f} {row['push_per_s']:>12.0f} "
        f"{row['pop_per_s']:>12.0f} {popped:>9}",
        flush=True,
    )
    return row


def run_ours(n: int) -> dict[str, float]:
    data = links(n)
    frontier = MemoryFrontier()
    frontier.open()

    def push() -> None:
        for url, score, fp, state in data:
            frontier.push(url, score, fp, state)

    def pop(_: int | None) -> int:
        count = 0
        while frontier.pop() is not None:
            count += 1
        return count

    return measure("focuscrawl MemoryFrontier", push, pop, n)


def run_scrapy(n: int, pops: int) -> dict[str, float]:
    data = links(n)
    pq = ScrapyPriorityQueue.from_crawler(get_crawler(), FifoMemoryQueue, "")

    def push() -> None:
        for url, score, _fp, state in data:
            # Scrapy wants integer priorities: keep 6 digits of the float score
            pq.push(Request(url, meta={"focuscrawl": state}, priority=-int(score * 1e6)))

    def pop(limit: int | None) -> int:
        count = 0
        while count < (limit or n) and pq.pop() is not None:
            count += 1
        return count

    return measure("Scrapy ScrapyPriorityQueue (memory)", push, pop, n, pops)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--scrapy-pops", type=int, default=2_000)
    parser.add_argument("--only", choices=["ours", "scrapy"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "ours":
        print("RESULT " + json.dumps(run_ours(args.n)))
        return
    if args.only == "scrapy":
        print("RESULT " + json.dumps(run_scrapy(args.n, args.scrapy_pops)))
        return
    print(f"{args.n} links with random float scores, each queue in its own process\n")
    print(f"{'queue':<36} {'bytes/URL':>10} {'push/s':>12} {'pop/s':>12} {'popped':>9}", flush=True)
    rows = {}
    for which in ("ours", "scrapy"):
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--n",
                str(args.n),
                "--scrapy-pops",
                str(args.scrapy_pops),
                "--only",
                which,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for line in out.splitlines():
            if line.startswith("RESULT "):
                rows[which] = json.loads(line[7:])
            else:
                print(line)
    ours, theirs = rows["ours"], rows["scrapy"]
    print()
    print(
        f"memory per queued URL: {ours['bytes_per_url'] / theirs['bytes_per_url']:.3f} x Scrapy's "
        "(target <= 0.333)"
    )
    print(
        f"pops per second: {ours['pop_per_s'] / theirs['pop_per_s']:.1f} x Scrapy's "
        f"(Scrapy's rate taken on its first {theirs['popped']:.0f} pops)"
    )
    print(f"pushes per second: {ours['push_per_s'] / theirs['push_per_s']:.2f} x Scrapy's")


if __name__ == "__main__":
    main()
