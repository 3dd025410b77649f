"""Evaluation reports: JSON, a Markdown table and one PNG per topic (all strategies on one figure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from focuseval.metrics import CHECKPOINTS, CrawlMetrics


def topic_report(
    corpus: str, topic: Any, results: dict[str, CrawlMetrics], runs: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    return {
        "corpus": corpus,
        "topic": topic.name,
        "rule": topic.rule,
        "keywords": topic.keywords,
        "seeds": topic.seeds,
        "relevant_pages": len(topic.labels.relevant),
        "targets": len(topic.labels.targets),
        "checkpoints": list(CHECKPOINTS),
        "strategies": {name: {**m.summary(), **runs.get(name, {})} for name, m in results.items()},
    }


def _fmt(value: dict[str, float] | None, key: str) -> str:
    return "—" if value is None else f"{value[key]:.3f}"


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
    for name, s in report["strategies"].items():
        cps = s["checkpoints"]
        for key, label in (("harvest_rate", "harvest rate"), ("target_recall", "target recall")):
            cells = " | ".join(_fmt(cps.get(str(p)), key) for p in points)
            rows.append(f"| {name} | {label} | {cells} |")
    rows += [
        "",
        f"Seeds: {', '.join(report['seeds'])}. Keywords: {', '.join(report['keywords'])}.",
        "",
    ]
    rows += [f"Rule: {report['rule']}.", ""]
    return "\n".join(rows)


def plot(report: dict[str, Any], results: dict[str, CrawlMetrics], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_h, ax_r) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, m in results.items():
        xs = range(1, m.fetched + 1)
        ax_h.plot(xs, m.harvest, label=name)
        ax_r.plot(xs, m.recall, label=name)
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
    out: Path, report: dict[str, Any], results: dict[str, CrawlMetrics], slug: str
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / f"{slug}.json",
        "markdown": out / f"{slug}.md",
        "png": out / f"{slug}.png",
    }
    paths["json"].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown_table(report), encoding="utf-8")
    plot(report, results, paths["png"])
    return paths
