"""Train and cross-validate the learned page kind (``focuscrawl.blocks.kind_model``) on
wcxb-dev, by domain: the pages of a domain are all in one fold (``extraction.domain_fold``).

1. **Choice** on folds 0–2 only: the regularisation ``C``, the class weights, the feature
   groups and the least number of training domains a feature must occur on (a feature of one
   site learns the site), by leave-one-fold-out over folds 0, 1, 2.
2. **Held out**: the chosen setting trained on folds 0–2, its accuracy on folds 3–4 (never
   looked at in 1.) beside the rules' (``blocks.kind``) on the same pages, and the confusion.
3. **Per fold**: trained on four folds, tested on the fifth (out-of-fold), beside the rules.
4. **Extraction**: every page partitioned with the kind of the model that did not see its
   fold (3.), with the rules' kind and with the gold kind, scored by the benchmark's metric
   (``extraction.wcxb_f1``) per page type and fold group.

``--write`` trains on all of wcxb-dev and writes the shipped model; ``--write-dev`` the model
of folds 0–2 (for ``bench_extract.py --kind-model``: its folds 3–4 are then unseen). Features
are cached under ``/tmp`` (``--cache``), never in the repo. sklearn is used here only.

    python -m focuseval.kind_learning [--cache /tmp/focuscrawl-kinds.jsonl] [--write MODEL]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from focuscrawl.blocks import rules
from focuscrawl.blocks.kind_model import KIND_MODEL_VERSION, KindModel, predict_kind
from focuscrawl.blocks.partition import partition, partition_kind_features
from focuseval import extraction as ev
from focuseval.corpora import corpora_dir

FOLDS = 5
CHOICE_FOLDS = (0, 1, 2)
HELD_OUT_FOLDS = (3, 4)
CS = (0.1, 0.3, 1.0, 3.0)
CLASS_WEIGHTS = (None, "balanced")
# the learned kind is used when its probability is at least this, else the rules' kind stays
GATES = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
MIN_DOMAINS = (2, 4, 8)
# feature groups by name prefix (kind_features)
GROUPS: dict[str, tuple[str, ...]] = {
    "url": ("u:", "q:", "depth=", "ext=", "slug_", "query", "trailing_slash"),
    "title": ("t:",),
    "names": ("n:",),
    "rule_words": ("nw:",),
    "types": ("og:", "st:", "json_ld"),
    "counts": ("n_pre", "n_article", "n_time", "n_form", "n_linked_headings", "n_prices"),
    "blocks": (
        "log_",
        "tag_",
        "long_share",
        "link_share",
        "linked_short_share",
        "median_text_words",
        "max_text_words",
        "text_blocks",
    ),  # fmt: skip
    "rules": ("ev:", "rk=", "rk_confidence"),
}


def _group(name: str) -> str:
    for group, prefixes in GROUPS.items():
        if name.startswith(prefixes):
            return group
    return "bias"


def collect(cache: Path) -> list[dict[str, Any]]:
    """Per page: name, gold type, URL, domain, fold, features, the rules' kind. Read from
    ``cache`` when it is there, else computed and written there."""
    if cache.exists():
        return [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines()]
    root = corpora_dir()
    if root is None:
        raise SystemExit("no corpora (set FOCUSCRAWL_CORPORA)")
    pages = []
    for case in ev.wcxb_dev(root):
        page, feats = partition_kind_features(case.html, case.url)
        told = next((k[3:] for k in feats if k.startswith("rk=")), "other")
        pages.append({"name": case.name, "kind": case.kind, "url": case.url,
                      "domain": ev.domain_of(case.url), "fold": ev.domain_fold(case.url, FOLDS),
                      "f": feats, "rules": told})  # fmt: skip
    cache.write_text("\n".join(json.dumps(p) for p in pages), encoding="utf-8")
    return pages


def _vocab(pages: list[dict[str, Any]], min_domains: int, groups: frozenset[str]) -> set[str]:
    domains: dict[str, set[str]] = {}
    for p in pages:
        for k in p["f"]:
            domains.setdefault(k, set()).add(p["domain"])
    return {k for k, d in domains.items() if len(d) >= min_domains and _group(k) in groups}


def fit(pages: list[dict[str, Any]], setting: dict[str, Any]) -> KindModel:
    """A model trained on ``pages`` with ``setting`` (C, class_weight, min_domains, groups)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vocab = _vocab(pages, setting["min_domains"], setting["groups"])
    vec = DictVectorizer()
    x = vec.fit_transform([{k: v for k, v in p["f"].items() if k in vocab} for p in pages])
    y = [p["kind"] for p in pages]
    clf = LogisticRegression(C=setting["C"], class_weight=setting["class_weight"], max_iter=3000)
    clf.fit(x, y)
    classes = tuple(str(c) for c in clf.classes_)
    names = vec.get_feature_names_out()
    coef = clf.coef_
    if len(classes) == 2:  # sklearn keeps one row for two classes
        coef = [-coef[0], coef[0]]
        bias = (-float(clf.intercept_[0]), float(clf.intercept_[0]))
    else:
        bias = tuple(float(b) for b in clf.intercept_)
    weights = {}
    for j, name in enumerate(names):
        row = tuple(round(float(coef[c][j]), 5) for c in range(len(classes)))
        if any(row):
            weights[str(name)] = row
    return KindModel(classes, tuple(round(b, 5) for b in bias), weights)


