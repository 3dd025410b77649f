"""The link policy's CPU per page on one fixed page sequence (issue 27, the judge's CPU).

A simulated ``learned`` crawl's pages, judgements and request states are recorded once, then
replayed through fresh policies of each strategy; the process time of ``CrawlPolicy.learn`` +
``links`` is reported per page (best of ``reps``). Every strategy sees the same pages, so the
difference between ``learned`` and ``sharksearch-blocks`` is the judge's share.

    FOCUSCRAWL_CORPORA=/work/shared/corpora PYTHONPATH=.:harness .venv/bin/python \\
        bench/bench_policy_cpu.py Mammals 1000 4 sharksearch-blocks,learned [wikispeedia|dressed]

``--against REV`` adds ``learned@REV``: the ``learned`` policy of the git revision ``REV`` —
the policy, the link judge, its featuriser and the link memory (their modules' source at
``REV``, loaded beside today's; every other module, and the compiled code, is today's) —
alternating with today's in the same process, so that the old and new judge see the same load.
The crawl must be the same: it checks that both send the same links with the same scores and
states. A strategy named ``learned@REV`` in the list runs that revision's alone.

``--trace PATH`` replays the trace pickled at ``PATH`` (recorded and pickled there first when
the file is missing): a process that replays one strategy once can then run under
``valgrind --tool=cachegrind``, whose instruction and cache-miss counts do not move with the
machine's load (the judge's share: the counts of a ``learned`` process minus a
``sharksearch-blocks`` one's, e.g. ``... Mammals 1000 1 learned@main --trace /tmp/m.pkl``).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import bench_strategies as bs

from focuscrawl.strategy.policy import CrawlPolicy

# the modules of the learned path loaded at another revision, in import order (each old module
# sees the old ones before it)
_SWAPPED = ("linkmemory", "linkfeatures", "linkjudge", "policy")


def old_policy(rev: str) -> type[CrawlPolicy]:
    """``CrawlPolicy`` as it was at git revision ``rev``, with the judge's modules of ``rev``."""
    names = [f"focuscrawl.strategy.{name}" for name in _SWAPPED]
    today = {name: sys.modules[name] for name in names}
    try:
        for name in _SWAPPED:
            path = f"focuscrawl/strategy/{name}.py"
            source = subprocess.run(
                ["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
            ).stdout
            module = types.ModuleType(f"focuscrawl.strategy.{name}")
            sys.modules[module.__name__] = module  # what the next old module imports
            exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102
        return module.CrawlPolicy  # type: ignore[no-any-return]
    finally:
        sys.modules.update(today)


def run(
    trace: list[tuple[Any, Any, Any]],
    page_judge: Any,
    strategy: str,
    policy_class: type[CrawlPolicy] = CrawlPolicy,
) -> tuple[float, list[Any]]:
    """The process time of one replay of ``trace`` and what it sent."""
    policy = policy_class(page_judge, strategy)
    start = time.process_time()
    sent = []
    for page, state, judgement in trace:
        policy.learn(page, state, judgement)
        sent.extend(policy.links(page, page.url, state, judgement))
    elapsed = time.process_time() - start
    return elapsed, [(url, score, child.to_wire()) for url, score, child in sent]


def main(argv: list[str]) -> int:
    against = trace_path = None
    if "--against" in argv:
        i = argv.index("--against")
        against = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    if "--trace" in argv:
        i = argv.index("--trace")
        trace_path = Path(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
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

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))  # (pickling the pages)
    loaded = trace_path is not None and trace_path.exists()
    if loaded:
        with trace_path.open("rb") as f:
            trace, judges = pickle.load(f)  # noqa: S301 - our own file
    else:
        CrawlPolicy.learn = recording  # type: ignore[method-assign]
        try:
            bs.run_one((topic, "learned"))
        finally:
            CrawlPolicy.learn = learn  # type: ignore[method-assign]
        if trace_path is not None:
            with trace_path.open("wb") as f:
                pickle.dump((trace, judges[-1:]), f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{topic}: {len(trace)} pages {'loaded' if loaded else 'recorded'}")
    # the strategies alternate within each repetition, so that a load that comes and goes
    # (another process on the machine) falls on all of them alike
    variants: dict[str, tuple[str, type[CrawlPolicy]]] = {
        s: ("learned", old_policy(s.split("@", 1)[1])) if "@" in s else (s, CrawlPolicy)
        for s in strategies
    }
    if against is not None:
        variants[f"learned@{against}"] = ("learned", old_policy(against))
        strategies = [*strategies, f"learned@{against}"]
    times: dict[str, list[float]] = {s: [] for s in strategies}
    sent: dict[str, int] = {}
    links: dict[str, list[Any]] = {}
    for _ in range(reps):
        for strategy in strategies:
            elapsed, out = run(trace, judges[-1], *variants[strategy])
            times[strategy].append(elapsed)
            sent[strategy] = len(out)
            links[strategy] = out
    if against is not None:
        same = links["learned"] == links[f"learned@{against}"]
        print(f"  learned and learned@{against} sent the same links, scores and states: {same}")
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
    if against is not None:
        old = f"learned@{against}"
        diffs = sorted(
            1000 * (a - b) / len(trace) for a, b in zip(times["learned"], times[old], strict=True)
        )
        print(
            f"  learned over {old}: "
            f"{1000 * (min(times['learned']) - min(times[old])) / len(trace):.2f} ms/page "
            f"(best against best), per repetition median {diffs[len(diffs) // 2]:.2f} ms/page"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
