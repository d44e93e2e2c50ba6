"""Exact random-search convergence against Monte-Carlo, and curves from traces."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.convergence import (
    evaluations_to_reach,
    expected_random_relative_performance,
    random_relative_performance_quantiles,
    random_search_curve,
    sampled_random_relative_performance,
    trace_curve,
)


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
    n90 = evaluations_to_reach(times, 0.9)
    e = expected_random_relative_performance(times, [n90 - 1, n90])
    assert e[0] < 0.9 <= e[1]
    assert evaluations_to_reach(times, 0.95) >= n90


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
