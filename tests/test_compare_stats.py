"""Statistics of `bat compare`: Holm, CLES, Mann-Whitney U, cell summaries, the exact baseline."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bat.analysis.compare.stats import cles, holm, mwu, summary


def test_holm_matches_the_step_down_definition() -> None:
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    # sorted: 0.005*5=0.025, 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08 -> 0.09 (monotone), 0.5*1=0.5
    expected = [0.04, 0.09, 0.09, 0.025, 0.5]
    np.testing.assert_allclose(holm(p), expected)


def test_holm_is_capped_monotone_and_never_below_raw() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 0.3, size=40)
    adj = holm(p)
    assert (adj >= p).all() and (adj <= 1).all()
    order = np.argsort(p)
    assert (np.diff(adj[order]) >= 0).all()
    assert holm([0.9, 0.8]).tolist() == [1.0, 1.0]


def test_cles_counts_ties_as_one_half_and_is_complementary() -> None:
    assert cles([1, 1], [1, 1]) == 0.5
    assert cles([2, 3], [1, 1]) == 1.0
    assert cles([1, 2], [2, 0]) == pytest.approx((0 + 1 + 0.5 + 1) / 4)
    a, b = [0.3, 0.9, 0.5, 0.5], [0.5, 0.1, 0.7]
    assert cles(a, b) + cles(b, a) == pytest.approx(1.0)
    brute = np.mean([1.0 if x > y else 0.5 if x == y else 0.0 for x, y in itertools.product(a, b)])
    assert cles(a, b) == pytest.approx(brute)


def test_mwu_separates_shifted_samples_and_not_equal_ones() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, 30)
    _, p_far = mwu(x, x + 3)
    _, p_same = mwu(x, rng.permutation(x))
    assert p_far < 1e-6
    assert p_same > 0.9
    assert mwu([0.5] * 5, [0.5] * 5)[1] == 1.0


def test_summary_quartiles() -> None:
    s = summary([1, 2, 3, 4, 5])
    assert (s["n"], s["median"], s["q1"], s["q3"], s["iqr"]) == (5, 3.0, 2.0, 4.0, 2.0)


def test_exact_random_baseline_counts_failures_as_zero() -> None:
    """The baseline of assess (failures as 1e300 ms) agrees with simulating random search on a mixed set."""
    from bat.analysis.compare.assess import _FAILED_MS
    from bat.analysis.convergence import expected_random_relative_performance

    rng = np.random.default_rng(3)
    ok = rng.uniform(1, 5, size=30)
    times = np.concatenate([ok, np.full(20, _FAILED_MS)])  # 20 of 50 configurations failed
    n = 4
    exact = expected_random_relative_performance(times, [n])[0]
    picks = rng.random((5000, len(times))).argsort(axis=1)[:, :n]  # 5000 draws without replacement
    draws = times[picks].min(axis=1)
    rel = np.where(draws < _FAILED_MS, ok.min() / draws, 0.0)
    assert exact == pytest.approx(rel.mean(), abs=0.03)
