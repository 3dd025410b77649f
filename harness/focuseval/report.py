"""Evaluation reports: JSON, Markdown tables and one PNG per topic (all strategies on one figure).

Beside the strategies, the pure references of :mod:`focuseval.oracle` (``oracle``, ``bfs``: same
graph, same seeds): each strategy's target recall at :data:`RATIO_POINTS` also as a fraction of
the oracle's (``×oracle``) and as a ratio to BFS's (``×bfs``); and the crawler's own judgement
against the labels (:func:`focuseval.metrics.judge_quality`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from focuseval.metrics import CHECKPOINTS, CrawlMetrics

RATIO_POINTS = (250, 500, 1000)


def _recall(m: CrawlMetrics, n: int, reference: bool = False) -> float | None:
    """Recall after ``n`` pages; a reference that ran out of links keeps its last value."""
    if reference and 0 < m.fetched < n:
        n = m.fetched
    at = m.at(n)
    return None if at is None else at["target_recall"]


def ratios(
    m: CrawlMetrics, reference: CrawlMetrics | None, points: tuple[int, ...] = RATIO_POINTS
) -> dict[str, float | None]:
    """``m``'s target recall at each point / the reference's (``None``: not reached, or 0)."""
    out: dict[str, float | None] = {}
    for n in points:
        mine = _recall(m, n)
        ref = _recall(reference, n, reference=True) if reference is not None else None
        out[str(n)] = None if mine is None or not ref else mine / ref
    return out


def topic_report(
    corpus: str,
    topic: Any,
    results: dict[str, CrawlMetrics],
    runs: dict[str, dict[str, Any]],
    references: dict[str, CrawlMetrics] | None = None,
    judges: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report of one topic; ``references``: :func:`focuseval.oracle.reference_metrics`,
    ``judges``: per strategy :func:`focuseval.metrics.judge_quality` of its crawl log."""
    references = references or {}
    strategies = {}
    for name, m in results.items():
        s = {**m.summary(), **runs.get(name, {})}
        s["x_oracle"] = ratios(m, references.get("oracle"))
        s["x_bfs"] = ratios(m, references.get("bfs"))
        if judges and name in judges:
            s["judge"] = judges[name]
        strategies[name] = s
    return {
        "corpus": corpus,
        "topic": topic.name,
        "rule": topic.rule,
        "keywords": topic.keywords,
        "seeds": topic.seeds,
        "relevant_pages": len(topic.labels.relevant),
        "targets": len(topic.labels.targets),
        "checkpoints": list(CHECKPOINTS),
        "ratio_points": list(RATIO_POINTS),
        "strategies": strategies,
        "references": {name: m.summary() for name, m in references.items()},
    }


def _fmt(value: dict[str, float] | None, key: str) -> str:
    return "—" if value is None else f"{value[key]:.3f}"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _ratio_table(report: dict[str, Any]) -> list[str]:
    """Recall at the ratio points, ×oracle and ×bfs per strategy; then the judge's quality."""
    refs = report.get("references") or {}
    if not refs:
        return []
    points = [str(p) for p in report.get("ratio_points", RATIO_POINTS)]
    head = [f"recall @{p}" for p in points]
    head += [f"×oracle @{p}" for p in points] + [f"×bfs @{p}" for p in points]
    rows = ["| strategy | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for name, s in report["strategies"].items():
        cells = [_fmt(s["checkpoints"].get(p), "target_recall") for p in points]
        cells += [_ratio(s["x_oracle"].get(p)) for p in points]
        cells += [_ratio(s["x_bfs"].get(p)) for p in points]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    judged = [(n, s["judge"]) for n, s in report["strategies"].items() if "judge" in s]
    if judged:
        rows += [
            "",
            "The crawler's judgement of the pages it fetched, against the labels:",
            "",
            "| strategy | harvest (labels) | harvest (crawler's belief) | judge precision "
            "| judge recall | pages judged |",
            "|---|---|---|---|---|---|",
        ]
        for name, j in judged:
            rows.append(
                f"| {name} | {j['true_harvest']:.3f} | {j['believed_harvest']:.3f} "
                f"| {j['precision']:.3f} | {j['recall']:.3f} | {j['judged']} |"
            )
    return [*rows, ""]


def markdown_table(report: dict[str, Any]) -> str:
    points = report["checkpoints"]
    head = "| strategy | metric | " + " | ".join(str(p) for p in points) + " |"
    rows = [
        f"### {report['topic']} ({report['corpus']}; {report['targets']} targets, "
        f"{report['relevant_pages']} relevant pages)",
        "",
        head,
        "| --- | --- | " + " | ".join("---" for _ in points) + " |",
    ]
    named = [(name, s) for name, s in report["strategies"].items()]
    named += [(f"{name} (reference)", s) for name, s in (report.get("references") or {}).items()]
    for name, s in named:
        cps = s["checkpoints"]
        for key, label in (("harvest_rate", "harvest rate"), ("target_recall", "target recall")):
            cells = " | ".join(_fmt(cps.get(str(p)), key) for p in points)
            rows.append(f"| {name} | {label} | {cells} |")
    rows += [""]
    rows += _ratio_table(report)
    rows += [
        f"Seeds: {', '.join(report['seeds'])}. Keywords: {', '.join(report['keywords'])}.",
        "",
    ]
    rows += [f"Rule: {report['rule']}.", ""]
    return "\n".join(rows)


def plot(
    report: dict[str, Any],
    results: dict[str, CrawlMetrics],
    path: Path,
    references: dict[str, CrawlMetrics] | None = None,
) -> Path:
    """Harvest rate and target recall against pages fetched; the references dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_h, ax_r) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, m in results.items():
        xs = range(1, m.fetched + 1)
        ax_h.plot(xs, m.harvest, label=name)
        ax_r.plot(xs, m.recall, label=name)
    for name, m in (references or {}).items():
        xs = range(1, m.fetched + 1)
        style = {"linestyle": "--", "color": "black" if name == "oracle" else "grey"}
        ax_h.plot(xs, m.harvest, label=f"{name} (reference)", **style)
        ax_r.plot(xs, m.recall, label=f"{name} (reference)", **style)
    ax_h.set(title="harvest rate", xlabel="pages fetched", ylabel="relevant / fetched", ylim=(0, 1))
    ax_r.set(
        title="target recall", xlabel="pages fetched", ylabel="targets found / targets", ylim=(0, 1)
    )
    for ax in (ax_h, ax_r):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{report['topic']} ({report['corpus']})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_topic_report(
    out: Path,
    report: dict[str, Any],
    results: dict[str, CrawlMetrics],
    slug: str,
    references: dict[str, CrawlMetrics] | None = None,
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / f"{slug}.json",
        "markdown": out / f"{slug}.md",
        "png": out / f"{slug}.png",
    }
    paths["json"].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown_table(report), encoding="utf-8")
    plot(report, results, paths["png"], references)
    return paths
