"""Figures of the analyses (matplotlib): labelled axes, units, GPU names.

Each ``*_figure`` function draws one figure and returns it (a
``matplotlib.figure.Figure``, made without pyplot, so it leaves the
notebook's or the program's backend alone and displays in a notebook); each
``plot_*`` function draws the same figure and writes it as PNG and SVG next
to each other, returning the PNG path.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from analysis.centrality import Centrality
from analysis.convergence import Curve
from analysis.distribution import Distribution
from analysis.importance import Importance
from analysis.portability import Portability

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(figsize: tuple[float, float]) -> tuple[Figure, Any]:
    """A figure with one axes, already closed in pyplot (nothing to close later, nothing shown twice).

    Made through pyplot, so a notebook's inline backend displays it when a cell returns it;
    outside IPython (a script, ``bat analyze``) it is drawn off-screen with Agg.
    """
    import matplotlib

    if "IPython" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize)
    plt.close(fig)
    return fig, fig.subplots()


def save_figure(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as ``path``.png (150 dpi) and ``path``.svg; the PNG path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path.with_suffix(".png"), dpi=150)
    fig.savefig(path.with_suffix(".svg"))
    return path.with_suffix(".png")


def distribution_figure(benchmark: str, dists: Mapping[str, Distribution]) -> Figure:
    """Violins of time / median per GPU, log scale."""
    fig, ax = _figure((1.6 + 1.4 * len(dists), 4))
    names = list(dists)
    ax.violinplot([np.log10(d.relative) for d in dists.values()], showmedians=True)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=20)
    ax.axhline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_ylabel("log10(time / median time)  [valid configurations]")
    ax.set_title(f"{benchmark}: distribution of configurations")
    return fig


def speedup_figure(values: Mapping[str, Mapping[str, float]], definition: str) -> Figure:
    """Grouped bars: benchmark x GPU max speedup over median."""
    benches = list(values)
    gpus = sorted({g for v in values.values() for g in v})
    fig, ax = _figure((2 + 1.8 * len(benches), 4))
    width = 0.8 / max(1, len(gpus))
    for k, g in enumerate(gpus):
        ys = [values[b].get(g, np.nan) for b in benches]
        ax.bar(np.arange(len(benches)) + k * width, ys, width, label=g)
    ax.set_xticks(np.arange(len(benches)) + width * (len(gpus) - 1) / 2, benches)
    ax.set_ylabel("max speedup over median (x)")
    ax.set_title(f"Max speedup over median ({definition})", fontsize=9)
    ax.legend(fontsize=8)
    return fig


def convergence_figure(title: str, curves: Sequence[Curve]) -> Figure:
    """Relative performance against evaluations, one line with band per curve."""
    fig, ax = _figure((6, 4))
    for c in curves:
        line, = ax.plot(c.budgets, c.centre, marker="o", ms=3, label=c.label)
        ax.fill_between(c.budgets, c.low, c.high, color=line.get_color(), alpha=0.2)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("evaluations (distinct configurations)")
    ax.set_ylabel("relative performance (best time / best found)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def centrality_figure(benchmark: str, results: Mapping[str, Centrality], p_max: float = 0.15) -> Figure:
    """Proportion of centrality against p, one line per GPU."""
    fig, ax = _figure((6, 4))
    for gpu, c in results.items():
        keep = c.p <= p_max + 1e-9
        ax.plot(c.p[keep] * 100, c.proportion[keep], marker="o", ms=3, label=gpu)
    first = next(iter(results.values()))
    ax.set_xlabel("p: tolerance over the optimum (%)")
    ax.set_ylabel("proportion of centrality")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{benchmark}: proportion of centrality ({first.variant}, {first.neighbourhood})",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def importance_figure(benchmark: str, results: Mapping[str, Importance]) -> Figure:
    """Horizontal bars of PFI per parameter and GPU, with the confidence band as error bars.

    Parameters whose PFI is 0 on every GPU (one value in the data) are left out.
    """
    first = next(iter(results.values()))
    shown = [j for j in range(len(first.parameters))
             if any(np.any(imp.repeats[j] != 0) for imp in results.values())]
    params = [first.parameters[j] for j in shown]
    fig, ax = _figure((6, 1.5 + 0.3 * len(params) * max(1, len(results)) / 2))
    height = 0.8 / max(1, len(results))
    for k, (gpu, imp) in enumerate(results.items()):
        ax.barh(np.arange(len(params)) + k * height, imp.mean[shown], height,
                xerr=np.nan_to_num(imp.half_width[shown]), label=f"{gpu} (CV R^2 {imp.cv_r2:.2f})")
    ax.set_yticks(np.arange(len(params)) + height * (len(results) - 1) / 2, params)
    ax.axvline(0.05, color="grey", ls=":", lw=0.8)
    ax.set_xlabel("permutation feature importance (drop in R^2)")
    ax.set_title(f"{benchmark}: permutation feature importance (CatBoost)", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def portability_figure(benchmark: str, port: Portability, names: Mapping[str, str] | None = None) -> Figure:
    """Heatmap in percent; empty cells are hatched and labelled with their reason."""
    from matplotlib.patches import Rectangle

    n = len(port.gpus)
    labels = [(names or {}).get(g, g) for g in port.gpus]
    fig, ax = _figure((1.8 + 1.3 * n, 1.2 + 1.1 * n))
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
    ax.set_xticks(range(n), labels, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("run on GPU")
    ax.set_ylabel("tuned on GPU")
    ax.set_title(f"{benchmark}: performance portability", fontsize=9)
    fig.colorbar(im, ax=ax, label="relative performance (%)")
    return fig


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


def plot_portability(benchmark: str, port: Portability, path: Path,
                     names: Mapping[str, str] | None = None) -> Path:
    return save_figure(portability_figure(benchmark, port, names), path)
