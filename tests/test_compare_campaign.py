"""Campaigns of `bat compare`: seeds, the budget policy, storage and resume, outputs, Dask."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from process_events import wait_for

from bat.analysis.compare.assess import analyse
from bat.analysis.compare.report import write_outputs
from bat.campaign.design import Campaign, CampaignError, RunSpec, TunerSpec, resolve_targets, spec_dict
from bat.campaign.execute import plan_chunks, run_campaign, run_cost
from bat.core.errors import BatError, RegistryError, UnknownNameError
from bat.registry import tuner_names
from bat.run.targets import replay_target

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
    with pytest.raises(RegistryError, match=r"not a bat\.core\.tuner\.Tuner"):
        TunerSpec.parse("x=bat.campaign.design:Campaign").build()
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
    assert all(s.seed == a.run_seed(s.tuner.seed_label, s.benchmark, s.gpu, s.repeat) for s in a.runs())


def test_spec_dict_is_asdict_and_fresh() -> None:
    """The run's metadata and id read ``spec_dict``: what ``asdict`` gives, for defaults and every option set."""
    plain = campaign().runs()[0]
    full = RunSpec(TunerSpec("t", "reference:random", ("a=1",), 4), "pnpoly", "RTX_3090", 2, 7, (4, 8), 3, "replay",
                   "x.parquet", "resample", 0.5, True, ("A100",), 2, 3.0)
    for spec in (plain, full):
        assert spec_dict(spec) == dataclasses.asdict(spec)
        assert list(spec_dict(spec)) == list(dataclasses.asdict(spec))
        one = spec_dict(spec)
        one["tuner"]["label"] = "changed"
        assert spec_dict(spec) == dataclasses.asdict(spec)


def test_budget_policy_runs_agnostic_tuners_once_and_others_per_budget() -> None:
    runs = campaign(budgets=(4, 8, 16), repeats=2).runs()
    random_runs = [r for r in runs if r.tuner.label == "reference:random"]
    first_runs = [r for r in runs if r.tuner.label == "first"]
    assert [r.budgets for r in random_runs] == [(4, 8, 16)] * 2
    assert sorted(r.budgets for r in first_runs) == [(4,), (4,), (8,), (8,), (16,), (16,)]


def stored(out: Path) -> dict[str, tuple]:
    """The rows of a campaign's store, by run id (read with plain sqlite3)."""
    with contextlib.closing(sqlite3.connect(out / "runs.sqlite")) as db:
        return {row[0]: row for row in db.execute("SELECT run_id, meta, trace FROM runs")}


def test_resume_after_interruption_reuses_finished_runs(tmp_path: Path) -> None:
    c = campaign(repeats=3)
    total = len(c.runs())

    def interrupt_after_three(done: int, _total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(c, tmp_path, progress=interrupt_after_three)
    before = stored(tmp_path)
    assert len(before) == 3
    again = run_campaign(c, tmp_path)
    assert (again.reused, again.executed, len(again.records)) == (3, total - 3, total)
    after = stored(tmp_path)
    assert {k: after[k] for k in before} == before  # not rewritten
    third = run_campaign(c, tmp_path)
    assert (third.reused, third.executed) == (total, 0)
    # a stored run reads back as it was made: the trace with its columns and types, the metadata
    fresh = {r.run_id: r for r in again.records}
    for rec in third.records:
        pd.testing.assert_frame_equal(rec.trace, fresh[rec.run_id].trace)
        assert rec.meta == fresh[rec.run_id].meta


def test_a_campaign_folder_of_parquet_runs_resumes_from_them(tmp_path: Path) -> None:
    """A folder written before the SQLite store (runs/<run_id>.parquet) is adopted, not run again."""
    from bat.core.trace import write_trace

    c = campaign(repeats=2)
    first = run_campaign(c, tmp_path / "new")
    old = tmp_path / "old"
    kept = first.records[:3]
    for rec in kept:
        write_trace(rec.trace, rec.meta, old / "runs" / f"{rec.run_id}.parquet")
    again = run_campaign(c, old)
    assert (again.reused, again.executed) == (3, len(c.runs()) - 3)
    adopted = {r.run_id: r for r in again.records}
    for rec in kept:
        pd.testing.assert_frame_equal(adopted[rec.run_id].trace, rec.trace)
        assert adopted[rec.run_id].meta == rec.meta
    stray = old / "runs" / "0123456789abcdef0123.parquet"
    write_trace(kept[0].trace, kept[0].meta, stray)
    with pytest.raises(BatError, match="not a run of this campaign"):
        run_campaign(c, old)


@pytest.mark.slow
def test_pool_interruption_keeps_finished_chunks_and_resume_matches_a_clean_run(tmp_path: Path) -> None:
    c = campaign(repeats=4)
    total = len(c.runs())

    def interrupt(done: int, _total: int) -> None:
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(c, tmp_path / "a", workers=2, progress=interrupt)
    kept = len(stored(tmp_path / "a"))
    assert 0 < kept < total
    resumed = run_campaign(c, tmp_path / "a", workers=2)
    assert (resumed.reused, resumed.executed) == (kept, total - kept)
    clean = {r.run_id: r.meta["per_budget"] for r in run_campaign(c, tmp_path / "b").records}
    assert {r.run_id: r.meta["per_budget"] for r in resumed.records} == clean


KILLED = textwrap.dedent(
    """
    import sys
    from bat.campaign.design import Campaign, TunerSpec
    from bat.campaign.execute import plan_chunks, run_campaign, run_cost
    c = Campaign(tuners=(TunerSpec.parse("reference:random"),), targets=(("pnpoly", "RTX_3090"),),
                 budgets=(200, 400), repeats=int(sys.argv[2]))
    run_campaign(c, sys.argv[1], workers=2)
    """
)


@pytest.mark.slow
def test_kill_minus_nine_leaves_a_readable_store_and_resume_completes(tmp_path: Path) -> None:
    repeats = 300  # about 4 s of runs: a kill after the first chunks lands part-way even on a loaded machine
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path), str(repeats)], start_new_session=True)
    try:
        wait_for(lambda: proc.poll() is not None
                 or ((tmp_path / "runs.sqlite").exists() and len(stored(tmp_path)) >= 4), seconds=120)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-campaign
        proc.wait()
    kept = stored(tmp_path)
    assert 4 <= len(kept) < repeats, "the campaign should be killed part-way"
    c = Campaign(tuners=(RANDOM,), targets=(PNPOLY,), budgets=(200, 400), repeats=repeats)
    done = run_campaign(c, tmp_path, workers=1)
    assert (done.reused, done.executed) == (len(kept), repeats - len(kept))
    for rec in done.records:
        assert len(rec.trace) >= 400 and rec.meta["per_budget"]["400"]["evaluations"] == 400


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


