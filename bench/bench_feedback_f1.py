"""Page F1 of a simulated user's labels against the PU model and a supervised SVM (issue 32).

Targets: after 20 labels ≥ PU + 0.05; after 50 labels within 0.02 of the SVM trained on every
label of the same (pool) pages. ``labels@k`` is the balanced threshold rule (the default),
``old@k`` the first one (``label-share``), each choosing its own labels. Method:
:mod:`focuseval.feedback_f1`. Design the retraining on ``--topics dev,tuned``; report
``--topics heldout`` and ``--topics fresh``, once each.

    FOCUSCRAWL_CORPORA=../shared/corpora .venv/bin/python bench/bench_feedback_f1.py \\
        [--topics heldout] [--positives 20] [--batch 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COLUMNS = (
    "pu",
    "labels@20",
    "labels@50",
    "old@20",
    "old@50",
    "svm-all",
    "svm-same@50",
    "pu best-t",
    "labels@50 best-t",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default="heldout")
    parser.add_argument("--positives", type=int, default=20)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from focuseval.classifiers import load_corpus
    from focuseval.corpora import corpora_dir, default_cache_dir
    from focuseval.feedback_f1 import evaluate_topic
    from focuseval.topics import WIKISPEEDIA_TOPICS, topic_names

    base = corpora_dir()
    if base is None:
        print("needs ../shared/corpora (set FOCUSCRAWL_CORPORA)", file=sys.stderr)
        return 2
    corpus = load_corpus(base / "wikispeedia", default_cache_dir())
    names = topic_names(args.topics)
    print(
        f"page F1 on the test half; {args.positives} example pages, labels {args.batch} at a "
        f"time, least sure first (topics {args.topics}, seed {args.seed})"
    )
    print(f"| topic | pages | {' | '.join(COLUMNS)} | labels on/off @20, @50 |")
    print("|---|---:|" + "---:|" * len(COLUMNS) + "---|")
    rows = []
    for name in names:
        t0 = time.process_time()
        r = evaluate_topic(
            corpus,
            name,
            WIKISPEEDIA_TOPICS[name],
            n_positives=args.positives,
            batch=args.batch,
            seed=args.seed,
        )
        rows.append(r)
        given = ", ".join(f"{on}/{off}" for on, off in (r.given[20], r.given[50]))
        cells = " | ".join(f"{r.f1[c]:.3f}" for c in COLUMNS)
        print(
            f"| {name} | {r.members} | {cells} | {given} |  (CPU {time.process_time() - t0:.0f} s)",
            flush=True,
        )
    mean = {c: sum(r.f1[c] for r in rows) / len(rows) for c in COLUMNS}
    print(f"| mean | | {' | '.join(f'{mean[c]:.3f}' for c in COLUMNS)} | |")
    gain20 = mean["labels@20"] - mean["pu"]
    gap50 = mean["svm-all"] - mean["labels@50"]
    old20, old50 = mean["old@20"] - mean["pu"], mean["svm-all"] - mean["old@50"]
    print(f"old rule: old@20 − pu = {old20:+.3f}; svm-all − old@50 = {old50:+.3f}")
    print(
        f"labels@20 − pu = {gain20:+.3f} (target ≥ +0.05: {'met' if gain20 >= 0.05 else 'not met'}); "
        f"svm-all − labels@50 = {gap50:+.3f} (target ≤ 0.02: {'met' if gap50 <= 0.02 else 'not met'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
