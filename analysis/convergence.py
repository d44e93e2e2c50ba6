"""Convergence of random search, exactly, under two definitions; the same curves from tuner traces.

Random search draws n distinct valid configurations uniformly. With the
valid times sorted ascending (t_1 <= ... <= t_N), the best draw has rank K
and P(K <= k) = 1 - C(N-k, n) / C(N, n): one minus the hypergeometric
probability that none of the k best configurations is drawn. The relative performance X = t_1 / t_K then
has an exact distribution; no sampling is needed.

Two definitions of "the" relative performance after n evaluations, both
exact (``DEFINITIONS``):

- ``median`` (default; the BAT 2.0 paper and METHODS.md item 3): the median
  of X, i.e. its exact inverse-CDF quantile (the smallest value x with
  P(X <= x) >= 0.5);
- ``mean``: E[X].

The band is the exact 25-75 % quantile range (inverse CDF) in both cases.
n90/n95 ("evaluations to reach x %") are the smallest n whose median (or
mean) reaches x; every output names the definition it used.

From tuner traces the same curve is the sample median (numpy: the mean of
the two middle runs for an even count) or the sample mean over runs of
best known / best so far after k charged evaluations, with the sample
quartiles as band. ``sampled_random_relative_performance`` is the
Monte-Carlo estimate, kept to check the exact forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bat.core.errors import DatasetError, UnknownNameError

DEFAULT_BUDGETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
BAND = (0.25, 0.75)
DEFINITIONS: dict[str, str] = {
    "median": "median of best_overall / best_found (exact inverse-CDF quantile; the BAT 2.0 paper's definition)",
    "mean": "mean (expectation) of best_overall / best_found",
}


def check_definition(definition: str) -> str:
    if definition not in DEFINITIONS:
        raise UnknownNameError("convergence definition", definition, list(DEFINITIONS))
    return definition


def default_budgets(n_valid: int) -> list[int]:
    """The METHODS.md budgets below the space size, and the space size itself."""
    return [b for b in DEFAULT_BUDGETS if b < n_valid] + [n_valid]


def _sorted_times(times: np.ndarray) -> np.ndarray:
    t = np.sort(np.asarray(times, dtype=float))
    if len(t) == 0 or not np.isfinite(t).all() or t[0] <= 0:
        raise DatasetError("random-search convergence needs at least one time, all finite and > 0")
    return t


def none_drawn(n_total: int, good: np.ndarray | int, draws: np.ndarray | int) -> np.ndarray:
    """P(none of ``good`` marked items among ``draws`` drawn without replacement from ``n_total``).

    C(N - good, draws) / C(N, draws), i.e. ``scipy.stats.hypergeom.pmf(0, N, good, draws)``, written
    with ``scipy.special.gammaln`` (broadcasting over ``good`` and ``draws``): the same numbers (a test
    holds them together), a thousand times faster.
    """
    from scipy.special import gammaln

    good, draws = np.broadcast_arrays(np.asarray(good, dtype=float), np.asarray(draws, dtype=float))
    rest = n_total - good
    out = np.zeros(good.shape)
    ok = rest >= draws
    out[ok] = np.exp(gammaln(rest[ok] + 1) - gammaln(rest[ok] - draws[ok] + 1)
                     - gammaln(n_total + 1) + gammaln(n_total - draws[ok] + 1))
    return out


def best_rank_cdf(n_total: int, n: int) -> np.ndarray:
    """P(K <= k) for k = 0..N: the best of n draws without replacement is among the k best."""
    if not 1 <= n <= n_total:
        raise DatasetError(f"budget {n} outside 1..{n_total} (the number of valid configurations)")
    return 1.0 - none_drawn(n_total, np.arange(n_total + 1), n)


def best_rank_pmf(n_total: int, n: int) -> np.ndarray:
    """P(K = k), k = 1..N."""
    return np.diff(best_rank_cdf(n_total, n))


def expected_random_relative_performance(times: np.ndarray, budgets: Iterable[int]) -> np.ndarray:
    """Exact E[best_overall / best_found] after n draws without replacement, per budget n."""
    t = _sorted_times(times)
    rel = t[0] / t
    return np.array([float(best_rank_pmf(len(t), int(n)) @ rel) for n in budgets])


def expected_random_best(values: np.ndarray, budgets: Iterable[int]) -> np.ndarray:
    """Exact E[min of n draws without replacement] of ``values`` (any finite numbers), per budget n."""
    v = np.sort(np.asarray(values, dtype=float))
    return np.array([float(best_rank_pmf(len(v), int(n)) @ v) for n in budgets])


def random_relative_performance_quantiles(times: np.ndarray, budgets: Iterable[int],
                                          qs: Sequence[float] = (0.25, 0.5, 0.75)) -> np.ndarray:
    """Exact inverse-CDF quantiles (rows: budgets, columns: ``qs``) of best_overall / best_found."""
    t = _sorted_times(times)
    values, inverse = np.unique(t[0] / t, return_inverse=True)  # ascending relative performance
    out = []
    for n in budgets:
        cdf = np.cumsum(np.bincount(inverse, weights=best_rank_pmf(len(t), int(n)), minlength=len(values)))
        idx = np.searchsorted(cdf, np.asarray(qs, dtype=float) - 1e-12, side="left")
        out.append(values[np.minimum(idx, len(values) - 1)])
    return np.array(out)


def random_relative_performance(times: np.ndarray, budgets: Iterable[int], definition: str = "median") -> np.ndarray:
    """The exact centre line of random search under ``definition`` (median or mean)."""
    if check_definition(definition) == "mean":
        return expected_random_relative_performance(times, budgets)
    return random_relative_performance_quantiles(times, budgets, (0.5,))[:, 0]


def evaluations_to_reach(times: np.ndarray, target: float, definition: str = "median") -> int:
    """Smallest n whose exact median (or mean) relative performance is >= ``target``.

    Bisection: both grow with n (the best of n + 1 draws is stochastically at least as good).
    """
    t = _sorted_times(times)
    check_definition(definition)
    lo, hi = 1, len(t)
    while lo < hi:
        mid = (lo + hi) // 2
        if random_relative_performance(t, [mid], definition)[0] >= target:
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
    """Relative performance per budget: a centre line and a band, and how they were made.

    ``runs`` holds the per-run values (runs x budgets) of a curve made from traces, so a
    figure can draw every run; it is empty for the exact random-search curve.
    """

    label: str
    budgets: list[int]
    centre: list[float]
    low: list[float]
    high: list[float]
    method: str
    definition: str = "median"
    runs: tuple[tuple[float, ...], ...] = ()
    steps: bool = False  # True: a step function of the evaluation count (traces)

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "budgets": self.budgets, "centre": self.centre,
                "band_low": self.low, "band_high": self.high, "method": self.method,
                "definition": self.definition}


def random_search_curve(times: np.ndarray, budgets: Sequence[int] | None = None,
                        definition: str = "median") -> Curve:
    """Exact median (or mean) with the exact interquartile band of random search."""
    budgets = list(budgets) if budgets is not None else default_budgets(len(times))
    q = random_relative_performance_quantiles(times, budgets, (BAND[0], 0.5, BAND[1]))
    centre = q[:, 1] if check_definition(definition) == "median" else \
        expected_random_relative_performance(times, budgets)
    return Curve(f"random search (exact {definition})", budgets, centre.tolist(), q[:, 0].tolist(),
                 q[:, 2].tolist(),
                 f"exact {definition} of drawing without replacement (hypergeometric order statistics); "
                 "band: exact 25-75 % quantiles", definition)


def trace_relative_performance(traces: Sequence[pd.DataFrame], best_ms: float,
                               budgets: Sequence[int] | np.ndarray) -> np.ndarray:
    """(runs, budgets) best_ms / best_so_far after k charged evaluations (NaN past a run's end)."""
    out = np.full((len(traces), len(budgets)), np.nan)
    ks = np.asarray(budgets, dtype=int)
    for i, frame in enumerate(traces):
        missing = {"charged", "best_so_far_ms"} - set(frame.columns)
        if missing:
            raise DatasetError(f"trace {i} lacks columns {sorted(missing)}")
        best = frame.loc[frame["charged"].astype(bool), "best_so_far_ms"].to_numpy(dtype=float)
        inside = ks <= len(best)
        b = best[ks[inside] - 1]
        out[i, inside] = np.where(np.isfinite(b), best_ms / np.where(np.isfinite(b), b, 1.0), 0.0)
    return out


def charged_lengths(traces: Sequence[pd.DataFrame]) -> list[int]:
    """Charged evaluations of each trace."""
    return [int(f["charged"].astype(bool).sum()) for f in traces]


def trace_curve(label: str, traces: Sequence[pd.DataFrame], best_ms: float,
                budgets: Sequence[int], definition: str = "median") -> Curve:
    """Sample median (or mean) and interquartile band over runs, at budgets every run reached."""
    check_definition(definition)
    rel = trace_relative_performance(traces, best_ms, budgets)
    keep = ~np.isnan(rel).any(axis=0)
    rel, kept = rel[:, keep], [b for b, k in zip(budgets, keep, strict=True) if k]
    if kept:
        lo, mid, hi = np.quantile(rel, [BAND[0], 0.5, BAND[1]], axis=0)
        centre = mid if definition == "median" else rel.mean(axis=0)
    else:
        lo = centre = hi = np.zeros(0)
    return Curve(label, kept, list(map(float, centre)), list(map(float, lo)), list(map(float, hi)),
                 f"sample {definition} over {len(traces)} traces; band: sample 25-75 % quantiles",
                 definition, tuple(tuple(map(float, r)) for r in rel), steps=True)


def trace_evaluations_to_reach(traces: Sequence[pd.DataFrame], best_ms: float, target: float,
                               definition: str = "median") -> int | None:
    """Smallest k (up to the shortest trace) whose sample median (or mean) over runs reaches ``target``."""
    check_definition(definition)
    shortest = min(charged_lengths(traces), default=0)
    if shortest == 0:
        return None
    rel = trace_relative_performance(traces, best_ms, range(1, shortest + 1))
    centre = np.median(rel, axis=0) if definition == "median" else rel.mean(axis=0)
    hit = np.flatnonzero(centre >= target)
    return int(hit[0]) + 1 if len(hit) else None


def traces_by_tuner(paths: Iterable[str | Path], benchmark: str,
                    gpu: str) -> dict[str, list[pd.DataFrame]]:
    """The trace files of (benchmark, gpu), grouped by the tuner named in their metadata."""
    from bat.core.trace import read_trace

    groups: dict[str, list[pd.DataFrame]] = {}
    for p in paths:
        frame, meta = read_trace(p)
        if meta.get("benchmark") == benchmark and meta.get("gpu") == gpu:
            groups.setdefault(str(meta.get("tuner", Path(p).stem)), []).append(frame)
    return groups
