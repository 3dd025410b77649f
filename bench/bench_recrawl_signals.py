"""Recrawl with sitemap/feed change signals vs today's policy, at equal fetch budget per cycle
(issue 31): freshness and fetches per detected change by host kind (exact, stale, lying, feed,
none sitemaps), the trust each host earned, and the ceiling: the freshness of a policy that knows
every change (past and future) on the same budget.

    .venv/bin/python bench/bench_recrawl_signals.py [--cycles 40] [--pages 200] [--budget 0.1]
"""

from __future__ import annotations

import argparse
import sys

from focuseval.signals_sim import averaged, signals_table, simulate_signals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--pages", type=int, default=200, help="pages per host")
    parser.add_argument("--budget", type=float, default=0.1, help="share fetched per cycle")
    parser.add_argument("--base", default="cluster", choices=("uniform", "change-rate", "cluster"))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--seeds", type=int, default=3, help="runs averaged (seed, seed+1, ...)")
    args = parser.parse_args()
    kw = dict(
        pages_per_host=args.pages,
        budget=args.budget,
        cycles=args.cycles,
        warmup=args.warmup,
        base=args.base,
    )
    seeds = range(args.seed, args.seed + args.seeds)
    today = averaged([simulate_signals("today", seed=s, **kw) for s in seeds])
    signals = averaged([simulate_signals("signals", seed=s, **kw) for s in seeds])
    oracle = averaged([simulate_signals("oracle", seed=s, **kw) for s in seeds])
    print(
        f"{len(today.kinds)} host kinds x {args.pages} pages, budget {args.budget:.0%} per cycle, "
        f"{args.cycles} cycles ({args.warmup} warm-up), base policy {args.base}, "
        f"{args.seeds} seeds"
    )
    print(signals_table(today, signals, oracle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