def accuracy(model: KindModel, pages: list[dict[str, Any]]) -> float:
    return sum(predict_kind(model, p["f"])[0] == p["kind"] for p in pages) / max(1, len(pages))


def rules_accuracy(pages: list[dict[str, Any]]) -> float:
    return sum(p["rules"] == p["kind"] for p in pages) / max(1, len(pages))


def _in(pages: list[dict[str, Any]], folds: Iterable[int]) -> list[dict[str, Any]]:
    wanted = set(folds)
    return [p for p in pages if p["fold"] in wanted]


def choose(pages: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The setting with the best leave-one-fold-out accuracy over ``CHOICE_FOLDS``; the log."""
    log: list[str] = []

    def note(line: str) -> None:
        log.append(line)
        print(line, flush=True)

    choice = _in(pages, CHOICE_FOLDS)

    def cv(setting: dict[str, Any]) -> float:
        right = 0
        for k in CHOICE_FOLDS:
            test = [p for p in choice if p["fold"] == k]
            model = fit([p for p in choice if p["fold"] != k], setting)
            right += sum(predict_kind(model, p["f"])[0] == p["kind"] for p in test)
        return right / len(choice)

    every = frozenset(GROUPS) | {"bias"}
    best: tuple[float, dict[str, Any]] = (-1.0, {})
    for c in CS:
        for cw in CLASS_WEIGHTS:
            for md in MIN_DOMAINS:
                setting = {"C": c, "class_weight": cw, "min_domains": md, "groups": every}
                acc = cv(setting)
                note(f"C={c} class_weight={cw} min_domains={md}: {acc:.4f}")
                if acc > best[0]:
                    best = (acc, setting)
    note(f"all groups, best: {best[0]:.4f}")
    improved = True
    while improved:  # drop a feature group while that helps on the choice folds
        improved = False
        for group in sorted(best[1]["groups"] - {"bias"}):
            setting = {**best[1], "groups": best[1]["groups"] - {group}}
            acc = cv(setting)
            note(f"without {group}: {acc:.4f}")
            if acc > best[0]:
                best, improved = (acc, setting), True
    return best[1], log


def confusion(rows: list[tuple[str, str]]) -> str:
    kinds = [k for k in rules.PAGE_KINDS if k != "other"]
    told_kinds = [*kinds, "other"]
    counts = Counter(rows)
    lines = ["| gold \\ told | " + " | ".join(told_kinds) + " | right |",
             "|---" * (len(told_kinds) + 2) + "|"]  # fmt: skip
    for g in kinds:
        n = sum(counts[(g, t)] for t in told_kinds)
        if not n:
            continue
        cells = " | ".join(str(counts[(g, t)]) for t in told_kinds)
        lines.append(f"| {g} | {cells} | {counts[(g, g)] / n:.1%} |")
    return "\n".join(lines)


def extraction(pages: list[dict[str, Any]], models: dict[int, KindModel]) -> dict[str, Any]:
    """Per page: the benchmark metric with the rules' kind, the out-of-fold learned kind (used
    whatever its probability) and the gold kind (a one-class model); the learned probability."""
    root = corpora_dir()
    assert root is not None
    by_name = {p["name"]: p for p in pages}
    out = {}
    for case in ev.wcxb_dev(root):
        p = by_name[case.name]
        gold_model = KindModel((case.kind,), (0.0,), {})
        out[case.name] = {
            "probability": predict_kind(models[p["fold"]], p["f"])[1],
            "rules": ev.wcxb_f1(partition(case.html, case.url).main_text, case.gold),
            "learned": ev.wcxb_f1(
                partition(case.html, case.url, kind_model=models[p["fold"]]).main_text,
                case.gold,
            ),
            "gold": ev.wcxb_f1(
                partition(case.html, case.url, kind_model=gold_model).main_text, case.gold
            ),
        }
    return out


def extraction_table(pages: list[dict[str, Any]], scores: dict[str, Any]) -> str:
    lines = ["| page type (pages) | rules' kind dev / held-out / all | learned kind (out of fold)"
             " dev / held-out / all | gold kind dev / held-out / all |",
             "| --- | --- | --- | --- |"]  # fmt: skip
    kinds = sorted({p["kind"] for p in pages})
    for kind in [*kinds, "ALL"]:
        rows = [p for p in pages if kind in ("ALL", p["kind"])]
        cells = []
        for reader in ("rules", "learned", "gold"):
            parts = []
            for folds in (CHOICE_FOLDS, HELD_OUT_FOLDS, range(FOLDS)):
                xs = [scores[p["name"]][reader] for p in rows if p["fold"] in folds]
                parts.append(f"{sum(xs) / len(xs):.4f}" if xs else "–")
            cells.append(" / ".join(parts))
        lines.append(f"| {kind} ({len(rows)}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gated(score: dict[str, float], gate: float) -> float:
    """The page's metric when the learned kind is used only at ``gate`` probability or more."""
    return score["learned"] if score["probability"] >= gate else score["rules"]


