"""Campaigns of `bat compare`: seeds, the budget policy, storage and resume, outputs, Dask."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.compare.assess import analyse
from analysis.compare.campaign import Campaign, CampaignError, TunerSpec, resolve_targets
from analysis.compare.execute import run_campaign
from analysis.compare.report import write_outputs
from bat.driver import run_tuner
from bat.errors import BatError, RegistryError, UnknownNameError
from bat.problem import Budget
from bat.registry import make_tuner, tuner_names
from bat.targets import replay_target

PNPOLY = ("pnpoly", "RTX_3090")
RANDOM = TunerSpec.parse("reference:random")
FIRST = TunerSpec.parse("first=bat.testing.crippled_tuner:FirstValidTuner")


def campaign(tuners=(RANDOM, FIRST), targets=(PNPOLY,), budgets=(4, 8), repeats=3, **kw) -> Campaign:
    return Campaign(tuners=tuple(tuners), targets=tuple(targets), budgets=tuple(budgets), repeats=repeats, **kw)


def test_tuner_spec_parsing_and_errors() -> None:
    assert TunerSpec.parse(" optuna ") == TunerSpec("optuna", "optuna")
    assert TunerSpec.parse("mine=pkg.mod:Cls") == TunerSpec("mine", "pkg.mod:Cls")
    with pytest.raises(CampaignError, match="LABEL=NAME"):
        TunerSpec.parse("=optuna")
    with pytest.raises(UnknownNameError, match="no_such"):
        TunerSpec.parse("no_such").build()
    with pytest.raises(RegistryError, match=r"not a bat\.tuner\.Tuner"):
        TunerSpec.parse("x=analysis.compare.campaign:Campaign").build()
    with pytest.raises(CampaignError, match="unique"):
        campaign(tuners=(RANDOM, RANDOM))


def test_seeds_are_stable_and_independent_of_budgets_and_other_tuners() -> None:
    a = campaign(budgets=(4, 8))
    b = campaign(tuners=(RANDOM,), budgets=(4, 8, 16), seed=0)
    seeds_a = {(s.tuner.label, s.repeat): s.seed for s in a.runs()}
    seeds_b = {(s.tuner.label, s.repeat): s.seed for s in b.runs()}
    assert all(seeds_a[k] == v for k, v in seeds_b.items())
    assert len(set(seeds_a.values())) == len(seeds_a)  # every (tuner, repeat) its own seed
    assert campaign(seed=1).run_seed("reference:random", *PNPOLY, 0) != a.run_seed("reference:random", *PNPOLY, 0)


def test_budget_policy_runs_agnostic_tuners_once_and_others_per_budget() -> None:
    runs = campaign(budgets=(4, 8, 16), repeats=2).runs()
    random_runs = [r for r in runs if r.tuner.label == "reference:random"]
    first_runs = [r for r in runs if r.tuner.label == "first"]
    assert [r.budgets for r in random_runs] == [(4, 8, 16)] * 2
    assert sorted(r.budgets for r in first_runs) == [(4,), (4,), (8,), (8,), (16,), (16,)]


def _budget_agnostic() -> list[str]:
    """Installed registered tuners that declare themselves budget-agnostic (random: in distribution)."""
    out = []
    for name in tuner_names():
        try:
            if make_tuner(name).budget_agnostic and name != "reference:random":
                out.append(name)
        except BatError:
            continue
    return out


@pytest.mark.parametrize("name", _budget_agnostic())
def test_budget_agnostic_tuners_trace_prefix_equals_a_shorter_run(name: str) -> None:
    """The claim behind reusing one run for every smaller budget, checked per declaring tuner."""
    target = replay_target(*PNPOLY)
    params = list(target.space.names)
    short = run_tuner(make_tuner(name), target, budget=Budget(max_evals=6), seed=11).trace
    long = run_tuner(make_tuner(name), target, budget=Budget(max_evals=24), seed=11).trace
    a = short.loc[short["charged"], params].reset_index(drop=True)
    b = long.loc[long["charged"], params].head(6).reset_index(drop=True)
    assert len(a) == 6
    assert a.equals(b)


def test_resume_after_interruption_reuses_finished_runs(tmp_path: Path) -> None:
    c = campaign(repeats=3)
    total = len(c.runs())

    def interrupt_after_three(done: int, _total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(c, tmp_path, progress=interrupt_after_three)
    stored = sorted((tmp_path / "runs").glob("*.parquet"))
    assert len(stored) == 3
    before = {p.name: p.stat().st_mtime_ns for p in stored}
    again = run_campaign(c, tmp_path)
    assert (again.reused, again.executed, len(again.records)) == (3, total - 3, total)
    assert {p.name: p.stat().st_mtime_ns for p in stored} == before  # not rewritten
    assert not list((tmp_path / "runs").glob("*.partial"))
    third = run_campaign(c, tmp_path)
    assert (third.reused, third.executed) == (total, 0)


def test_remeasurement_draws_from_recorded_times(tmp_path: Path) -> None:
    c = campaign(tuners=(RANDOM,), repeats=2, remeasure=10)
    rec = run_campaign(c, tmp_path).records[0]
    target = replay_target(*PNPOLY)
    for res in rec.meta["per_budget"].values():
        i = target.backend.lookup(res["config"])
        recorded = set(target.backend.dataset.frame["times_ms"].iloc[i])
        assert len(res["remeasured_ms"]) == 10 and set(res["remeasured_ms"]) <= recorded
        best_known = rec.meta["best_known_ms"]
        assert res["rel_perf_remeasured"] == pytest.approx(best_known / np.mean(res["remeasured_ms"]))


def test_outputs_hold_every_number_and_trace(tmp_path: Path) -> None:
    c = campaign(targets=(PNPOLY, ("gemm", "RTX_3090")), repeats=4)
    done = run_campaign(c, tmp_path)
    result = analyse(c, done.records, alpha=0.05)
    paths = write_outputs(tmp_path, c, result, done.records)
    doc = json.loads(paths["json"].read_text())
    assert len(doc["runs"]) == len(c.runs())
    run = doc["runs"][0]
    assert len(run["trace"]["step"]) == len(done.records[0].trace)
    assert len(doc["observations"]) == 2 * 2 * 2 * 4  # tuners x targets x budgets x repeats
    assert len(doc["pairwise"]) == 2 * 2  # one pair per (target, budget)
    assert doc["campaign"]["seed_derivation"].startswith("SeedSequence")
    cell = next(x for x in doc["cells"] if x["label"] == "first" and x["benchmark"] == "gemm")
    assert cell["n"] == 4 and cell["iqr"] == 0.0  # the crippled tuner ignores its seed
    assert cell["score"] < 0  # worse than random search
    md = paths["summary"].read_text()
    assert "Holm correction over 4 pairwise tests" in md and "### gemm on RTX_3090" in md
    assert (tmp_path / "plots" / "convergence_first.png").stat().st_size > 1000


def test_targets_resolution() -> None:
    assert resolve_targets(["pnpoly"], None) == (PNPOLY,)
    assert len(resolve_targets(["pnpoly"], ["all"])) == 4
    with pytest.raises(UnknownNameError, match="NO_GPU"):
        resolve_targets(["pnpoly"], ["NO_GPU"])


def test_dask_local_cluster_runs_the_campaign(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (the 'scale' group) is missing")
    c = campaign(repeats=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        done = run_campaign(c, tmp_path / "dask", scheduler=cluster.scheduler_address)
    local = run_campaign(c, tmp_path / "local")
    assert done.executed == len(c.runs())
    per_run = {r.run_id: r.meta["per_budget"] for r in local.records}
    assert all(r.meta["per_budget"] == per_run[r.run_id] for r in done.records)  # same seeds, same results


def test_sample_size_study_preset_names_registered_tuners() -> None:
    from analysis.compare.presets import preset
    from bat.registry import tuner_names

    p = preset("sample-size-study")
    assert set(p.tuners) <= set(tuner_names())
    assert p.budgets == (25, 50, 100, 200, 400) and p.remeasure == 10
    with pytest.raises(UnknownNameError, match="sample-size-study"):
        preset("nope")
