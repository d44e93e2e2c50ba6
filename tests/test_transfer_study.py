"""The transfer study: targets with a prior, ``bat compare --study transfer`` end to end, its bad input.

A tiny study (convolution_milo, five GPUs of two vendors; three seeds, ten evaluations) with a test
tuner that reads ``problem.facts.others`` (tests/transfer_tuners.py) and random search as the floor.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from test_cli_json import document

from bat.analysis.compare.transfer import evaluations_to, plan_transfer, random_median
from bat.campaign.design import Campaign, TunerSpec
from bat.cli import EXIT_USAGE, main
from bat.core.errors import SpaceMismatchError, TunerError
from bat.core.gpus import gpu_vendor
from bat.run.targets import replay_target, with_prior

ROOT = Path(__file__).resolve().parents[1]
HUB = ROOT / "results" / "benchmark-hub"
TUNER = "prior=transfer_tuners:NeedsPrior"


def test_a_prior_reaches_the_facts_and_never_the_targets_own_data():
    target = replay_target("convolution_milo", "A100")
    other = replay_target("convolution_milo", "MI250X").dataset
    given = with_prior(target, {"MI250X": other})
    assert set(given.facts.others) == {"MI250X"} and given.dataset is target.dataset
    assert target.facts.others == {}  # the target itself is left as it was
    with pytest.raises(TunerError, match="its own measurements"):
        with_prior(target, {"A100": target.dataset})
    pnpoly = replay_target("pnpoly", "RTX_3090").dataset
    with pytest.raises(SpaceMismatchError, match="a prior must share"):
        with_prior(target, {"RTX_3090": pnpoly})


def test_the_prior_enters_a_runs_identity_only_when_given():
    plain = Campaign(tuners=(TunerSpec.parse("reference:random"),), targets=(("gemm", "RTX_3090"),), budgets=(5,),
                     repeats=1)
    (spec,) = plain.runs()
    assert spec.prior == ()
    primed = Campaign(tuners=plain.tuners, targets=plain.targets, budgets=(5,), repeats=1, prior="all-others")
    (with_others,) = primed.runs()
    assert with_others.prior == ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_Titan")
    assert with_others.seed == spec.seed and with_others.run_id != spec.run_id


def test_evaluations_to_a_goal_and_random_searchs_exact_median():
    best = np.array([5.0, 3.0, 3.0, 1.04])
    assert evaluations_to(best, 3.0, 4) == 2 and evaluations_to(best, 1.05, 4) == 4
    assert evaluations_to(best, 1.0, 4) == 5  # censored: budget + 1
    assert evaluations_to(best, 1.05, 3) == 4  # only the budget's first evaluations count
    rng = np.random.default_rng(1)
    for n, k in [(4, 1), (10, 3), (50, 2), (7, 7)]:
        values = np.r_[np.ones(k), np.full(n - k, 9.0)]
        # P(T > t) = C(n-k, t) / C(n, t); the median is the first t where it is <= 1/2
        exact = next(t for t in range(1, n + 1) if math.comb(n - k, t) / math.comb(n, t) <= 0.5)
        assert random_median(rng.permutation(values), 1.0) == exact
    assert random_median(np.full(4, 9.0), 1.0) is None


def test_the_study_end_to_end_and_resumed(tmp_path, capsys):
    out = tmp_path / "study"
    args = ["compare", "--study", "transfer", "-t", f"{TUNER},reference:random", "-b", "convolution_milo",
            "--budgets", "10", "-r", "3", "-o", str(out)]
    doc = document(args, capsys)
    t = doc["transfer"]
    assert t["budget"] == 10 and t["splits"] == ["all-others", "vendor:NVIDIA", "vendor:AMD"]
    # 5 targets x 3 seeds for random (once, without a prior); 5 + 2 + 3 target-splits x 3 seeds for the tuner
    assert doc["executed"] == 15 + 30 and doc["reused"] == 0
    assert {"summary", "json", "transfer_matrix"} <= set(doc["outputs"])
    assert (out / "plots" / "transfer_matrix.png").stat().st_size > 0
    results = json.loads((out / "results.json").read_text())
    splits = {s["prior"]: s["targets"] for s in results["study"]["splits"]}
    for target in splits["all-others"]:
        assert target["gpu"] not in target["sources"] and len(target["sources"]) == 4
    for source, split in (("NVIDIA", "vendor:NVIDIA"), ("AMD", "vendor:AMD")):
        assert splits[split] and all(gpu_vendor(x["gpu"], None) != source
                                     and {gpu_vendor(g, None) for g in x["sources"]} == {source}
                                     for x in splits[split])
    rows = [r for r in t["rows"] if r["goal"] == 1.1]
    assert len(rows) == 2 * 5 + 5 + 5  # the tuner on 10 target-splits, random on 5 targets in the first split
    # the prior's best configurations find 1.10 of the optimum on A4000 in a few evaluations; random search
    # (exact median: hundreds) does not within 10
    mine = next(r for r in rows if (r["label"], r["gpu"], r["split"]) == ("prior", "A4000", "all-others"))
    assert mine["median"] <= 5 and mine["censored"] == 0 and mine["gain"] > 10
    floor = next(r for r in rows if (r["label"], r["gpu"]) == ("reference:random", "A4000"))
    assert floor["median"] == 11 and floor["censored"] == 3 and floor["random_exact_median"] > 10
    # every run got its prior: NeedsPrior fails a run without one
    assert not any(r["meta"].get("tuner_report", {}).get("warning") for r in results["runs"])
    summary = (out / "summary.md").read_text()
    assert "### convolution_milo on MI250X (sources: A100, A4000, A6000)" in summary
    again = document(args, capsys)
    assert again["executed"] == 0 and again["reused"] == 45 and again["transfer"]["rows"] == t["rows"]


def test_too_few_gpus_for_the_study_is_refused(tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["compare", "--study", "transfer", "-t", "reference:random", "-b", "coulomb",
                 "-o", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "coulomb" in err and "at least 3" in err
    assert not out.exists()
    assert plan_transfer(tuners=["reference:random"], benchmarks=["gemm"]).splits[0].targets == tuple(
        ("gemm", g) for g in ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"))


def test_a_prior_of_another_space_is_refused(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    other = HUB / "dedispersion_milo_A4000.parquet"
    assert main(["run", "-t", "reference:random", "-b", "convolution_milo", "--gpu", "A100", "--prior", str(other),
                 "-n", "3", "-o", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "prior A4000" in err and "space" in err
    assert not out.exists()
    assert main(["run", "-t", "reference:random", "-b", "convolution_milo", "--gpu", "A100", "--prior", "A100",
                 "-n", "3", "-o", str(out)]) == EXIT_USAGE
    assert capsys.readouterr().err.count("\n") == 1 and not out.exists()
    assert main(["run", "-t", "transfer_tuners:NeedsPrior", "-b", "convolution_milo", "--gpu", "A100",
                 "--prior", "A4000,MI250X", "-n", "3", "-o", str(out)]) == 0
    assert "prior: measured data of A4000, MI250X" in capsys.readouterr().out


def test_the_study_runs_on_dask_unchanged(tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (the 'dask' extra) is missing")
    from bat.analysis.compare.transfer import run_transfer

    plan = plan_transfer(tuners=[TUNER, "reference:random"], benchmarks=["convolution_milo"], budget=5, repeats=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        done, on_dask = run_transfer(plan, tmp_path / "dask", scheduler=cluster.scheduler_address)
    local_done, local = run_transfer(plan, tmp_path / "local")
    assert done.executed == local_done.executed == 5 + 10
    def numbers(rows):  # the time axis holds the measured tuner time, which no two runs share
        return [{k: v for k, v in r.items() if k != "methodology_time"} for r in rows]

    assert numbers(on_dask.rows) == numbers(local.rows)  # same seeds, same priors, same evaluations


def test_a_gpu_without_facts_counts_by_its_device_name(tmp_path: Path, monkeypatch, capsys):
    """An AMD card the project has no facts for ("AMD Radeon PRO W7800", imported as W7800) joins the
    cross-vendor splits by its dataset's device name: an AMD target of the NVIDIA prior, a source of the AMD one."""
    from bat.run.targets import prior_gpus

    cache = tmp_path / "w7800.json"
    assert main(["export", "convolution_milo_W6600", "--to", "kernel_tuner", "--out", str(cache)]) == 0
    data = json.loads(cache.read_text())
    data["device_name"] = "AMD Radeon PRO W7800"
    cache.write_text(json.dumps(data))
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "data"))
    assert main(["import", str(cache), "-b", "convolution_milo", "--gpu", "W7800"]) == 0
    capsys.readouterr()
    assert gpu_vendor("W7800", None) == ""  # no facts and no name: unknown by its id alone
    study = plan_transfer(benchmarks=["convolution_milo"], tuners=["reference:random"])
    by_prior = {c.prior: {g for _, g in c.targets} for c in study.splits}
    assert "W7800" in by_prior["vendor:NVIDIA"] and "W7800" not in by_prior["vendor:AMD"]
    space = replay_target("convolution_milo", "A100").space.space_hash
    assert "W7800" in prior_gpus(space, "A100", "AMD") and "W7800" not in prior_gpus(space, "A100", "NVIDIA")
