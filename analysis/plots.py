"""Figures of the analyses (matplotlib): labelled axes, units, GPU names.

Each ``*_figure`` function draws one figure and returns it (a
``matplotlib.figure.Figure``, closed in pyplot at once, so a notebook shows it
once when a cell returns it and nothing is left open); each ``plot_*``
function draws the same figure and writes it as PNG and SVG next to each
other, returning the PNG path. Long titles and tick labels are wrapped to the
figure's width; every figure is drawn under ``STYLE`` (``styled``): constrained
layout, so a plain ``fig.savefig(path)`` keeps every label and nothing overlaps,
and no mathtext, so text from data (a GPU name, a label with ``$``) is drawn as
written. Without mathtext matplotlib's own log-axis labels (``$\\mathdefault{10^{2}}$``) would print
literally, so every log axis of a styled or saved figure gets ``PlainLogFormatter`` (``plain_ticks``,
``bat.analysis.log_ticks``): the same ticks, labelled in plain text (1, 10, 100, 1000, 10⁴, 0.01, 10⁻³).
``pyplot``, ``save_figure``, ``set_title`` and ``styled`` are shared with the figures of ``bat compare``
and ``bat hypertune``.
"""

from __future__ import annotations

import functools
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np

from bat.analysis.centrality import Centrality
from bat.analysis.convergence import Curve
from bat.analysis.distribution import Distribution
from bat.analysis.importance import Importance
from bat.analysis.portability import Portability
from bat.core.atomic import publish

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

#: characters per inch of figure width at the title font size (9 pt), measured on DejaVu Sans
_CHARS_PER_INCH = 15
#: The rc settings every figure is drawn and saved under: text is never mathtext (data is not code),
#: and constrained layout places every title, label and legend.
STYLE: dict[RcKeyType, Any] = {"text.parse_math": False, "figure.constrained_layout.use": True}

P = ParamSpec("P")
R = TypeVar("R")


def plain_ticks(fig: Figure) -> Figure:
    """``fig`` with every log-scaled axis labelled by ``PlainLogFormatter`` (major and minor ticks)."""
    from matplotlib.ticker import LogFormatterMathtext

    from bat.analysis.log_ticks import PlainLogFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            # matplotlib's defaults write mathtext; a formatter the figure chose itself is kept
            if isinstance(axis.get_major_formatter(), LogFormatterMathtext):
                axis.set_major_formatter(PlainLogFormatter())
            if isinstance(axis.get_minor_formatter(), LogFormatterMathtext):
                axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    return fig


#: colour-blind-safe colours (Okabe and Ito; black is random search's) ...
_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999933")
#: ... each paired with a dash pattern, and bars with a hatch, so series stay apart printed in grey
_DASHES: tuple[Any, ...] = ("-", (0, (5, 1.5)), (0, (1, 1.2)), (0, (6, 1.5, 1, 1.5)), (0, (2.5, 1.2, 1, 1.2, 1, 1.2)))
_HATCHES = ("", "///", "...", "xx", "\\\\", "++", "oo")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def series_style(k: int) -> dict[str, Any]:
    """Colour and dash pattern of the ``k``-th line series of a figure (a tuner, a GPU)."""
    return {"color": _COLOURS[k % len(_COLOURS)], "linestyle": _DASHES[k % len(_DASHES)]}


def bar_style(k: int) -> dict[str, Any]:
    """Colour and hatch of the ``k``-th bar series of a figure."""
    return {"color": _COLOURS[k % len(_COLOURS)], "hatch": _HATCHES[k % len(_HATCHES)], "edgecolor": "black",
            "linewidth": 0.5}


def marker(k: int) -> str:
    """The marker of the ``k``-th series whose points matter (centrality against p)."""
    return _MARKERS[k % len(_MARKERS)]


