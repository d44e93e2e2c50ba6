"""Convergence figures of a campaign (matplotlib, Agg backend), one panel per target.

- ``convergence_<tuner>.png``: for one tuner, every run at the campaign's
  largest budget as a thin step line of best known / best so far against
  charged evaluations, their median as a thick step line with the
  interquartile band, and the exact median of random search (dashed) with
  its exact interquartile band.
- ``overlay.png``: every tuner on the same axes, every run (seed) thin, each
  tuner's median thick, with the random-search baseline; the figure to put
  in a paper.

Steps: a run's best so far only changes when an evaluation finds a better
configuration, so the curves are drawn as step functions of the evaluation
count, at every evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import numpy as np

from bat.analysis.compare.assess import random_times
from bat.analysis.convergence import random_relative_performance_quantiles, trace_relative_performance
from bat.analysis.data import gpu_label
from bat.analysis.plots import figure_legend, pyplot, save_figure, series_style, set_title, styled
from bat.campaign.design import Campaign, file_label
from bat.campaign.store import RunRecord


def panels(n: int, width: float = 4.6, height: float = 3.4):
    """A figure with one axes per target (up to three per row), unused ones hidden."""
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = pyplot().subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)[:n]


def random_bands(campaign: Campaign) -> dict[tuple[str, str], np.ndarray]:
    """Exact 25 / 50 / 75 % quantiles of random search at each k up to the largest budget, per replayed target.

    Computed once per process per target (they depend on its dataset only).
    """
    top = max(campaign.budgets)
    out = {}
    for bench, gpu in campaign.targets:
        key = (bench, gpu, campaign.backend, campaign.dataset_for(bench, gpu), top)
        if key not in _BANDS:
            times = random_times(*key[:4])
            if times is None:
                _BANDS[key] = None
            else:  # beyond the space's size every k is the whole space: computed once, not once per k
                ks = np.arange(1, min(top, len(times)) + 1)
                quantiles = random_relative_performance_quantiles(times, ks, (0.25, 0.5, 0.75))
                _BANDS[key] = np.concatenate([quantiles, np.repeat(quantiles[-1:], top - len(ks), axis=0)])
        if (band := _BANDS[key]) is not None:
            out[(bench, gpu)] = band
    return out


#: random_bands of each (target, largest budget) computed in this process
_BANDS: dict[tuple[str, str, str, str, int], np.ndarray | None] = {}


def _runs(records: list[RunRecord], label: str, bench: str, gpu: str, top: int) -> list[RunRecord]:
    return [r for r in records if r.meta["label"] == label and r.meta["benchmark"] == bench
            and r.meta["gpu"] == gpu and max(r.meta["budgets"]) == top]


def _draw_random(ax, ks: np.ndarray, band: np.ndarray | None) -> None:
    if band is None:
        return
    ax.plot(ks, band[:, 1], "k--", lw=1.2, label="random search (exact median)")
    ax.fill_between(ks, band[:, 0], band[:, 2], color="black", alpha=0.08, step="post",
                    label="random search: 25-75 %")


def _draw_tuner(ax, ks: np.ndarray, records: list[RunRecord], label: str, k: int) -> None:
    """The runs of the ``k``-th tuner of the campaign (its colour and dashes in every figure)."""
    best = float(records[0].meta["best_known_ms"])
    rel = trace_relative_performance([r.trace for r in records], best, ks)
    lo, mid, hi = np.nanquantile(rel, [0.25, 0.5, 0.75], axis=0)
    line, = ax.plot(ks, mid, drawstyle="steps-post", lw=2, label=f"{label} (median of {len(records)})",
                    **series_style(k))
    for run in rel:
        ax.plot(ks, run, drawstyle="steps-post", lw=0.5, alpha=0.35, color=line.get_color())
    ax.fill_between(ks, lo, hi, step="post", alpha=0.15, color=line.get_color())


def gpu_names(campaign: Campaign) -> dict[tuple[str, str], str]:
    """Each target's GPU as ``bat analyze`` names it (``gpu_label``: the dataset's GPU name)."""
    from bat.core.dataset import Dataset
    from bat.core.errors import BatError
    from bat.registry import find_dataset

    files = {(b, g): f for b, g, f in campaign.datasets}
    names = {}
    for bench, gpu in campaign.targets:
        try:
            path = files.get((bench, gpu)) or find_dataset(bench, gpu).path
            names[bench, gpu] = gpu_label(gpu, Dataset.read_meta(path).gpu_name)
        except BatError:  # a live target without recorded data
            names[bench, gpu] = gpu_label(gpu, None)
    return names


def _style(ax, bench: str, gpu: str) -> None:
    ax.set(xscale="log", ylim=(0, 1.02), xlabel="evaluations (distinct configurations)",
           ylabel="best known / best found")
    set_title(ax, f"{bench} on {gpu}")
    ax.grid(alpha=0.3)


def convergence_names(campaign: Campaign) -> list[str]:
    """The file names (no suffix) of the convergence figures of ``campaign``: one per tuner, then the overlay."""
    return [f"convergence_{file_label(t.label)}" for t in campaign.tuners] + ["overlay"]


@styled
def convergence_plots(campaign: Campaign, records: list[RunRecord], out: Path,
                      which: Collection[str] | None = None) -> list[Path]:
    """Write ``convergence_<tuner>.png`` files and ``overlay.png`` into ``out`` (only those named in ``which``,
    of ``convergence_names``, when given); return their paths."""
    top = max(campaign.budgets)
    ks = np.arange(1, top + 1)
    bands = random_bands(campaign)
    names = gpu_names(campaign)
    paths = []
    for k, t in enumerate(campaign.tuners):
        if which is not None and f"convergence_{file_label(t.label)}" not in which:
            continue
        fig, axes = panels(len(campaign.targets))
        for ax, (bench, gpu) in zip(axes, campaign.targets, strict=True):
            _draw_random(ax, ks, bands.get((bench, gpu)))
            mine = _runs(records, t.label, bench, gpu, top)
            if mine:
                _draw_tuner(ax, ks, mine, t.label, k)
            _style(ax, bench, names[bench, gpu])
        figure_legend(fig, axes)
        paths.append(save_figure(fig, out / f"convergence_{file_label(t.label)}", svg=False))
    if which is not None and "overlay" not in which:
        return paths
    fig, axes = panels(len(campaign.targets), width=5.6, height=4.0)
    for ax, (bench, gpu) in zip(axes, campaign.targets, strict=True):
        _draw_random(ax, ks, bands.get((bench, gpu)))
        for k, t in enumerate(campaign.tuners):
            mine = _runs(records, t.label, bench, gpu, top)
            if mine:
                _draw_tuner(ax, ks, mine, t.label, k)
        _style(ax, bench, names[bench, gpu])
    figure_legend(fig, axes)
    fig.suptitle(f"{len(campaign.tuners)} tuners, {campaign.repeats} seeds each: every run thin, medians thick",
                 fontsize=10)
    paths.append(save_figure(fig, out / "overlay", svg=False))
    return paths
