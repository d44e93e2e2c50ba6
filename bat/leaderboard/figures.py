"""The figures of a leaderboard site, as SVG (matplotlib): scores with their intervals, convergence and ECDFs.

A figure is drawn from its input (``figures/<name>.json``, written by
``bat.leaderboard.pages``) alone, under the analyses' style
(``bat.analysis.plots.styled``), and saved without a date and with a fixed
hash salt so the same input gives the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.analysis.plots import legend_beside, pyplot, series_style, set_title, styled
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
    for ax, axis in zip(panels, AXES, strict=True):
        for y, r in enumerate(rows):
            s = r[axis]
            if s["score"] is None:
                continue
            err = None
            if s["ci_low"] is not None and s["ci_high"] is not None:  # rounding: never below 0
                err = [[max(s["score"] - s["ci_low"], 0.0)], [max(s["ci_high"] - s["score"], 0.0)]]
            ax.errorbar([s["score"]], [y], xerr=err, fmt="o", capsize=3, color=series_style(0)["color"])
        ax.axvline(0.0, color="0.5", linewidth=0.8, linestyle="--")
        ax.set_xlabel(f"{_AXIS_NAMES[axis]}\n(0 = random search, 1 = optimum)")
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(len(names) - 0.5, -0.5)
    set_title(panels[0], data["title"])
    return fig


@styled
def curves_figure(data: dict[str, Any]) -> Figure:
    """Per tuner, against evaluations: the median relative performance (line) and Q1 to Q3 (band) of a
    convergence figure, or the share of fixed targets reached of an ECDF figure."""
    fig = pyplot().figure(figsize=(7.0, 3.6))
    pyplot().close(fig)
    ax = fig.subplots()
    convergence = data["kind"] == "convergence"
    for k, (label, c) in enumerate(data["curves"].items()):
        style = series_style(k)
        y = c["median"] if convergence else c["share"]
        x = range(1, len(y) + 1)
        if convergence:
            ax.fill_between(x, c["q1"], c["q3"], color=style["color"], alpha=0.2, linewidth=0)
        what = f"{c['runs']} runs" if convergence else f"{c['pairs']} pairs"
        ax.plot(x, y, label=f"{label} ({what})", drawstyle="default" if convergence else "steps-post", **style)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("best known / best found so far" if convergence else "share of (run, fixed target) reached")
    ax.set_ylim(0.0, 1.05)
    legend_beside(ax)
    set_title(ax, data["title"])
    return fig


def draw(data: dict[str, Any], path: Path) -> Path:
    """The figure of ``data`` (scores, convergence or ECDF, by its ``kind``) written to ``path`` (SVG)."""
    import matplotlib

    fig = score_figure(data) if data["kind"] == "scores" else curves_figure(data)
    with matplotlib.rc_context({"svg.hashsalt": "bat-leaderboard", "text.parse_math": False}):
        fig.savefig(path, format="svg", metadata={"Date": None})
    return path
