"""Every figure ``bat analyze``, ``bat compare`` and ``bat hypertune`` draw, read back as text (issue 42).

Each figure is caught where matplotlib saves it (``Figure.savefig``, whoever calls it) and its drawn tick
labels are read: none holds mathtext markup (``$``, ``\\mathdefault``), every log axis has labels, the
labels of one axis never overlap, and every legend's entries differ in more than colour (dashes,
markers or hatches), so a figure printed in grey still tells its series apart.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bat.cli import EXIT_OK, main

if TYPE_CHECKING:  # matplotlib loads in the tests, not when pytest collects this file
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend


def tick_texts(ax: Any, which: str) -> list[Any]:
    axis = ax.xaxis if which == "x" else ax.yaxis
    ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    return [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text()
            and t.get_visible()]


def appearance(handle: Any) -> tuple:
    """What tells a legend entry apart without its colour."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(handle, Line2D):
        return ("line", handle.get_linestyle(), str(getattr(handle, "_unscaled_dash_pattern", None)),
                handle.get_marker() if handle.get_marker() not in ("None", None, "") else None)
    if isinstance(handle, Patch):
        return ("patch", handle.get_hatch() or "", handle.get_fill())
    return (type(handle).__name__,)


def problems(fig: Figure, name: str) -> list[str]:
    found = []
    renderer = fig._get_renderer()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which in "xy":
            texts = tick_texts(ax, which)
            scale = (ax.get_xscale if which == "x" else ax.get_yscale)()
            if scale == "log" and not texts:
                found.append(f"{name}: a log {which} axis has no labelled tick")
            for t in texts:
                if "$" in t.get_text() or "mathdefault" in t.get_text():
                    found.append(f"{name}: {which} tick label {t.get_text()!r} is mathtext printed literally")
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
            for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
                if box_a.padded(-1).overlaps(box_b.padded(-1)):
                    found.append(f"{name}: {which} tick labels {a!r} and {b!r} overlap")
    legends: list[Legend] = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    for legend in legends:
        looks = [appearance(h) for h in legend.legend_handles]
        labels = [t.get_text() for t in legend.get_texts()]
        for (la, a), (lb, b) in itertools.combinations(zip(labels, looks, strict=True), 2):
            if a == b:
                found.append(f"{name}: legend entries {la!r} and {lb!r} differ only in colour")
    return found


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Every figure saved in the test, by file name: the problems found in it once drawn."""
    from matplotlib.figure import Figure

    seen: dict[str, list[str]] = {}
    real = Figure.savefig

    def savefig(self: Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        real(self, fname, *args, **kwargs)
        titles = [t.get_text() for ax in self.axes for t in (ax.title, ax._left_title) if t.get_text()]
        name = f"figure {len(seen) + 1} ({titles[0] if titles else 'no title'!r})"
        seen[name] = problems(self, name)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return seen


def all_clean(seen: dict[str, list[str]], expected: set[str]) -> None:
    """No problem in any figure, and as many figures checked as were written."""
    flat = [p for found in seen.values() for p in found]
    assert not flat, "\n".join(flat)
    assert len(seen) >= len(expected), (sorted(seen), sorted(expected))


@pytest.mark.slow
def test_every_analyze_figure_reads_back(figures: dict[str, list[str]], tmp_path: Path, capsys) -> None:
    assert main(["analyze", "-b", "pnpoly", "--gpus", "RTX_3090", "--gpus", "RTX_3060_laptop", "--iterations", "20",
                 "--repeats", "2", "-o", str(tmp_path / "rep")]) == EXIT_OK
    written = {p.stem for p in (tmp_path / "rep" / "figures").glob("*.png")}
    assert {"pnpoly_convergence_RTX_3090", "pnpoly_distribution", "pnpoly_centrality", "pnpoly_importance",
            "speedup", "pnpoly_tuning_impact"} <= written
    all_clean(figures, written)


@pytest.mark.slow
def test_every_compare_figure_reads_back(figures: dict[str, list[str]], tmp_path: Path, capsys) -> None:
    assert main(["compare", "-t", "reference:random,reference:genetic,reference:coordinate", "-b", "pnpoly",
                 "--gpus", "RTX_3090,RTX_3060_laptop", "--budgets", "10,40", "-r", "3",
                 "-o", str(tmp_path / "c")]) == EXIT_OK
    written = {p.stem for p in (tmp_path / "c").rglob("*.png")}
    assert {"overlay", "score_evaluations", "score_time", "ecdf_evaluations", "ecdf_time"} <= written
    all_clean(figures, written)


@pytest.mark.slow
def test_every_hypertune_figure_reads_back(figures: dict[str, list[str]], tmp_path: Path, capsys) -> None:
    assert main(["hypertune", "-t", "reference:genetic", "--params", "population,mutation_rate", "--budget", "20",
                 "-r", "2", "--final-repeats", "3", "--settings", "6", "--train", "pnpoly_RTX_3090,pnpoly_RTX_2080_Ti",
                 "--heldout", "pnpoly_RTX_Titan", "-o", str(tmp_path / "h")]) == EXIT_OK
    written = {p.stem for p in (tmp_path / "h").rglob("*.png")}
    assert {"settings", "best_vs_defaults", "per_dataset"} <= written
    all_clean(figures, written)


def test_log_axes_read_as_plain_numbers() -> None:
    """The formatter itself: decades as decimals or 10 with a superscript, never mathtext."""
    from bat.analysis.convergence import Curve
    from bat.analysis.plots import convergence_figure

    ks = list(range(1, 100001, 7))
    flat = [0.5] * len(ks)
    curve = Curve(label="random search", budgets=ks, centre=flat, low=flat, high=flat, method="exact")
    fig = convergence_figure("t", [curve])
    fig.draw_without_rendering()
    labels = [t.get_text() for t in tick_texts(fig.axes[0], "x")]
    assert {"1", "10", "100", "1000", "10⁴", "10⁵"} <= set(labels), labels
    assert problems(fig, "convergence") == []


@pytest.mark.parametrize("top", [1.5, 31.9, 900.0, 5e5])
def test_log_axes_over_any_range_neither_crowd_nor_print_mathtext(top: float) -> None:
    """Log axes spanning a fraction of a decade to several: labels never overlap (the tuning-impact figure's
    own minor labels once printed 10, 9, 8, 7 on top of each other) and are never mathtext."""
    from bat.analysis.plots import speedup_figure, tuning_impact_figure

    impact = {"A100": {"over_median": top, "over_default": 1.4}, "W6600": {"over_median": 3.2,
                                                                          "over_default": None}}
    figures = {"tuning impact": tuning_impact_figure("b", impact, {"A100": "NVIDIA", "W6600": "AMD"}),
               "speedup": speedup_figure({"b": {"A100": top, "W6600": 1.2}}, "all")}
    for name, fig in figures.items():
        fig.draw_without_rendering()
        assert problems(fig, name) == []
        axis_labels = [t.get_text() for t in tick_texts(fig.axes[0], "y")]
        assert len(axis_labels) >= 2, (name, axis_labels)
