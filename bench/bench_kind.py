"""Cost of the learned page kind per page, beside the rules' kind, on wcxb-dev.

Per page, CPU time of (a) the rules' kind (``kind.evidence_parts`` + ``kind.page_kind``) and
(b) the learned kind on top of it (``kind_features.kind_features`` + ``kind_model.tell_kind``),
timed inside ``partition`` by wrapping those functions in this process; and the whole
``partition`` with and without ``kind_model`` (pages interleaved, so load slows both alike).
Prints µs per page and the ratios. ``FOCUSCRAWL_CORPORA`` points at the shared corpora.

    .venv/bin/python bench/bench_kind.py [--limit 300] [--model builtin]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from focuseval import extraction as ev
from focuseval.corpora import corpora_dir

from focuscrawl.blocks.kind_model import DEFAULT_KIND_MODEL, load_kind_model

# the module (``focuscrawl.blocks.partition`` the attribute is the function of that name)
part = importlib.import_module("focuscrawl.blocks.partition")

SPENT: dict[str, float] = {"rules": 0.0, "features": 0.0, "score": 0.0}


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.process_time() - t0

    return wrapper


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=300, help="pages (0: all)")
    parser.add_argument("--model", default="builtin")
    args = parser.parse_args()
    root = corpora_dir()
    if root is None:
        sys.exit("bench_kind: no corpora (set FOCUSCRAWL_CORPORA)")
    model = load_kind_model(DEFAULT_KIND_MODEL if args.model == "builtin" else args.model)
    cases = list(ev.wcxb_dev(root))
    if args.limit:
        cases = cases[: args.limit]
    for case in cases[:20]:  # warm the caches and the compiled module
        part.partition(case.html, case.url, kind_model=model)
    whole = {"rules": 0.0, "learned": 0.0}
    evidence, page_kind = part.evidence_parts, part.page_kind
    features, predict = part.kind_features, part.tell_kind
    for case in cases:
        for name, km in (("rules", None), ("learned", model)):
            t0 = time.process_time()
            part.partition(case.html, case.url, kind_model=km)
            whole[name] += time.process_time() - t0
    part.evidence_parts = _timed("rules", evidence)
    part.page_kind = _timed("rules", page_kind)
    part.kind_features = _timed("features", features)
    part.tell_kind = _timed("score", predict)
    for case in cases:
        part.partition(case.html, case.url, kind_model=model)
    n = len(cases)
    us = {k: v / n * 1e6 for k, v in SPENT.items()}
    load = os.getloadavg()
    print(f"{n} wcxb-dev pages, CPU time, load {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print("| step | µs per page | × the rules' kind |\n| --- | --- | --- |")
    base = us["rules"] or 1e-9
    print(f"| rules' kind (evidence + page_kind) | {us['rules']:.0f} | 1.00 |")
    print(f"| learned: features | {us['features']:.0f} | {us['features'] / base:.2f} |")
    print(f"| learned: scoring | {us['score']:.0f} | {us['score'] / base:.2f} |")
    added = us["features"] + us["score"]
    print(f"| learned kind, added to the rules' | {added:.0f} | {added / base:.2f} |")
    r, lrn = (whole[k] / n * 1e3 for k in ("rules", "learned"))
    print(f"\nwhole partition: rules' kind {r:.2f} ms/page, learned kind {lrn:.2f} ms/page"
          f" (× {lrn / r:.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
