"""The profile tuner on the Coulomb data: modes, traces, determinism, errors, the counter model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bat.cli import main
from bat.core.dataset import Dataset
from bat.core.errors import TunerError
from bat.core.problem import Budget
from bat.registry import find_dataset
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.tuner_adapters.profile.bottlenecks import REACTED
from bat.tuner_adapters.profile.model import MODELLED, CounterModel
from bat.tuner_adapters.profile.search import ProfileSearch


@pytest.fixture(scope="module")
def other_gpu(tmp_path_factory) -> str:
    """The Coulomb data labelled as another GPU's, standing in for the counters of another GPU
    (predicted mode may not train on the target's own measurements; no other GPU's Coulomb data ships)."""
    ds = Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)
    ds.meta.gpu = "OTHER_GPU"
    return str(ds.save(tmp_path_factory.mktemp("other") / "coulomb_other.parquet"))


def run(mode: str, seed: int, budget: int = 40, **kw):
    tuner = ProfileSearch(mode=mode, announce=False, **kw)
    return tuner, run_tuner(tuner, replay_target("coulomb"), budget=Budget(max_evals=budget), seed=seed)


@pytest.mark.parametrize("mode", ["exact", "predicted"])
def test_same_seed_same_trace_and_profiled_rows(mode, other_gpu):
    kw = {"model_dataset": other_gpu} if mode == "predicted" else {}
    tuner, a = run(mode, 5, **kw)
    _, b = run(mode, 5, **kw)
    _, c = run(mode, 6, **kw)
    cols = [c for c in a.trace.columns if c != "tuner_s"]
    pd.testing.assert_frame_equal(a.trace[cols], b.trace[cols])
    assert not a.trace[cols].equals(c.trace[cols])
    assert f"{mode} counters" in tuner.last_description
    t = a.trace
    assert a.evaluated == 40 and t["profiled"].iloc[0]
    # every later profile is of the best configuration found so far
    for _, row in t[t["profiled"]].iloc[1:].iterrows():
        assert row["kind"] == "profile" and row["objective_ms"] == row["best_so_far_ms"]
        assert row["cost_s"] > 0 and not row["charged"]  # costs simulated time, not budget


def test_profile_beats_random_on_average_at_a_small_budget():
    ratios = [run("exact", s, budget=12)[1].ratio_to_best_known for s in range(20)]
    randoms = [run_tuner("reference:random", replay_target("coulomb"), budget=Budget(max_evals=12),
                         seed=s).ratio_to_best_known for s in range(20)]
    assert np.mean(ratios) > np.mean(randoms)


def test_cli_run_says_which_counter_mode(tmp_path, capsys):
    code = main(["run", "--tuner", "profile", "--benchmark", "coulomb", "--budget", "20",
                 "--out", str(tmp_path / "t.parquet")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "online counters" in captured.err  # auto never reads the target's own counters
    assert "best time" in captured.out
    code = main(["run", "--tuner", "profile:exact", "--benchmark", "coulomb", "--budget", "10",
                 "--out", str(tmp_path / "p.parquet")])
    assert code == 0 and "exact counters from dataset coulomb/RTX_2080_Ti" in capsys.readouterr().err


def test_the_exact_mode_is_an_oracle_and_predicted_refuses_the_targets_own_data():
    assert ProfileSearch(mode="exact").oracle and not ProfileSearch().oracle
    with pytest.raises(TunerError, match="target's own measurements"):
        run("predicted", 0, budget=5, model_dataset="coulomb/RTX_2080_Ti")
    with pytest.raises(TunerError, match="oracle's answer key"):  # no answer key without the oracle flag
        ProfileSearch(mode="exact").tune(_problem_without_key(), np.random.default_rng(0))


def _problem_without_key():
    from bat.core.problem import Problem

    target = replay_target("coulomb")
    return Problem(space=target.space, backend=target.backend, budget=Budget(max_evals=5), facts=target.facts)


def test_dataset_without_counters_is_a_clear_error():
    ds = Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)
    bare = Dataset(frame=ds.frame.drop(columns=ds.counters), meta=ds.meta, parameters=ds.parameters)
    for mode in ("exact", "predicted", "auto"):
        with pytest.raises(TunerError, match="measures no counters"):
            run_tuner(ProfileSearch(mode=mode, announce=False), replay_target("coulomb", dataset=bare),
                      budget=Budget(max_evals=5))


def test_unknown_gpu_needs_cores():
    ds = Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)
    ds.meta.gpu = "Mystery_GPU"
    with pytest.raises(TunerError, match="Mystery_GPU"):
        run_tuner(ProfileSearch(announce=False), replay_target("coulomb", dataset=ds), budget=Budget(max_evals=5))
    result = run_tuner(ProfileSearch(announce=False, cores=4352), replay_target("coulomb", dataset=ds),
                       budget=Budget(max_evals=5))
    assert result.evaluated == 5


def test_sampled_scoring_for_large_spaces(other_gpu):
    tuner, result = run("predicted", 1, budget=30, score_limit=100, sample_size=64, model_dataset=other_gpu)
    assert "uniform sample of 64 valid configurations per step" in tuner.last_description
    assert result.evaluated == 30


def test_exhausting_the_space_evaluates_every_configuration():
    _, result = run("exact", 2, budget=210)
    assert result.evaluated == 210 and result.best.objective_ms == result.best_known_ms


def test_counter_model_is_deterministic_and_reports_test_errors():
    target = replay_target("coulomb")
    ds = target.backend.dataset
    a, b = CounterModel.fit(ds, target.space, seed=3), CounterModel.fit(ds, target.space, seed=3)
    assert list(a.errors["counter"]) == list(MODELLED)
    assert (a.errors["n_train"] + a.errors["n_test"] == 210).all()
    assert np.isfinite(a.errors["mae"]).all() and (a.errors["rmse"] >= a.errors["mae"]).all()
    configs = ds.configs().iloc[:20]
    pd.testing.assert_frame_equal(a.predict(configs), b.predict(configs))
    # the instruction count of a Coulomb configuration is predicted within 25 % on held-out rows
    assert a.errors.set_index("counter").loc["INST_F32", "relative_mae"] < 0.25


def hidden_dataset_target():
    """The Coulomb replay standing in for a live GPU: counters come with each evaluation, no dataset is known."""
    return replay_target("coulomb")


def test_auto_fits_another_gpus_shipped_counters(tmp_path, monkeypatch, other_gpu):
    import shutil

    from bat.registry import dataset_entries

    entry = next(e for e in dataset_entries() if e.meta.benchmark == "coulomb")
    shutil.copy(other_gpu, tmp_path / "coulomb_OTHER_GPU.parquet")
    shutil.copy(entry.path, tmp_path / entry.path.name)
    monkeypatch.setenv("BAT_RESULTS", str(tmp_path))
    tuner = ProfileSearch(announce=False)
    result = run_tuner(tuner, replay_target("coulomb", "RTX_2080_Ti"), budget=Budget(max_evals=15), seed=1)
    assert "predicted counters (decision trees from dataset coulomb/OTHER_GPU" in tuner.last_description
    assert result.evaluated == 15


def test_auto_live_with_no_recorded_counters_learns_online(tmp_path, monkeypatch):
    first, second = hidden_dataset_target(), hidden_dataset_target()
    monkeypatch.setenv("BAT_RESULTS", str(tmp_path))  # no shipped dataset to fit a model on
    tuner = ProfileSearch(announce=False)
    a = run_tuner(tuner, first, budget=Budget(max_evals=30), seed=4)
    assert "online counters" in tuner.last_description and "4352 CUDA cores" in tuner.last_description
    b = run_tuner(ProfileSearch(announce=False), second, budget=Budget(max_evals=30), seed=4)
    cols = [c for c in a.trace.columns if c != "tuner_s"]
    pd.testing.assert_frame_equal(a.trace[cols], b.trace[cols])
    assert a.evaluated == 30


def test_online_source_learns_only_from_measured_counters():
    from bat.testing.synthetic import answer, constrained_space, synthetic_threads
    from bat.tuner_adapters.profile.sources import ONLINE_MIN_ROWS, OnlineSource

    space = constrained_space()
    source = OnlineSource(space, synthetic_threads, seed=0, score_limit=10**7, sample_size=10)
    rows = space.sample_valid(60, np.random.default_rng(3))
    results = [answer(space.config(r)) for r in rows]
    ok = [r for r in results if r.ok]
    for r in ok[:ONLINE_MIN_ROWS - 1]:
        source.observe(r)
    source.observe(answer(space.config(rows[0]), counters=False))  # no counters: not a training row
    assert not source.ready
    ids, matrix = source.candidates(np.random.default_rng(0))
    assert len(ids) == space.count_valid() and matrix.shape == (len(ids), 0)  # a uniform step
    for r in ok[ONLINE_MIN_ROWS - 1:]:
        source.observe(r)
    assert source.ready  # the synthetic counters are learnable
    ids, matrix = source.candidates(np.random.default_rng(0))
    assert matrix.shape == (space.count_valid(), len(REACTED)) and np.isfinite(matrix[:, :-1]).all()
    assert source.model.errors["n_train"].iloc[0] + source.model.errors["n_test"].iloc[0] == len(ok)


def test_a_backend_without_counters_is_a_clear_error_unless_told_to_go_on():
    from bat.core.problem import Problem
    from bat.testing.synthetic import FakeBackend, constrained_space

    def problem():
        return Problem(space=constrained_space(), backend=FakeBackend(counters=False), budget=Budget(max_evals=12))

    with pytest.raises(TunerError, match="backend 'fake' measures no counters"):
        ProfileSearch(announce=False).tune(problem(), np.random.default_rng(0))
    p = problem()
    tuner = ProfileSearch(announce=False, without_counters="uniform")
    tuner.tune(p, np.random.default_rng(0))
    assert p.stats.evaluated == 12 and "no counters" in tuner.last_description


def test_cores_come_from_the_target_and_cores_overrides_them():
    target = replay_target("coulomb")
    assert target.facts.cuda_cores == 4352 and target.facts.gpu == "RTX_2080_Ti"
    tuner = ProfileSearch(announce=False, cores=1000)
    run_tuner(tuner, target, budget=Budget(max_evals=3))
    assert "1000 CUDA cores" in tuner.last_description
