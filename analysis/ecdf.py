"""Fixed-target views, as COCO and IOHprofiler draw them: when does a run reach each target?

Targets are a ladder relative to the optimum f_opt of the dataset: a run
reaches ratio r when the configuration it holds as best has a recorded
objective <= r * f_opt (``RATIOS``: 1.5, 1.2, 1.1, 1.05, 1.01), and it
reaches the noise-aware target when that configuration is in the
noise-aware optimum set (``bat.analysis.noise``). Its running time to a target
is the number of charged evaluations, or the simulated seconds, at which
that first happens; a run that never reaches it has none.

The empirical cumulative distribution (ECDF) at budget x is the fraction of
(run, target) pairs reached within x: per target, or aggregated over the
ladder (COCO's "fraction of targets reached"). Random search has an exact
ECDF on the evaluation axis: with m of the N constraint-valid configurations
meeting a target, P(reached within n) = 1 - C(N-m, n) / C(N, n); on the time
axis it is the fraction over the simulated random-search orderings of the
time baseline (``bat.analysis.score``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bat.analysis.convergence import none_drawn
from bat.analysis.score import Baseline, Ordering, RunCurve

RATIOS = (1.5, 1.2, 1.1, 1.05, 1.01)
NOISE = "noise"
_TOL = 1e-12


def target_labels(with_noise: bool) -> list[str]:
    """Labels of the ladder: ``x1.5`` ... ``x1.01`` and ``noise`` when a noise-aware set exists."""
    return [f"x{r:g}" for r in RATIOS] + ([NOISE] if with_noise else [])


@dataclass(frozen=True)
class Ladder:
    """The targets of one dataset: thresholds on the recorded objective, and the noise-aware rows."""

    f_opt: float
    noise_rows: np.ndarray | None  # dataset rows of the noise-aware set, None without one

    @property
    def labels(self) -> list[str]:
        return target_labels(self.noise_rows is not None)

    def reached(self, best: np.ndarray, held: np.ndarray) -> np.ndarray:
        """(targets, steps) bool: is each target met by the held value / row (-1: none) at each step?"""
        out = [(held >= 0) & (best <= r * self.f_opt * (1 + _TOL)) for r in RATIOS]
        if self.noise_rows is not None:
            out.append(np.isin(held, self.noise_rows))
        return np.array(out).reshape(len(out), len(best))


def hitting(run: RunCurve, ladder: Ladder) -> dict[str, tuple[int | None, float | None]]:
    """Per target label: (evaluations, seconds) at which ``run`` first reaches it, or None."""
    reached = ladder.reached(run.best, run.held)
    out: dict[str, tuple[int | None, float | None]] = {}
    for label, row in zip(ladder.labels, reached, strict=True):
        hit = np.flatnonzero(row)
        out[label] = (int(hit[0]) + 1, float(run.clock[hit[0]])) if len(hit) else (None, None)
    return out


def ecdf(first: Sequence[float | None], grid: np.ndarray) -> np.ndarray:
    """Fraction of ``first`` (running times, None = never) at or below each grid value."""
    values = np.array([np.inf if v is None else v for v in first], dtype=float)
    if len(values) == 0:
        return np.zeros(len(grid))
    return (values[None, :] <= np.asarray(grid, dtype=float)[:, None]).mean(axis=1)


def random_ecdf_evaluations(baseline: Baseline, ladder: Ladder, ns: np.ndarray) -> dict[str, np.ndarray]:
    """Exact P(random search reaches each target within n evaluations), per target label."""
    n_total = len(baseline.values)
    met = ladder.reached(baseline.values, baseline.rows)
    counts = met.sum(axis=1)
    draws = np.minimum(np.asarray(ns, dtype=float), n_total)  # P(K <= m) per n, not the whole CDF per n
    return {label: 1.0 - none_drawn(n_total, int(m), draws) for label, m in zip(ladder.labels, counts, strict=True)}


def random_ecdf_time(baseline: Baseline, ladder: Ladder, orderings: Sequence[Ordering],
                     taus: np.ndarray) -> dict[str, np.ndarray]:
    """Fraction of simulated random-search orderings that reach each target by each time."""
    firsts: dict[str, list[float | None]] = {label: [] for label in ladder.labels}
    for o in orderings:
        rows = baseline.rows[o.order]
        observed = np.where(rows >= 0, baseline.values[o.order], np.inf)  # what a tuner would see
        running = np.minimum.accumulate(observed)
        improved = observed < np.concatenate([[np.inf], running[:-1]])
        last = np.maximum.accumulate(np.where(improved, np.arange(len(rows)), -1))
        held = np.where(last >= 0, rows[np.maximum(last, 0)], -1)
        curve = RunCurve(np.where(np.isfinite(running), running, baseline.f_fail), o.clock, held)
        for label, (_, seconds) in hitting(curve, ladder).items():
            firsts[label].append(seconds)
    return {label: ecdf(v, taus) for label, v in firsts.items()}
