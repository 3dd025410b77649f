"""The harvest-rate plot as PNG bytes (matplotlib, Agg backend, no display)."""

from __future__ import annotations

import io

from focuscrawl.web.data import HarvestSeries

WIDTH_PX, HEIGHT_PX, DPI = 800, 360, 100


def harvest_png(series: HarvestSeries) -> bytes:
    """Cumulative and moving-window harvest rate against pages fetched (exactly 800×360 px)."""
    from matplotlib.figure import Figure  # Figure without pyplot: no global state, thread-safe

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    ax = fig.add_subplot()
    if series.fetched:
        ax.plot(
            series.fetched,
            series.moving,
            color="#9ecae1",
            lw=1,
            label=f"last {series.window} pages",
        )
        ax.plot(series.fetched, series.cumulative, color="#08519c", lw=2, label="cumulative")
        ax.legend(loc="lower right")
    else:
        ax.text(0.5, 0.5, "no crawl log yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("pages fetched")
    ax.set_ylabel("harvest rate")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
