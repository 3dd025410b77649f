"""How many requests per second the local test web serves, against what one crawler needs.

Starts ``focuscrawl testweb --corpus synthetic`` in a subprocess, then a bounded aiohttp client
loop (32 connections) fetches every page of the synthetic web, round-robin over its hosts, and
prints requests/s beside the ~120 pages/s a plain Scrapy crawler reaches here (DESIGN.md).
Client and server share the machine's cores, so the figure is a lower bound for the server.

    .venv/bin/python bench/bench_testweb.py [--requests 6000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from pathlib import Path

import aiohttp
from focuseval.synthetic import SyntheticWeb
from focuseval.testweb import TestWebProcess

CRAWLER_PAGES_PER_SECOND = 120.0


async def hammer(urls: list[str], total: int, concurrency: int) -> tuple[int, int, float]:
    source = itertools.islice(itertools.cycle(urls), total)
    ok = failed = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal ok, failed
        for url in source:
            async with session.get(url) as resp:
                await resp.read()
                if resp.status == 200:
                    ok += 1
                else:
                    failed += 1

    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        start = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return ok, failed, time.perf_counter() - start


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with TestWebProcess("synthetic") as web:
        site = SyntheticWeb(web.hosts, web.port, seed=web.seed)
        urls = [site.url(p) for p in site.pages]
        assert web.proc is not None
        cpu_before = cpu_seconds(web.proc.pid)
        ok, failed, seconds = asyncio.run(hammer(urls, args.requests, args.concurrency))
        server_cpu = cpu_seconds(web.proc.pid) - cpu_before
    rate = (ok + failed) / seconds
    print(
        f"test web: {ok + failed} requests ({failed} not 200) in {seconds:.2f} s over {len(web.hosts)} hosts"
    )
    print(
        f"test web: {rate:,.0f} requests/s; a crawler needs ~{CRAWLER_PAGES_PER_SECOND:.0f} pages/s"
    )
    print(
        f"ratio server/crawler: {rate / CRAWLER_PAGES_PER_SECOND:.1f}x (wall clock, cores shared with the client)"
    )
    if server_cpu > 0:
        capacity = (ok + failed) / server_cpu
        print(
            f"server CPU: {server_cpu:.2f} s, {capacity:,.0f} requests per CPU-second of one core"
        )
        print(f"ratio server capacity/crawler: {capacity / CRAWLER_PAGES_PER_SECOND:.1f}x")


if __name__ == "__main__":
    main()