def legend_beside(ax: Any, **kwargs: Any) -> None:
    """The axes' legend outside them, to their right: it never covers data (constrained layout makes room)."""
    ax.legend(fontsize="x-small", title_fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0, **kwargs)


def figure_legend(fig: Figure, axes: Sequence[Any]) -> None:
    """One legend for every panel (each label once), below them all: no panel's data is covered."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        fig.legend(list(entries.values()), list(entries), loc="outside lower center", fontsize="small",
                   ncols=min(3, len(entries)), frameon=False)


def styled(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` run under ``STYLE`` (every Text it makes keeps the setting, whenever it is saved);
    a Figure it returns has plain-text log ticks (``plain_ticks``)."""

    @functools.wraps(draw)
    def under_style(*args: P.args, **kwargs: P.kwargs) -> R:
        import matplotlib
        from matplotlib.figure import Figure

        pyplot()
        with matplotlib.rc_context(STYLE):
            result = draw(*args, **kwargs)
        if isinstance(result, Figure):
            plain_ticks(result)
        return result

    return under_style


def pyplot() -> Any:
    """matplotlib.pyplot; off-screen (Agg) outside IPython, the notebook's own backend inside it."""
    import matplotlib

    if "IPython" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(figsize: tuple[float, float]) -> tuple[Figure, Any]:
    """A figure with one axes, already closed in pyplot (nothing to close later, nothing shown twice)."""
    plt = pyplot()
    fig = plt.figure(figsize=figsize)
    plt.close(fig)
    return fig, fig.subplots()


#: Formats a figure can be written in (``--format``); PNG is always among them (report.md embeds it).
FORMATS = ("png", "svg", "pdf")
_formats: ContextVar[tuple[str, ...] | None] = ContextVar("figure_formats", default=None)


