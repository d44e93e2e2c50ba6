"""The static figures of a leaderboard site, as SVG (matplotlib): each tuner's scores with their intervals.

A figure is drawn from its input (``figures/<name>.json``, written by
``bat.leaderboard.pages``) alone, under the analyses' style
(``bat.analysis.plots.styled``), and saved without a date and with a fixed
hash salt so the same input gives the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.analysis.plots import pyplot, series_style, set_title, styled
from bat.leaderboard.sources import AXES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_AXIS_NAMES = {"evaluations": "score on evaluations", "time": "score on simulated time"}


@styled
def score_figure(data: dict[str, Any]) -> Figure:
    """One panel per axis: a point and its interval per tuner, the best at the top; 0 (random search) marked."""
    rows = data["rows"]
    fig = pyplot().figure(figsize=(8.0, 1.2 + 0.28 * max(len(rows), 1)))
    pyplot().close(fig)
    panels = fig.subplots(1, len(AXES), sharey=True)
    names = [r["tuner"] for r in rows]
    color = series_style(0)["color"]
    for ax, axis in zip(panels, AXES, strict=True):
        # every tuner's point in one call, and its interval in another (one artist per figure, not per tuner)
        scored = [(y, r[axis]) for y, r in enumerate(rows) if r[axis]["score"] is not None]
        bounded = [(y, s) for y, s in scored if s["ci_low"] is not None and s["ci_high"] is not None]
        if bounded:  # rounding: never below 0
            ax.errorbar([s["score"] for _, s in bounded], [y for y, _ in bounded], fmt="none", capsize=3, color=color,
                        xerr=[[max(s["score"] - s["ci_low"], 0.0) for _, s in bounded],
                              [max(s["ci_high"] - s["score"], 0.0) for _, s in bounded]])
        ax.plot([s["score"] for _, s in scored], [y for y, _ in scored], "o", color=color)
        ax.axvline(0.0, color="0.5", linewidth=0.8, linestyle="--")
        ax.set_xlabel(f"{_AXIS_NAMES[axis]}\n(0 = random search, 1 = optimum)")
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(max(len(names), 1) - 0.5, -0.5)  # no tuner (a site of transfer studies alone): one empty row
    set_title(panels[0], data["title"])
    return fig


def draw(data: dict[str, Any], path: Path) -> Path:
    """The score figure of ``data`` written to ``path`` (SVG); convergence and ECDFs are interactive
    (``bat.leaderboard.interactive``)."""
    import matplotlib

    fig = score_figure(data)
    with matplotlib.rc_context({"svg.hashsalt": "bat-leaderboard", "text.parse_math": False}):
        fig.savefig(path, format="svg", metadata={"Date": None})
    return path
