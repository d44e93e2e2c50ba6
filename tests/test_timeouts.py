"""Timeouts (bat.core.timeouts): a measurement past F x the best so far is stopped, charged, recorded."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from clock_fixtures import clock_dataset, clock_space, run

from bat.core.dataset import Status
from bat.core.problem import Budget, EvalResult
from bat.core.schedule import Parallelism
from bat.core.timeouts import BOUND_KEY, check_factor, cut_off

space = pytest.fixture(name="space")(clock_space)
dataset = pytest.fixture(name="dataset")(clock_dataset)


def test_cut_off_charges_compile_and_the_bound() -> None:
    r = EvalResult(config={}, status=Status.OK, objective_ms=10.0, times_ms=(10.0, 10.0), cost_s=1.5,
                   compile_s=1.0, verify_s=0.2)
    cut = cut_off(r, 2.0, 4.0)
    assert cut.status is Status.TIMEOUT and cut.objective_ms is None and math.isinf(cut.fitness)
    assert cut.extra[BOUND_KEY] == 8.0 and cut.cost_s == pytest.approx(1.0 + 0.008)
    assert "8 ms = 2 x the best so far (4 ms)" in cut.message
    assert cut_off(r, 3.0, 4.0) is r  # 10 ms is within 12 ms
    assert cut_off(r, 2.0, None) is r and cut_off(r, None, 4.0) is r  # nothing found yet, or no timeout


@pytest.mark.parametrize("bad", [0.5, float("nan"), float("inf")])
def test_a_factor_is_finite_and_at_least_one(bad: float) -> None:
    with pytest.raises(ValueError, match="timeout_factor"):
        check_factor(bad)


def test_a_run_with_timeouts_records_them_and_spends_less(space, dataset) -> None:
    full, t_full = run(space, dataset, "reference:random", Parallelism(1, 1), Budget(max_evals=40))
    cut, t_cut = run(space, dataset, "reference:random-timeout", Parallelism(1, 1), Budget(max_evals=40))
    # random search ignores results: the same configurations, in the same order
    assert t_full[["x", "y"]].equals(t_cut[["x", "y"]])
    timed = t_cut[t_cut["status"] == "timeout"]
    assert len(timed) > 0 and cut.stats.clock_s < full.stats.clock_s
    before = t_cut["best_so_far_ms"].shift(1)[timed.index]  # the best known when each was measured
    assert np.allclose(timed["timeout_bound_ms"], 2.0 * before)
    assert (t_full.loc[timed.index, "objective_ms"] > timed["timeout_bound_ms"]).all()
    assert t_cut.loc[t_cut["status"] != "timeout", "timeout_bound_ms"].isna().all()
    assert (timed["cost_s"] < t_full.loc[timed.index, "cost_s"]).all()


def test_bat_run_and_compare_take_a_timeout_factor(tmp_path, capsys) -> None:
    from bat.cli import main
    from bat.core.trace import read_trace

    out = tmp_path / "t.parquet"
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "60", "--timeout-factor", "1.5",
                 "-o", str(out)]) == 0
    trace, meta = read_trace(out)
    assert meta["timeout_factor"] == 1.5
    timed = trace[trace["status"] == "timeout"]
    assert len(timed) and (timed["timeout_bound_ms"] > 0).all()
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "--timeout-factor", "0.5"]) == 2
    cmp = tmp_path / "cmp"
    assert main(["compare", "-t", "reference:random", "-b", "pnpoly", "--budgets", "10", "--repeats", "1",
                 "--no-plots", "--timeout-factor", "2", "-o", str(cmp)]) == 0
    capsys.readouterr()
    assert json.loads((cmp / "results.json").read_text())["campaign"]["timeout_factor"] == 2.0
