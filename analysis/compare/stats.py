"""The statistics of a comparison: Mann-Whitney U, CLES, Holm's correction, summaries.

- ``mwu``: two-sided Mann-Whitney U test from ``scipy.stats.mannwhitneyu``
  (exact p-value for small samples without ties, normal approximation with
  tie correction otherwise: scipy's ``method="auto"``).
- ``cles``: common-language effect size, P(a run of A scores higher than a
  run of B) with ties counting one half, over all pairs of runs.
- ``holm``: Holm's step-down adjustment of a family of p-values. It is
  written here because SciPy has none (``scipy.stats.false_discovery_control``
  does Benjamini-Hochberg/Yekutieli only) and five lines do not justify
  statsmodels as a dependency.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def mwu(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    """(U statistic of ``a``, two-sided p-value); p = 1 when both samples are constant and equal."""
    from scipy.stats import mannwhitneyu

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0 or len(y) == 0:
        return float("nan"), float("nan")
    res = mannwhitneyu(x, y, alternative="two-sided", method="auto")
    p = float(res.pvalue)
    return float(res.statistic), (1.0 if np.isnan(p) else p)


def cles(a: ArrayLike, b: ArrayLike) -> float:
    """P(A > B) + P(A == B) / 2 over every pair (higher scores are better)."""
    x, y = np.asarray(a, dtype=float)[:, None], np.asarray(b, dtype=float)[None, :]
    if x.size == 0 or y.size == 0:
        return float("nan")
    return float(np.mean((x > y) + 0.5 * (x == y)))


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm-adjusted p-values (same order as given): max over j <= i of (m - j + 1) p_(j), capped at 1."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def summary(values: ArrayLike) -> dict[str, float]:
    """n, median, quartiles (numpy's linear interpolation), mean of one cell."""
    v = np.asarray(values, dtype=float)
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"n": len(v), "median": float(med), "q1": float(q1), "q3": float(q3),
            "iqr": float(q3 - q1), "mean": float(v.mean())}
