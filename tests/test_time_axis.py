"""A time axis that does not wobble: a declared tuner charge makes two identical campaigns' time-axis
scores identical; measured, their confidence intervals meet."""

from __future__ import annotations

import pytest

from bat.analysis.compare.study import compare, plan_campaign
from bat.core.problem import Budget, Problem
from bat.testing.synthetic import FakeBackend, constrained_space

TUNERS = ["random=reference:random", "ga=reference:genetic"]


def _time_scores(out, charge):
    campaign = plan_campaign(tuners=TUNERS, benchmarks=["coulomb"], budgets=[20], repeats=8, seed=3,
                             tuner_charge_s=charge)
    done = compare(campaign, out, plots=False)
    m = done.analysis.methodology
    return {t.split("=")[0]: m.aggregate(t.split("=")[0], "time") for t in TUNERS}


def test_identical_campaigns_give_identical_time_axis_scores_under_a_declared_charge(tmp_path):
    a, b = _time_scores(tmp_path / "a", 0.002), _time_scores(tmp_path / "b", 0.002)
    for label in a:
        assert a[label]["score"] is not None and a[label] == b[label]
    c, d = _time_scores(tmp_path / "c", None), _time_scores(tmp_path / "d", None)
    for label in c:
        # measured: the tuners' CPU time moves with the machine's load between the two campaigns, so only their
        # confidence intervals must meet (each score inside the other's interval failed at load 9)
        assert c[label]["ci_low"] <= d[label]["ci_high"] and d[label]["ci_low"] <= c[label]["ci_high"]


def test_the_charge_is_per_proposal_and_replaces_the_clock():
    problem = Problem(space=constrained_space(), backend=FakeBackend(), budget=Budget(max_evals=3),
                      tuner_charge_s=0.25, tuner_clock=lambda: pytest.fail("the clock is not read"))
    problem.start_clock()
    rows = problem.space.sample_valid(3, __import__("numpy").random.default_rng(0))
    for row in rows:
        problem.evaluate(problem.space.config(row))
    problem.evaluate(problem.space.config(rows[0]))  # a repeat is a proposal too
    assert problem.stats.tuner_s == pytest.approx(4 * 0.25)
    with pytest.raises(ValueError, match="tuner_charge_s"):
        Problem(space=constrained_space(), backend=FakeBackend(), budget=Budget(max_evals=3), tuner_charge_s=-1)
