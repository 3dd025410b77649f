"""Train and cross-validate the learned block classifier (``focuscrawl.blocks.learned``) on
wcxb-dev, by domain: the pages of a domain are all in one fold (``extraction.domain_fold``).

A block's label is content when at least ``CONTENT_SHARE`` of its words are words of the page's
gold main text. Blocks are weighted by their words (the metric counts words). For each fold
the model is trained on the other folds (the threshold chosen there too) and the page metric
(``extraction.wcxb_f1``) of the fold's pages is reported beside the rules' and beside the
trained folds' own score. Features are cached under ``/tmp`` (``--cache``), never in the repo.

    python -m focuseval.block_learning [--cache /tmp/focuscrawl-blocks.jsonl] [--write MODEL]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from focuscrawl.blocks.learned import MODEL_VERSION, BlockModel
from focuscrawl.blocks.partition import partition_features
from focuseval import extraction as ev
from focuseval.corpora import corpora_dir

CONTENT_SHARE = 0.5
FOLDS = 5
# (keep, take): a rules' text block stays when it scores >= keep, another joins at >= take
THRESHOLDS = tuple(
    (keep, take) for keep in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5) for take in (0.6, 0.7, 0.8, 0.9, 1.01)
)
_TOKEN = re.compile(r"\w+")


def collect(cache: Path, limit: int = 0) -> list[dict[str, Any]]:
    """Per page: name, page type, fold, gold, the rules' main text, and per block its features,
    text and label. Read from ``cache`` when it is there, else computed and written there."""
    if cache.exists():
        return [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines()]
    root = corpora_dir()
    if root is None:
        raise SystemExit("no corpora (set FOCUSCRAWL_CORPORA)")
    pages = []
    for i, case in enumerate(ev.wcxb_dev(root)):
        if limit and i >= limit:
            break
        page, features = partition_features(case.html, case.url)
        gold = set(_TOKEN.findall(case.gold.lower()))
        blocks = []
        for b, f in zip(page.blocks, features, strict=True):
            toks = _TOKEN.findall(b.text.lower())
            share = sum(t in gold for t in toks) / len(toks) if toks else 0.0
            blocks.append({"f": f, "t": b.text, "y": int(share >= CONTENT_SHARE)})
        pages.append({"name": case.name, "kind": case.kind, "url": case.url,
                      "fold": ev.domain_fold(case.url, FOLDS), "gold": case.gold,
                      "rules": page.main_text, "blocks": blocks})  # fmt: skip
    cache.write_text("\n".join(json.dumps(p) for p in pages), encoding="utf-8")
    return pages


def _fit(pages: list[dict[str, Any]]) -> tuple[Any, Any]:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    feats, ys, ws = [], [], []
    for p in pages:
        for b in p["blocks"]:
            if not b["t"]:
                continue
            feats.append(b["f"])
            ys.append(b["y"])
            ws.append(min(200, b["t"].count(" ") + 1))
    vec = DictVectorizer()
    x = vec.fit_transform(feats)
    clf = LogisticRegression(C=1.0, max_iter=1000)
    clf.fit(x, ys, sample_weight=ws)
    return vec, clf


def _model(vec: Any, clf: Any, threshold: tuple[float, float]) -> BlockModel:
    names = vec.get_feature_names_out()
    weights = {str(n): float(w) for n, w in zip(names, clf.coef_[0], strict=True) if w}
    return BlockModel(weights, float(clf.intercept_[0]), *threshold)


def _score(model: BlockModel, f: dict[str, float]) -> float:
    import math

    z = model.bias + sum(v * model.weights.get(k, 0.0) for k, v in f.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _probabilities(model: BlockModel, pages: list[dict[str, Any]]) -> list[list[float]]:
    return [[_score(model, b["f"]) for b in p["blocks"]] for p in pages]


def page_text(threshold: tuple[float, float], page: dict[str, Any], probs: list[float]) -> str:
    """The main text the model reads on ``page`` (the rules' when it would read none)."""
    keep, take = threshold
    chosen = [
        b["t"]
        for b, pr in zip(page["blocks"], probs, strict=True)
        if b["t"] and pr >= (keep if b["f"].get("kind=text") else take)
    ]
    return "\n".join(chosen) if chosen else page["rules"]


def evaluate(
    threshold: tuple[float, float], pages: list[dict[str, Any]], probs: list[list[float]]
) -> float:
    if not pages:
        return 0.0
    scores = (
        ev.wcxb_f1(page_text(threshold, p, pr), p["gold"])
        for p, pr in zip(pages, probs, strict=True)
    )
    return sum(scores) / len(pages)


def cross_validate(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per fold: the model trained on the other folds, scored on them and on this one."""
    rows = []
    for k in range(FOLDS):
        train = [p for p in pages if p["fold"] != k]
        test = [p for p in pages if p["fold"] == k]
        vec, clf = _fit(train)
        model = _model(vec, clf, (0.0, 1.01))
        p_train, p_test = _probabilities(model, train), _probabilities(model, test)
        best = max(THRESHOLDS, key=lambda t: evaluate(t, train, p_train))
        held = {
            p["name"]: ev.wcxb_f1(page_text(best, p, pr), p["gold"])
            for p, pr in zip(test, p_test, strict=True)
        }
        rules = {p["name"]: ev.wcxb_f1(p["rules"], p["gold"]) for p in test}
        rows.append({"fold": k, "pages": len(test), "threshold": best,
                     "trained": evaluate(best, train, p_train), "held_out": held,
                     "rules": rules})  # fmt: skip
        print(f"fold {k} done", flush=True)
    return rows


def report(pages: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    lines = ["| fold | pages | threshold | trained folds | held-out fold | rules (same pages) |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for r in rows:
        h, ru = r["held_out"], r["rules"]
        lines.append(f"| {r['fold']} | {r['pages']} | {r['threshold']} | {r['trained']:.4f} |"
                     f" {sum(h.values()) / len(h):.4f} | {sum(ru.values()) / len(ru):.4f} |")  # fmt: skip
    held = {n: s for r in rows for n, s in r["held_out"].items()}
    rules = {n: s for r in rows for n, s in r["rules"].items()}
    by_kind: dict[str, list[str]] = {}
    for p in pages:
        by_kind.setdefault(p["kind"], []).append(p["name"])
    lines += ["", "| page type (pages) | learned, held-out folds | rules |", "| --- | --- | --- |"]
    for kind in [*sorted(by_kind), "ALL"]:
        names = [p["name"] for p in pages] if kind == "ALL" else by_kind[kind]
        lines.append(f"| {kind} ({len(names)}) | {sum(held[n] for n in names) / len(names):.4f} |"
                     f" {sum(rules[n] for n in names) / len(names):.4f} |")  # fmt: skip
    return "\n".join(lines)


def export(vec: Any, clf: Any, threshold: tuple[float, float], path: Path, note: str) -> None:
    model = _model(vec, clf, threshold)
    data = {"version": MODEL_VERSION, "note": note, "keep": model.keep, "take": model.take,
            "bias": model.bias,
            "features": {k: round(v, 5) for k, v in sorted(model.weights.items())}}  # fmt: skip
    path.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/focuscrawl-blocks.jsonl"))
    parser.add_argument("--limit", type=int, default=0, help="pages (0: all)")
    parser.add_argument("--write", type=Path, help="train on all folds and write the model here")
    args = parser.parse_args()
    t0 = time.process_time()
    pages = collect(args.cache, args.limit)
    print(f"{len(pages)} pages, {sum(len(p['blocks']) for p in pages)} blocks "
          f"({time.process_time() - t0:.1f} s CPU)")  # fmt: skip
    rows = cross_validate(pages)
    print(report(pages, rows))
    if args.write:
        vec, clf = _fit(pages)
        threshold = Counter(tuple(r["threshold"]) for r in rows).most_common(1)[0][0]
        export(vec, clf, threshold, args.write, "trained on all of wcxb-dev")
        print(f"model written to {args.write} (threshold {threshold})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
