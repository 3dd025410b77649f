"""Hostile pages: CPU time and peak memory of ``partition`` per page, beside an ordinary page.

Each page of ``focuseval.hostile_pages.HOSTILE_PAGES`` (at the size the issue
measured) is partitioned in a fresh subprocess, so that its peak RSS is its own; the baseline is
an ordinary article page of the same byte size, measured the same way. Printed per page: CPU
seconds of the ``partition`` call (process time), the process's peak RSS and the part of it the
call added, the ratios to the ordinary page and the targets of issue 14 (<= 1 s CPU and
<= 300 MB peak per hostile page). A child that passes ``--timeout`` CPU seconds or ``--memory``
MB is stopped and shown as such (the code before issue 14 needs this).

    .venv/bin/python bench/bench_hostile_partition.py [--pages NAME,NAME] [--timeout 60]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

TARGET_CPU_S = 1.0
TARGET_PEAK_MB = 300.0


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:  # (pages) size resident ...
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(name: str, ordinary: bool) -> dict[str, object]:
    """Partition one page in this process: what the parent prints."""
    from focuseval.hostile_pages import HOSTILE_PAGES, ordinary_page

    from focuscrawl.blocks import partition

    html = HOSTILE_PAGES[name]()
    if ordinary:
        html = ordinary_page(len(html))
    partition("<p>warm up: imports, parsers, compiled walk</p>", "http://example.org/")
    before = _rss_mb()
    t0 = time.process_time()
    page = partition(html, "http://example.org/hostile")
    cpu = time.process_time() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "bytes": len(html.encode("utf-8")),
        "cpu": cpu,
        "peak": peak,
        "added": max(0.0, peak - before),
        "cuts": getattr(page, "cuts", {}),
        "links": len(page.links),
    }


def measure(name: str, ordinary: bool, timeout: float, memory_mb: int) -> dict[str, object]:
    """``child`` in a subprocess with CPU and address-space limits."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))

    args = [sys.executable, __file__, "--child", name] + (["--ordinary"] if ordinary else [])
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=limits, check=False)
    if done.returncode == 0:
        return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
    if "MemoryError" in done.stderr:
        return {"failed": f"MemoryError at {memory_mb:,} MB"}
    if done.returncode < 0:  # SIGXCPU (or SIGKILL past the hard limit)
        return {"failed": f"> {timeout:g} s CPU (stopped)"}
    return {"failed": (done.stderr.strip().splitlines() or ["failed"])[-1][:80]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="", help="comma-separated names (default: all)")
    parser.add_argument("--timeout", type=float, default=60.0, help="CPU seconds per child")
    parser.add_argument("--memory", type=int, default=4096, help="MB of address space per child")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--ordinary", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.ordinary)))
        return 0
    from focuseval.hostile_pages import HOSTILE_PAGES

    names = args.pages.split(",") if args.pages else list(HOSTILE_PAGES)
    print("| page | bytes | CPU s | peak MB (+partition) | ordinary CPU s | ordinary peak MB |"
          " CPU x | peak x | targets | cuts |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    worst_cpu = worst_peak = 0.0
    for name in names:
        hostile = measure(name, False, args.timeout, args.memory)
        plain = measure(name, True, args.timeout, args.memory)
        if "failed" in hostile:
            print(f"| {name} | | {hostile['failed']} | | | | | | NOT met | |", flush=True)
            worst_cpu = float("inf")
            continue
        cpu, peak = float(hostile["cpu"]), float(hostile["peak"])  # type: ignore[arg-type]
        base_cpu, base_peak = float(plain["cpu"]), float(plain["peak"])  # type: ignore[arg-type]
        worst_cpu, worst_peak = max(worst_cpu, cpu), max(worst_peak, peak)
        met = cpu <= TARGET_CPU_S and peak <= TARGET_PEAK_MB
        cuts = ", ".join(f"{k} {v}" for k, v in sorted(hostile["cuts"].items()))  # type: ignore[union-attr]
        print(
            f"| {name} | {hostile['bytes']:,} | {cpu:.2f} | {peak:.0f} (+{hostile['added']:.0f}) |"
            f" {base_cpu:.2f} | {base_peak:.0f} | {cpu / max(base_cpu, 1e-3):.1f} |"
            f" {peak / base_peak:.2f} | {'met' if met else 'NOT met'} | {cuts} |",
            flush=True,
        )
    print(f"worst: {worst_cpu:.2f} s CPU (target {TARGET_CPU_S:g}), {worst_peak:.0f} MB peak"
          f" (target {TARGET_PEAK_MB:g})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
