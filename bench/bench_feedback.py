"""Relevance feedback, simulated: a crawl given ``--labels`` true labels at page ``--at`` (the
pages the judge was least sure about, as the review page lists them) against the same crawl
without them, recall@250/500/1000 per topic (issue 32: target +0.05 at 1000).

The crawl (:mod:`focuseval.feedback_crawl`) runs the crawl's own decisions in-process over the
rendered Wikispeedia site with the crawl's defaults. With labels, the crawl goes on as the
spider does with a label file: a page labelled on topic is fetched again as an example page,
and a labelled page is judged as labelled. ``--retrain`` adds a third crawl, as with
``FOCUSCRAWL_LABELS_RETRAIN`` and ``FOCUSCRAWL_RETRAIN_SYNC``: the page model is replaced by the
one ``train_from_labels`` fits (in the crawl's worker process) from the crawl's pages so far
and the labels, and the links of the recent pages it judges more relevant are sent again.
Kinds ``retrain-old`` / ``rescaled-old`` (``--only``) are the same with the first threshold
rule (``label-share``), for a comparison in the same run. ``decide`` / ``raise``: the
retrained model only decides relevance (``RetrainingModel(judge_only=True)``; ``raise``: never
vetoes a page the cosine model judges relevant); any kind ``-relearn`` (the link side relearns
the labels and a retrain's judgements, ``CrawlPolicy.relabel``), ``@LENIENCY`` and ``%N``.
Nothing is tuned here.

    FOCUSCRAWL_CORPORA=../shared/corpora .venv/bin/python bench/bench_feedback.py \\
        [--topics heldout] [--pages 1000] [--at 200] [--labels 30] [--retrain]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

POINTS = (250, 500, 1000)


def _base(kind: str) -> str:
    """A kind without its options: ``-relearn`` (the link side relearns the labelled pages
    and, after a retrain, the pages the new model judges otherwise: ``CrawlPolicy.relabel``),
    ``@LENIENCY`` (``decide``: relevant from that fraction of the retrained model's
    threshold) and ``%N`` (from the labels on, the model also retrains every N pages)."""
    return kind.split("@")[0].split("%")[0].replace("-relearn", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", default="heldout")
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--at", type=int, default=200)
    parser.add_argument("--labels", type=int, default=30)
    parser.add_argument("--retrain", action="store_true", help="also the retrained crawl")
    parser.add_argument(
        "--rescale", action="store_true", help="also retrained, the link scale following it"
    )
    parser.add_argument("--only", default="", help="kinds to run, comma-separated")
    args = parser.parse_args()
    from focuseval.feedback_crawl import feedback_crawl, recall_at
    from focuseval.site import loopback_hosts
    from focuseval.topics import WIKISPEEDIA_TOPICS, topic_names, wikispeedia_topic
    from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

    names = topic_names(args.topics)
    corpus = WikispeediaCorpus.open()
    site = WikispeediaSite(corpus, loopback_hosts(8), 8000)
    n = args.pages
    points = [p for p in POINTS if p < n] + [n]
    kinds = ["without", "labels"] + (["retrain"] if args.retrain else [])
    known = ("labels", "retrain", "rescaled", "retrain-old", "rescaled-old", "decide", "raise")
    kinds += ["rescaled"] if args.rescale else []
    if args.only:
        kinds = ["without", *(k for k in args.only.split(",") if k != "without")]
        if unknown := [k for k in kinds[1:] if _base(k) not in known]:
            parser.error(
                f"unknown kinds {unknown}; one of {', '.join(known)}, "
                "each optionally with -relearn and @LENIENCY"
            )
    print(f"{args.labels} true labels at page {args.at}, recall@{points} (topics {args.topics})")
    print("  kinds: without labels / labels (judged as labelled) / labels + retrained model")
    sums = {(k, p): 0.0 for k in kinds for p in points}
    for name in names:
        topic = wikispeedia_topic(corpus, site.url_for, WIKISPEEDIA_TOPICS[name])
        runs = {}
        cpu = {}
        for kind in kinds:
            t0 = time.process_time()
            base = _base(kind)
            runs[kind] = feedback_crawl(
                site, topic, n, args.at, 0 if kind == "without" else args.labels,
                retrain=base.startswith(("retrain", "rescaled", "decide", "raise")),
                rescale=base.startswith("rescaled"),
                threshold_rule="label-share" if base.endswith("-old") else "balanced",
                judge_only=base in ("decide", "raise"),
                veto=base != "raise",
                relearn="-relearn" in kind,
                leniency=float(kind.split("@")[1].split("%")[0]) if "@" in kind else 1.0,
                every_after=int(kind.split("%")[1]) if "%" in kind else 0,
            )  # fmt: skip
            cpu[kind] = time.process_time() - t0
        for kind in kinds:
            run = runs[kind]
            rec = [recall_at(run, p) for p in points]
            for p, r in zip(points, rec, strict=True):
                sums[(kind, p)] += r / len(names)
            extra = ""
            if kind != "without":
                extra = f"  labels on/off {run.labels_on}/{run.labels_off}"
            if "-relearn" in kind:
                extra += f", relabelled {run.relabelled}"
            if _base(kind).startswith(("retrain", "rescaled", "decide", "raise")):
                extra += (
                    f", retrains {run.retrains}, rescored pages {run.rescored_pages} "
                    f"links {run.rescored_links}, threshold/100p {run.thresholds}"
                )
            cells = " ".join(f"{r:.3f}" for r in rec)
            print(f"  {name:<10} {kind:<12} {cells}  cpu {cpu[kind]:.1f}s{extra}", flush=True)
    print("  mean:")
    for kind in kinds:
        cells = " ".join(f"{sums[(kind, p)]:.3f}" for p in points)
        gain = sums[(kind, n)] - sums[("without", n)]
        print(f"  {'mean':<10} {kind:<12} {cells}  gain@{n} {gain:+.3f}")
    for kind in kinds[1:]:
        gain = sums[(kind, n)] - sums[("without", n)]
        verdict = "met" if round(gain, 3) >= 0.05 else "not met"  # as printed
        print(f"  target +0.05 @{n}, {kind}: {gain:+.3f} ({verdict})")


if __name__ == "__main__":
    main()