def test_chunks_hold_every_run_once_slow_ones_alone_quick_ones_by_target_costliest_first() -> None:
    forest = TunerSpec.parse("reference:random_forest")  # slow: fits a forest per batch
    c = campaign(tuners=(RANDOM, FIRST, forest), targets=(PNPOLY, ("gemm", "RTX_3090")), budgets=(4, 8, 16),
                 repeats=5)
    specs = c.runs()
    chunks = plan_chunks(specs, workers=2)
    assert sorted(s.run_id for chunk in chunks for s in chunk) == sorted(s.run_id for s in specs)
    assert all(len(chunk) == 1 for chunk in chunks if chunk[0].tuner.slow)
    assert all(len({(s.benchmark, s.gpu) for s in chunk}) == 1 for chunk in chunks)
    costs = [sum(run_cost(s) for s in chunk) for chunk in chunks]
    assert costs[0] == max(costs) and chunks[0][0].tuner.slow
    quick = [chunk for chunk in chunks if not chunk[0].tuner.slow]
    assert len(quick) < sum(len(chunk) for chunk in quick)  # quick runs travel together


def test_quick_chunks_mix_their_tuners_and_shrink_to_the_end() -> None:
    c = campaign(tuners=(RANDOM, FIRST), budgets=(50,), repeats=40)
    chunks = plan_chunks(c.runs(), workers=2)
    costs = [sum(run_cost(s) for s in chunk) for chunk in chunks]
    assert costs[0] >= 4 * costs[-1] and costs == sorted(costs, reverse=True)  # guided: the last chunks small
    assert all({s.tuner.label for s in chunk} == {RANDOM.label, FIRST.label} for chunk in chunks if len(chunk) > 1)


def test_targets_resolution() -> None:
    assert resolve_targets(["pnpoly"], None) == (PNPOLY,)
    assert len(resolve_targets(["pnpoly"], ["all"])) == 4
    with pytest.raises(UnknownNameError, match="NO_GPU"):
        resolve_targets(["pnpoly"], ["NO_GPU"])


def test_dask_local_cluster_runs_the_campaign(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (the 'dask' extra) is missing")
    c = campaign(repeats=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        done = run_campaign(c, tmp_path / "dask", scheduler=cluster.scheduler_address)
    local = run_campaign(c, tmp_path / "local")
    assert done.executed == len(c.runs())
    per_run = {r.run_id: r.meta["per_budget"] for r in local.records}
    assert all(r.meta["per_budget"] == per_run[r.run_id] for r in done.records)  # same seeds, same results


def test_sample_size_study_preset_names_registered_tuners() -> None:
    from bat.campaign.presets import preset

    p = preset("sample-size-study")
    assert set(p.tuners) <= set(tuner_names())
    assert p.budgets == (25, 50, 100, 200, 400) and p.remeasure == 10
    with pytest.raises(UnknownNameError, match="sample-size-study"):
        preset("nope")
