"""Figures of the methodology view of a campaign: score against budget and fixed-target ECDFs.

- ``score_evaluations.png`` / ``score_time.png``: per target, the score
  curve s(x) of each tuner (mean over runs, 95 % percentile-bootstrap band
  at each x) against the budget, with random search at 0 and the optimum
  at 1 drawn as reference lines.
- ``ecdf_evaluations.png`` / ``ecdf_time.png``: per target, the fraction of
  (run, target) pairs of the fixed-target ladder reached within the budget,
  per tuner (steps), and random search's (exact on evaluations, simulated
  on time).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bat.analysis.compare.methodology import AXES, Methodology, TargetStudy
from bat.analysis.compare.plots import panels
from bat.analysis.data import gpu_label
from bat.analysis.ecdf import ecdf, random_ecdf_evaluations, random_ecdf_time
from bat.analysis.plots import figure_legend, legend_beside, save_figure, series_style, set_title, styled

XLABEL = {"evaluations": "evaluations (distinct configurations)", "time": "simulated tuning time (s)"}


def _styles(m: Methodology) -> dict[str, dict]:
    """Each tuner's line style, by its order in the campaign (the same as in the convergence figures)."""
    labels = dict.fromkeys(label for t in m.targets for label in t.scores)
    return {label: series_style(k) for k, label in enumerate(labels)}


def _target(t: TargetStudy) -> str:
    """A panel's target as the other figures name it (the dataset's GPU name)."""
    return f"{t.benchmark} on {gpu_label(t.gpu, t.dataset.meta.gpu_name or None)}"


def _band(per_run: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import bootstrap

    if len(per_run) < 2 or np.ptp(per_run, axis=0).max() == 0:
        mean = per_run.mean(axis=0)
        return mean, mean
    ci = bootstrap((per_run,), np.mean, axis=0, n_resamples=1000, method="percentile",
                   rng=np.random.default_rng(seed)).confidence_interval
    return np.asarray(ci.low), np.asarray(ci.high)


@styled
def score_plots(m: Methodology, out: Path, axes: Sequence[str] = AXES) -> list[Path]:
    """``score_<axis>.png`` for each of ``axes`` (both by default)."""
    paths = []
    styles = _styles(m)
    for axis in axes:
        fig, panes = panels(len(m.targets), width=6.2)
        for ax, t in zip(panes, m.targets, strict=True):
            for label, scores in t.scores.items():
                s = scores[axis]
                if len(s.x) == 0:
                    continue
                lo, hi = _band(s.per_run, m.seed)
                line, = ax.plot(s.x, s.curve, lw=1.6, label=f"{label} ({s.run_scores.mean():+.2f})", **styles[label])
                ax.fill_between(s.x, lo, hi, color=line.get_color(), alpha=0.15)
            ax.axhline(0.0, color="black", ls="--", lw=1, label="random search (0)")
            ax.axhline(1.0, color="black", ls=":", lw=1, label="optimum (1)")
            ax.set(xlabel=XLABEL[axis], ylabel="score\n(random − found) / (random − optimum)")
            ax.set_ylim(min(-1.0, ax.get_ylim()[0]), 1.05)
            set_title(ax, f"{_target(t)}: methodology score on {axis}")
            ax.grid(alpha=0.3)
            legend_beside(ax, title="tuner (mean score)")
        paths.append(save_figure(fig, out / f"score_{axis}", svg=False))
    return paths


@styled
def ecdf_plots(m: Methodology, out: Path, axes: Sequence[str] = AXES) -> list[Path]:
    """``ecdf_<axis>.png`` for each of ``axes`` (both by default)."""
    hits = m.hitting_times()
    styles = _styles(m)
    paths = []
    for axis in axes:
        column = "evaluations" if axis == "evaluations" else "seconds"
        fig, panes = panels(len(m.targets))
        for ax, t in zip(panes, m.targets, strict=True):
            ladder = t.ladder
            grid: np.ndarray
            if axis == "evaluations":
                grid = np.arange(1, t.evaluations + 1)
                rand = random_ecdf_evaluations(t.baseline, ladder, grid)
            else:
                grid = t.seconds * np.arange(1, 201) / 200
                rand = random_ecdf_time(t.baseline, ladder, t.orderings, grid)
            ax.plot(grid, np.mean(list(rand.values()), axis=0), "k--", lw=1.2, label="random search")
            mine = hits[(hits["benchmark"] == t.benchmark) & (hits["gpu"] == t.gpu)]
            for label, g in mine.groupby("label", sort=False):
                values = [None if np.isnan(v) else v for v in g[column].to_numpy(dtype=float)]
                ax.plot(grid, ecdf(values, grid), drawstyle="steps-post", lw=1.6, label=label, **styles[str(label)])
            ax.set(xlabel=XLABEL[axis], ylabel="fraction of (run, target) pairs reached", ylim=(0, 1.02))
            set_title(ax, f"{_target(t)}: targets {', '.join(ladder.labels)} of the optimum")
            ax.grid(alpha=0.3)
        figure_legend(fig, panes)
        paths.append(save_figure(fig, out / f"ecdf_{axis}", svg=False))
    return paths
