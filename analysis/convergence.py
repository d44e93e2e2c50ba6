"""Convergence of random search, exactly, and the same curves from tuner traces.

Random search draws n distinct valid configurations uniformly; with the
valid times sorted ascending (t_1 <= ... <= t_N) the best draw has rank K and
P(K >= k) = C(N-k+1, n) / C(N, n) (every draw avoids the k-1 best ones).
The relative performance t_1 / t_K then has an exact expectation and exact
quantiles; no sampling is needed (``sampled_random_relative_performance``
is the Monte-Carlo estimate, kept to check the exact one).

``expected_random_relative_performance`` is the baseline other modules
(``bat compare``) call. "Evaluations to reach x %" is the smallest n whose
*expected* relative performance is at least x.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bat.errors import DatasetError

DEFAULT_BUDGETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
BAND = (0.25, 0.75)


def default_budgets(n_valid: int) -> list[int]:
    """The METHODS.md budgets below the space size, and the space size itself."""
    return [b for b in DEFAULT_BUDGETS if b < n_valid] + [n_valid]


def _sorted_times(times: np.ndarray) -> np.ndarray:
    t = np.sort(np.asarray(times, dtype=float))
    if len(t) == 0 or not np.isfinite(t).all() or t[0] <= 0:
        raise DatasetError("random-search convergence needs at least one time, all finite and > 0")
    return t


def _min_rank_pmf(n_total: int, n: int) -> np.ndarray:
    """P(K = k), k = 1..N, for the best rank K of n draws without replacement from N."""
    from scipy.special import gammaln

    if not 1 <= n <= n_total:
        raise DatasetError(f"budget {n} outside 1..{n_total} (the number of valid configurations)")
    m = n_total - np.arange(1, n_total + 2) + 1  # N-k+1 for k = 1..N+1
    log_surv = np.full(n_total + 1, -np.inf)
    ok = m >= n
    log_surv[ok] = (gammaln(m[ok] + 1) - gammaln(m[ok] - n + 1)
                    - gammaln(n_total + 1) + gammaln(n_total - n + 1))
    surv = np.exp(log_surv)  # P(K >= k)
    return surv[:-1] - surv[1:]


def expected_random_relative_performance(times: np.ndarray, budgets: Iterable[int]) -> np.ndarray:
    """Exact E[best_overall / best_found] after n draws without replacement, per budget n."""
    t = _sorted_times(times)
    rel = t[0] / t
    return np.array([float(_min_rank_pmf(len(t), int(n)) @ rel) for n in budgets])


def random_relative_performance_quantiles(times: np.ndarray, budgets: Iterable[int],
                                          qs: Sequence[float] = (0.25, 0.5, 0.75)) -> np.ndarray:
    """Exact quantiles (rows: budgets, columns: ``qs``) of best_overall / best_found."""
    t = _sorted_times(times)
    rel = t[0] / t
    out = []
    for n in budgets:
        cdf_rank = np.cumsum(_min_rank_pmf(len(t), int(n)))
        # the q-quantile of t_1/t_K is t_1/t_k at the (1-q)-quantile k of K
        ks = [min(int(np.searchsorted(cdf_rank, 1.0 - q - 1e-12)), len(t) - 1) for q in qs]
        out.append(rel[ks])
    return np.array(out)


def evaluations_to_reach(times: np.ndarray, target: float) -> int:
    """Smallest n with expected relative performance >= ``target`` (bisection; it grows with n)."""
    t = _sorted_times(times)
    lo, hi = 1, len(t)
    while lo < hi:
        mid = (lo + hi) // 2
        if expected_random_relative_performance(t, [mid])[0] >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sampled_random_relative_performance(times: np.ndarray, budgets: Sequence[int], repeats: int,
                                        rng: np.random.Generator) -> np.ndarray:
    """Monte-Carlo (repeats, budgets) relative performance of random search without replacement."""
    t = _sorted_times(times)
    top = max(budgets)
    out = np.empty((repeats, len(budgets)))
    for r in range(repeats):
        best = np.minimum.accumulate(rng.choice(t, size=top, replace=False))
        out[r] = t[0] / best[np.asarray(budgets) - 1]
    return out


@dataclass(frozen=True)
class Curve:
    """Relative performance per budget: a centre line and a band, and how they were made."""

    label: str
    budgets: list[int]
    centre: list[float]
    low: list[float]
    high: list[float]
    method: str

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "budgets": self.budgets, "centre": self.centre,
                "band_low": self.low, "band_high": self.high, "method": self.method}


def random_search_curve(times: np.ndarray, budgets: Sequence[int] | None = None) -> Curve:
    """Exact expectation with the exact interquartile band of random search."""
    budgets = list(budgets) if budgets is not None else default_budgets(len(times))
    q = random_relative_performance_quantiles(times, budgets, BAND)
    return Curve("random search (exact)", budgets,
                 expected_random_relative_performance(times, budgets).tolist(),
                 q[:, 0].tolist(), q[:, 1].tolist(),
                 "exact expectation (order statistics, drawing without replacement); "
                 "band: exact 25-75 % quantiles")


def trace_relative_performance(traces: Sequence[pd.DataFrame], best_ms: float,
                               budgets: Sequence[int]) -> np.ndarray:
    """(runs, budgets) best_ms / best_so_far after k charged evaluations (NaN past a run's end)."""
    out = np.full((len(traces), len(budgets)), np.nan)
    for i, frame in enumerate(traces):
        missing = {"charged", "best_so_far_ms"} - set(frame.columns)
        if missing:
            raise DatasetError(f"trace {i} lacks columns {sorted(missing)}")
        best = frame.loc[frame["charged"].astype(bool), "best_so_far_ms"].to_numpy(dtype=float)
        for j, k in enumerate(budgets):
            if k <= len(best):
                b = best[k - 1]
                out[i, j] = best_ms / b if np.isfinite(b) else 0.0
    return out


def trace_curve(label: str, traces: Sequence[pd.DataFrame], best_ms: float,
                budgets: Sequence[int]) -> Curve:
    """Median and interquartile band over runs of a tuner's traces."""
    rel = trace_relative_performance(traces, best_ms, budgets)
    keep = ~np.isnan(rel).all(axis=0)
    rel, kept = rel[:, keep], [b for b, k in zip(budgets, keep, strict=True) if k]
    lo, mid, hi = np.nanquantile(rel, [BAND[0], 0.5, BAND[1]], axis=0) if kept else ([], [], [])
    return Curve(label, kept, list(map(float, mid)), list(map(float, lo)), list(map(float, hi)),
                 f"median over {len(traces)} traces; band: 25-75 % quantiles")


def traces_by_tuner(paths: Iterable[str | Path], benchmark: str,
                    gpu: str) -> dict[str, list[pd.DataFrame]]:
    """The trace files of (benchmark, gpu), grouped by the tuner named in their metadata."""
    from bat.trace import read_trace

    groups: dict[str, list[pd.DataFrame]] = {}
    for p in paths:
        frame, meta = read_trace(p)
        if meta.get("benchmark") == benchmark and meta.get("gpu") == gpu:
            groups.setdefault(str(meta.get("tuner", Path(p).stem)), []).append(frame)
    return groups