@contextmanager
def figure_formats(formats: Sequence[str]) -> Iterator[None]:
    """Within this block every ``save_figure`` writes PNG and ``formats`` (of ``FORMATS``)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"figure format {', '.join(unknown)}: expected {', '.join(FORMATS)}")
    token = _formats.set(tuple(dict.fromkeys(["png", *formats])))
    try:
        yield
    finally:
        _formats.reset(token)


@styled
def save_figure(fig: Figure, path: Path, *, svg: bool = True) -> Path:
    """Write ``path``.png (and .svg, or the formats of ``figure_formats``) atomically; close the figure.

    Returns the PNG. Saved with a tight bounding box; the constrained layout of ``STYLE`` keeps a
    plain ``savefig`` of the same figure whole too.
    """
    chosen = _formats.get() or (("png", "svg") if svg else ("png",))
    plain_ticks(fig)
    for fmt in chosen:
        publish(path.with_suffix(f".{fmt}"), functools.partial(fig.savefig, dpi=150, bbox_inches="tight", format=fmt))
    pyplot().close(fig)
    return path.with_suffix(".png")


def wrap(text: str, inches: float, scale: float = 1.0) -> str:
    """``text`` broken into lines that fit ``inches`` of width (``scale``: font size / 9 pt)."""
    return textwrap.fill(text, max(12, int(inches * _CHARS_PER_INCH / scale)))


def set_title(ax: Any, text: str, fontsize: float = 9) -> None:
    """A title wrapped to the width of its axes, from their left edge (it never runs off the figure's left,
    however much a legend beside the axes narrows them)."""
    width = ax.get_position().width * ax.figure.get_figwidth()
    ax.set_title(wrap(text, width, fontsize / 9), fontsize=fontsize, loc="left")


@styled
def distribution_figure(benchmark: str, dists: Mapping[str, Distribution]) -> Figure:
    """Violins of time / median per GPU, log scale."""
    fig, ax = _figure((2.4 + 1.5 * len(dists), 4))
    names = [textwrap.fill(n, 14) for n in dists]
    ax.violinplot([np.log10(d.relative) for d in dists.values()], showmedians=True)
    ax.set_xticks(range(1, len(names) + 1), names, fontsize=8)
    ax.axhline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_ylabel("log10(time / median time)\n(valid configurations)")
    set_title(ax, f"{benchmark}: distribution of configurations")
    return fig


@styled
def speedup_figure(values: Mapping[str, Mapping[str, float]], definition: str) -> Figure:
    """Grouped bars: benchmark x GPU max speedup over median.

    Each benchmark's group holds only the GPUs with data on it, centred on its tick, one colour per GPU
    across groups; the y axis turns logarithmic when the speedups span more than a factor of 10.
    """
    benches = list(values)
    gpus = sorted({g for v in values.values() for g in v})
    styles = {g: bar_style(k) for k, g in enumerate(gpus)}
    fig, ax = _figure((3 + 1.8 * len(benches), 4))
    width = 0.8 / max(1, max((len(v) for v in values.values()), default=1))
    drawn: set[str] = set()
    for i, b in enumerate(benches):
        present = [g for g in gpus if g in values[b]]
        for k, g in enumerate(present):
            ax.bar(i + (k - (len(present) - 1) / 2) * width, values[b][g], width, **styles[g],
                   label=None if g in drawn else g)
            drawn.add(g)
    ax.set_xticks(np.arange(len(benches)), benches)
    finite = [v for bv in values.values() for v in bv.values() if np.isfinite(v) and v > 0]
    if finite and max(finite) / min(finite) > 10:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_ylabel("max speedup over median (x)")
    set_title(ax, f"Max speedup over median ({definition})")
    legend_beside(ax, title="GPU")
    return fig


@styled
def convergence_figure(title: str, curves: Sequence[Curve]) -> Figure:
    """Relative performance against evaluations: random search as a line with its band, traces as steps.

    A curve made from traces is drawn as a step function of the evaluation count (its value
    changes only when an evaluation finds a better configuration), every run thin and the
    centre line thick, with the band between the quartiles.
    """
    fig, ax = _figure((7.6, 4.2))
    traced = 0
    for c in curves:
        if not c.budgets:
            continue
        where = "post" if c.steps else None
        label = f"{c.label} ({c.definition} of {len(c.runs)} runs)" if c.steps else c.label
        kw = {"drawstyle": "steps-post", **series_style(traced)} if c.steps else {"color": "black", "ls": "--"}
        traced += bool(c.steps)
        line, = ax.plot(c.budgets, c.centre, lw=2 if c.steps else 1.2, label=label, **kw)
        for run in c.runs:
            ax.plot(c.budgets, run, color=line.get_color(), lw=0.5, alpha=0.35, drawstyle="steps-post")
        ax.fill_between(c.budgets, c.low, c.high, color=line.get_color(), alpha=0.15 if c.steps else 0.08,
                        step=where, label=None if c.steps else "random search: 25-75 % band")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("evaluations (distinct configurations)")
    ax.set_ylabel("relative performance\n(best time / best found)")
    legend_beside(ax)
    set_title(ax, title)
    ax.grid(alpha=0.3)
    return fig


@styled
def centrality_figure(benchmark: str, results: Mapping[str, Centrality], p_max: float = 0.15) -> Figure:
    """Proportion of centrality against p, one line per GPU."""
    fig, ax = _figure((7.6, 4.2))
    for k, (gpu, c) in enumerate(results.items()):
        keep = c.p <= p_max + 1e-9
        ax.plot(c.p[keep] * 100, c.proportion[keep], marker=marker(k), ms=4, label=gpu, **series_style(k))
    first = next(iter(results.values()))
    ax.set_xlabel("p: tolerance over the optimum (%)")
    ax.set_ylabel("proportion of centrality")
    ax.set_ylim(0, 1.02)
    legend_beside(ax, title="GPU")
    set_title(ax, f"{benchmark}: proportion of centrality ({first.variant}, {first.neighbourhood})")
    ax.grid(alpha=0.3)
    return fig


@styled
def importance_figure(benchmark: str, results: Mapping[str, Importance]) -> Figure:
    """Horizontal bars of PFI per parameter and GPU, with the confidence band as error bars.

    Parameters whose PFI is 0 on every GPU (one value in the data) are left out.
    """
    first = next(iter(results.values()))
    shown = [j for j in range(len(first.parameters))
             if any(np.any(imp.repeats[j] != 0) for imp in results.values())]
    params = [first.parameters[j] for j in shown]
    fig, ax = _figure((7.6, 1.5 + 0.3 * len(params) * max(1, len(results)) / 2))
    height = 0.8 / max(1, len(results))
    for k, (gpu, imp) in enumerate(results.items()):
        # the first GPU at the top of each group, as it is at the top of the legend
        ax.barh(np.arange(len(params)) + (len(results) - 1 - k) * height, imp.mean[shown], height,
                xerr=np.nan_to_num(imp.half_width[shown]), label=f"{gpu} (CV R² {imp.cv_r2:.2f})", **bar_style(k))
    ax.set_yticks(np.arange(len(params)) + height * (len(results) - 1) / 2, params)
    ax.axvline(0.05, color="grey", ls=":", lw=0.8)
    ax.set_xlabel("permutation feature importance (drop in R²; dotted: 0.05)")
    legend_beside(ax, title="GPU")
    set_title(ax, f"{benchmark}: permutation feature importance (CatBoost)")
    return fig


@styled
def portability_figure(benchmark: str, port: Portability, names: Mapping[str, str] | None = None
                       ) -> Figure | None:
    """Heatmap in percent; empty cells are hatched and labelled with their reason.

    A benchmark with data on one GPU has no portability to show: no figure (None).
    """
    from matplotlib.patches import Rectangle

    n = len(port.gpus)
    if n < 2:
        return None
    vendors = port.vendors or [""] * n
    labels = [textwrap.fill((names or {}).get(g, g), 16) + (f"\n({v})" if v else "") for g, v in zip(
        port.gpus, vendors, strict=True)]
    fig, ax = _figure((2.6 + 1.3 * n, 1.8 + 1.1 * n))
    masked = np.ma.masked_invalid(port.matrix * 100)
    ax.set_facecolor("lightgrey")
    im = ax.imshow(masked, cmap="viridis", vmin=min(50.0, float(np.nanmin(port.matrix)) * 100), vmax=100)
    for i in range(n):
        for j in range(n):
            v = port.matrix[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v * 100:.1f}", ha="center", va="center", fontsize=8,
                        color="white" if v < 0.8 else "black")
            else:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//"))
                ax.text(j, i, port.reasons[(port.gpus[i], port.gpus[j])], ha="center",
                        va="center", fontsize=8)
    ax.set_xticks(range(n), labels, fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("run on GPU")
    ax.set_ylabel("tuned on GPU")
    boundaries = [k for k in range(1, n) if vendors[k] != vendors[k - 1]]
    for k in boundaries:  # vendor boundaries: the off-diagonal blocks are cross-vendor portability
        ax.axhline(k - 0.5, color="red", lw=2.5)
        ax.axvline(k - 0.5, color="red", lw=2.5)
    set_title(ax, f"{benchmark}: performance portability"
              + (" (red lines: vendor boundaries)" if boundaries else ""))
    fig.colorbar(im, ax=ax, label="relative performance (%)")
    return fig


#: bar colours of the vendors in the tuning-impact figure (NVIDIA green, AMD red, unknown grey)
VENDOR_COLOURS = {"NVIDIA": "#76b900", "AMD": "#c8102e", "": "#8c8c8c"}


@styled
def tuning_impact_figure(benchmark: str, impact: Mapping[str, Mapping[str, float | None]],
                         vendors: Mapping[str, str]) -> Figure:
    """Max speedup of each GPU's best configuration over its median one and over the default one.

    ``impact``: per GPU name, ``over_median`` and ``over_default`` (None: no measured default, shown as
    "n/a"). Bars are coloured by vendor (``vendors``, per GPU name), the two speedups told apart by hatching;
    the y axis is logarithmic (speedups span orders of magnitude across vendors).
    """
    from matplotlib.patches import Patch

    plt = pyplot()
    gpus = list(impact)
    fig = plt.figure(figsize=(max(4.8, 1.1 * len(gpus) + 1.8), 3.8), layout="constrained")
    plt.close(fig)
    ax = fig.subplots()
    width = 0.38
    for k, (key, hatch) in enumerate((("over_median", ""), ("over_default", "///"))):
        for i, g in enumerate(gpus):
            value = impact[g][key]
            x = i + (k - 0.5) * width
            colour = VENDOR_COLOURS.get(vendors.get(g, ""), VENDOR_COLOURS[""])
            if value is None:
                ax.text(x, 1.0, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)
                continue
            ax.bar(x, value, width, color=colour, hatch=hatch, edgecolor="black", linewidth=0.6)
            ax.text(x, value, f"{value:.3g}", ha="center", va="bottom", fontsize=7)
    ax.set_yscale("log")  # labelled by PlainLogFormatter (styled): minor ticks only where the range is short
    ax.set_xlim(-0.6, len(gpus) - 0.4)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(range(len(gpus)), [textwrap.fill(_with_vendor(g, vendors.get(g, "")), 12) for g in gpus],
                  fontsize=7)
    ax.set_ylabel("max speedup of the best configuration")
    handles = [Patch(facecolor="white", edgecolor="black", label="over the median configuration"),
               Patch(facecolor="white", edgecolor="black", hatch="///", label="over the default configuration")]
    legend_beside(ax, handles=handles, title="bars coloured by vendor")
    missing = any(impact[g]["over_default"] is None for g in gpus)
    ax.set_title(f"{benchmark}: tuning impact per GPU"
                 + ("\n(n/a: the default configuration has no measurement)" if missing else ""), fontsize=9)
    ax.grid(axis="y", alpha=0.3, which="both")
    return fig


def _with_vendor(gpu: str, vendor: str) -> str:
    """A GPU's name that says its vendor (the bars' colour says it too, but not in grey print)."""
    return gpu if not vendor or gpu.upper().startswith(vendor.upper()) else f"{gpu} ({vendor})"


# -- the same figures written to files (the report's and the CLI's) ---------------------------
def plot_distribution(benchmark: str, dists: Mapping[str, Distribution], path: Path) -> Path:
    return save_figure(distribution_figure(benchmark, dists), path)


def plot_speedup(values: Mapping[str, Mapping[str, float]], definition: str, path: Path) -> Path:
    return save_figure(speedup_figure(values, definition), path)


def plot_convergence(title: str, curves: Sequence[Curve], path: Path) -> Path:
    return save_figure(convergence_figure(title, curves), path)


def plot_centrality(benchmark: str, results: Mapping[str, Centrality], path: Path, p_max: float = 0.15) -> Path:
    return save_figure(centrality_figure(benchmark, results, p_max), path)


def plot_importance(benchmark: str, results: Mapping[str, Importance], path: Path) -> Path:
    return save_figure(importance_figure(benchmark, results), path)


def plot_tuning_impact(benchmark: str, impact: Mapping[str, Mapping[str, float | None]],
                       vendors: Mapping[str, str], path: Path) -> Path:
    return save_figure(tuning_impact_figure(benchmark, impact, vendors), path)


def plot_portability(benchmark: str, port: Portability, path: Path,
                     names: Mapping[str, str] | None = None) -> Path | None:
    """The portability heatmap written to ``path``; None (no file) for a benchmark on one GPU."""
    fig = portability_figure(benchmark, port, names)
    return None if fig is None else save_figure(fig, path)