def choose_gate(pages: list[dict[str, Any]], scores: dict[str, Any]) -> tuple[float, str]:
    """The gate with the best mean metric on the choice folds; the table of every gate."""
    lines = ["| min probability | learned kind used on (pages) | dev folds | held-out folds |",
             "| --- | --- | --- | --- |"]  # fmt: skip
    best = (-1.0, 0.0)
    for gate in GATES:
        cells = []
        for folds in (CHOICE_FOLDS, HELD_OUT_FOLDS):
            xs = [gated(scores[p["name"]], gate) for p in pages if p["fold"] in folds]
            cells.append(sum(xs) / len(xs))
        used = sum(scores[p["name"]]["probability"] >= gate for p in pages)
        lines.append(f"| {gate} | {used} | {cells[0]:.4f} | {cells[1]:.4f} |")
        if cells[0] > best[0] + 1e-9:
            best = (cells[0], gate)
    return best[1], "\n".join(lines)


def export(
    model: KindModel, path: Path, note: str, setting: dict[str, Any], gate: float = 0.0
) -> None:
    vocab = sorted(model.weights)
    data = {"version": KIND_MODEL_VERSION, "note": note, "classes": list(model.classes),
            "min_probability": gate,
            "bias": list(model.bias), "vocab": vocab,
            "weights": [list(model.weights[k]) for k in vocab],
            "setting": {**setting, "groups": sorted(setting["groups"])}}  # fmt: skip
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/focuscrawl-kinds.jsonl"))
    parser.add_argument("--write", type=Path, help="train on all folds, write the model here")
    parser.add_argument("--write-dev", type=Path, help="write the model of folds 0-2 here")
    parser.add_argument("--no-extraction", action="store_true", help="skip step 4")
    parser.add_argument("--chosen", help="the setting as JSON (skips the choice, step 1)")
    args = parser.parse_args()
    t0 = time.process_time()
    pages = collect(args.cache)
    print(f"{len(pages)} pages, {len({p['domain'] for p in pages})} domains "
          f"({time.process_time() - t0:.1f} s CPU)", flush=True)  # fmt: skip
    if args.chosen:
        setting = json.loads(args.chosen)
        setting["groups"] = frozenset(setting["groups"])
    else:
        setting, _ = choose(pages)
    shown = {**setting, "groups": sorted(setting["groups"])}
    print(f"chosen on folds {CHOICE_FOLDS}: {shown}", flush=True)

    dev_model = fit(_in(pages, CHOICE_FOLDS), setting)
    held = _in(pages, HELD_OUT_FOLDS)
    print(f"\nheld-out folds {HELD_OUT_FOLDS} ({len(held)} pages), trained on {CHOICE_FOLDS}: "
          f"learned {accuracy(dev_model, held):.4f}, rules {rules_accuracy(held):.4f}")  # fmt: skip
    print(f"dev folds, in sample: learned {accuracy(dev_model, _in(pages, CHOICE_FOLDS)):.4f}, "
          f"rules {rules_accuracy(_in(pages, CHOICE_FOLDS)):.4f}")  # fmt: skip
    print("\nconfusion, held-out folds, learned (trained on 0-2):")
    print(confusion([(p["kind"], predict_kind(dev_model, p["f"])[0]) for p in held]))
    print("\nconfusion, held-out folds, rules:")
    print(confusion([(p["kind"], p["rules"]) for p in held]))

    print(
        "\n| fold | pages | learned (trained on the other four) | rules |\n| --- | --- | --- | --- |"
    )
    models: dict[int, KindModel] = {}
    oof: list[tuple[str, str]] = []
    for k in range(FOLDS):
        test = [p for p in pages if p["fold"] == k]
        models[k] = fit([p for p in pages if p["fold"] != k], setting)
        oof += [(p["kind"], predict_kind(models[k], p["f"])[0]) for p in test]
        print(f"| {k} | {len(test)} | {accuracy(models[k], test):.4f} | "
              f"{rules_accuracy(test):.4f} |")  # fmt: skip
    right = sum(g == t for g, t in oof)
    print(f"| all | {len(oof)} | {right / len(oof):.4f} | {rules_accuracy(pages):.4f} |")
    print("\nconfusion, every fold out of fold, learned:")
    print(confusion(oof))

    gate = 0.0
    if not args.no_extraction:
        t1 = time.process_time()
        scores = extraction(pages, models)
        print(f"\nextraction, benchmark metric ({time.process_time() - t1:.0f} s CPU):")
        print(extraction_table(pages, scores))
        gate, gates = choose_gate(pages, scores)
        print(f"\nthe learned kind gated by its probability (out of fold; chosen: {gate}):")
        print(gates)
        gated_scores = {n: {**s, "learned": gated(s, gate)} for n, s in scores.items()}
        print(f"\nextraction with the gate {gate}:")
        print(extraction_table(pages, gated_scores))
    if args.write:
        export(fit(pages, setting), args.write, "trained on all of wcxb-dev", setting, gate)
        print(f"\nmodel written to {args.write}")
    if args.write_dev:
        export(dev_model, args.write_dev, "trained on wcxb-dev folds 0-2", setting, gate)
        print(f"folds 0-2 model written to {args.write_dev}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
