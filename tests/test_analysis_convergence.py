"""Exact random-search convergence against Monte-Carlo, and curves from traces."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from bat.analysis.convergence import (
    evaluations_to_reach,
    expected_random_relative_performance,
    random_relative_performance,
    random_relative_performance_quantiles,
    random_search_curve,
    sampled_random_relative_performance,
    trace_curve,
    trace_evaluations_to_reach,
)
from bat.core.errors import UnknownNameError


@pytest.fixture
def times():
    rng = np.random.default_rng(7)
    t = rng.lognormal(0.0, 0.6, size=400)
    t[:20] = t[20:40]  # ties
    return t


def test_exact_expectation_matches_monte_carlo(times):
    budgets = [1, 3, 10, 40, 150]
    exact = expected_random_relative_performance(times, budgets)
    mc = sampled_random_relative_performance(times, budgets, 20000, np.random.default_rng(1))
    stderr = mc.std(axis=0) / np.sqrt(len(mc))
    assert np.all(np.abs(exact - mc.mean(axis=0)) < 5 * stderr + 1e-12)
    q = random_relative_performance_quantiles(times, budgets, (0.5,))[:, 0]
    assert np.all(np.abs(q - np.median(mc, axis=0)) < 0.02)


def test_edge_budgets(times):
    t = np.sort(times)
    one, full = expected_random_relative_performance(times, [1, len(times)])
    assert one == pytest.approx(np.mean(t[0] / t))
    assert full == pytest.approx(1.0)
    curve = expected_random_relative_performance(times, range(1, 60))
    assert np.all(np.diff(curve) >= -1e-12)


def test_evaluations_to_reach(times):
    n90 = evaluations_to_reach(times, 0.9, "mean")
    e = expected_random_relative_performance(times, [n90 - 1, n90])
    assert e[0] < 0.9 <= e[1]
    assert evaluations_to_reach(times, 0.95, "mean") >= n90


def test_random_search_curve_band_contains_median(times):
    c = random_search_curve(times)
    assert c.budgets[-1] == len(times)
    assert all(lo <= hi for lo, hi in zip(c.low, c.high, strict=True))
    assert "exact" in c.method


def test_trace_curve():
    def trace(best):
        return pd.DataFrame({"charged": [True, False, True, True],
                             "best_so_far_ms": best})

    traces = [trace([np.nan, np.nan, 4.0, 2.0]), trace([2.0, 2.0, 1.0, 1.0])]
    c = trace_curve("t", traces, 1.0, [1, 2, 3, 5])
    assert c.budgets == [1, 2, 3]
    # after 1 charged evaluation: 0 (nothing valid) and 0.5; after 2: 0.25 and 1.0
    assert c.centre[:2] == pytest.approx([0.25, 0.625])


def _brute_force(times: np.ndarray, n: int) -> np.ndarray:
    """Relative performance of every n-subset (each equally likely under random search)."""
    best = times.min()
    return np.array([best / min(c) for c in itertools.combinations(times, n)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_median_mean_and_band_equal_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    times = rng.choice([1.0, 1.05, 1.1, 1.3, 1.6, 2.0, 2.5, 4.0], size=9)  # ties on purpose
    budgets = list(range(1, len(times) + 1))
    q = random_relative_performance_quantiles(times, budgets, (0.25, 0.5, 0.75))
    mean = expected_random_relative_performance(times, budgets)
    for j, n in enumerate(budgets):
        every = _brute_force(times, n)
        assert mean[j] == pytest.approx(every.mean(), rel=1e-12)
        assert q[j] == pytest.approx(np.quantile(every, [0.25, 0.5, 0.75], method="inverted_cdf"), rel=1e-12)
    assert random_relative_performance(times, budgets, "median") == pytest.approx(q[:, 1])
    for target in (0.5, 0.8, 0.9, 0.95):
        for definition, stat in (("median", lambda x: np.quantile(x, 0.5, method="inverted_cdf")),
                                 ("mean", np.mean)):
            brute = next(n for n in budgets if stat(_brute_force(times, n)) >= target)
            assert evaluations_to_reach(times, target, definition) == brute, (target, definition)


def test_the_two_definitions_differ_and_are_named(times):
    n90 = {d: evaluations_to_reach(times, 0.9, d) for d in ("median", "mean")}
    assert n90["median"] != n90["mean"]
    curve = random_search_curve(times, [1, 10, 100], definition="mean")
    assert curve.definition == "mean" and "exact mean" in curve.method
    with pytest.raises(UnknownNameError, match="convergence definition"):
        random_search_curve(times, [1], definition="mode")


def test_trace_curve_mean_and_reach():
    frames = [pd.DataFrame({"charged": True, "best_so_far_ms": b})
              for b in ([4.0, 2.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 1.0])]
    mean = trace_curve("t", frames, 1.0, [1, 2, 3], definition="mean")
    assert mean.centre == pytest.approx([(0.25 + 0.5 + 1) / 3, (0.5 + 0.5 + 1) / 3, (1 + 0.5 + 1) / 3])
    assert trace_evaluations_to_reach(frames, 1.0, 0.9, "median") == 3  # medians 0.5, 0.5, 1
    assert trace_evaluations_to_reach(frames, 1.0, 0.9, "mean") is None  # means up to 0.83
    assert trace_evaluations_to_reach(frames, 1.0, 0.8, "mean") == 3


def test_best_rank_cdf_is_the_hypergeometric_probability():
    from scipy.stats import hypergeom

    from bat.analysis.convergence import best_rank_cdf

    for n_total, n in ((9, 1), (9, 4), (500, 37), (4000, 400)):
        want = 1.0 - hypergeom.pmf(0, n_total, np.arange(n_total + 1), n)
        assert best_rank_cdf(n_total, n) == pytest.approx(want, abs=1e-10)
