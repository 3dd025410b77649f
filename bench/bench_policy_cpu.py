"""The link policy's CPU per page on one fixed page sequence (issue 27, the judge's CPU).

A simulated ``learned`` crawl's pages, judgements and request states are recorded once, then
replayed through fresh policies of each strategy; the process time of ``CrawlPolicy.learn`` +
``links`` is reported per page (best of ``reps``). Every strategy sees the same pages, so the
difference between ``learned`` and ``sharksearch-blocks`` is the judge's share.

    FOCUSCRAWL_CORPORA=/work/shared/corpora PYTHONPATH=.:harness .venv/bin/python \\
        bench/bench_policy_cpu.py Mammals 1000 4 sharksearch-blocks,learned [wikispeedia|dressed]
"""

from __future__ import annotations

import sys
import time
from typing import Any

import bench_strategies as bs

from focuscrawl.strategy.policy import CrawlPolicy


def main(argv: list[str]) -> int:
    topic, pages, reps = argv[0], int(argv[1]), int(argv[2])
    strategies = argv[3].split(",") if len(argv) > 3 else ["sharksearch-blocks", "learned"]
    bs._state["pages"] = pages
    bs._state["web"] = argv[4] if len(argv) > 4 else "wikispeedia"
    trace: list[tuple[Any, Any, Any]] = []
    judges: list[Any] = []
    learn = CrawlPolicy.learn

    def recording(self: CrawlPolicy, page: Any, state: Any, judgement: Any) -> None:
        trace.append((page, state, judgement))
        judges.append(self.page_judge)
        learn(self, page, state, judgement)

    CrawlPolicy.learn = recording  # type: ignore[method-assign]
    try:
        bs.run_one((topic, "learned"))
    finally:
        CrawlPolicy.learn = learn  # type: ignore[method-assign]
    print(f"{topic}: {len(trace)} pages recorded")
    # the strategies alternate within each repetition, so that a load that comes and goes
    # (another process on the machine) falls on all of them alike
    times: dict[str, list[float]] = {s: [] for s in strategies}
    sent: dict[str, int] = {}
    for _ in range(reps):
        for strategy in strategies:
            policy = CrawlPolicy(judges[-1], strategy)
            start = time.process_time()
            n = 0
            for page, state, judgement in trace:
                policy.learn(page, state, judgement)
                n += sum(1 for _ in policy.links(page, page.url, state, judgement))
            times[strategy].append(time.process_time() - start)
            sent[strategy] = n
    for strategy in strategies:
        runs = ", ".join(f"{t:.2f}" for t in times[strategy])
        best = 1000 * min(times[strategy]) / len(trace)
        print(
            f"  {strategy}: {best:.2f} ms/page (best of {reps}: {runs} s), {sent[strategy]} links sent"
        )
    base = strategies[0]
    for strategy in strategies[1:]:
        diffs = sorted(
            1000 * (a - b) / len(trace) for a, b in zip(times[strategy], times[base], strict=True)
        )
        best = 1000 * (min(times[strategy]) - min(times[base])) / len(trace)
        print(
            f"  {strategy} over {base}: {best:.2f} ms/page (best against best), "
            f"per repetition median {diffs[len(diffs) // 2]:.2f} ms/page"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
