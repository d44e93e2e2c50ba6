"""`bat compare --compile-workers 1,8`: every tuner at each K, scored on its own clock, in results.json."""

from __future__ import annotations

import json

from bat.campaign.design import Campaign, TunerSpec
from bat.cli import main


def test_compare_at_one_and_eight_compile_workers(tmp_path, capsys) -> None:
    out = tmp_path / "cmp"
    assert main(["compare", "-t", "r=reference:random,g=reference:genetic", "-b", "pnpoly", "--gpus", "RTX_3090",
                 "--budgets", "20", "--repeats", "2", "--no-plots", "--tuner-charge", "0",
                 "--compile-workers", "1,8", "-o", str(out)]) == 0
    capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    campaign = results["campaign"]
    assert campaign["compile_workers"] == [1, 8] and campaign["devices"] == 1
    assert {(t["label"], t["compile_workers"]) for t in campaign["tuners"]} == {
        ("r@k1", 1), ("r@k8", 8), ("g@k1", 1), ("g@k8", 8)}
    target = next(iter(results["methodology"]["targets"].values()))
    windows = target["time_windows_s"]
    assert 0 < windows["8"] < windows["1"]  # random search on 8 workers spends the budget sooner
    assert set(target["scores"]) == {"r@k1", "r@k8", "g@k1", "g@k8"}
    # with prefixes of one long run no longer valid on 8 workers, random search runs once per budget there
    assert campaign["budget_policy"]["r@k8"] == "one run per budget"
    summary = (out / "summary.md").read_text()
    table = summary.split("## Parallel compilation")[1].split("##")[0]
    assert "| tuner | K = 1 | K = 8 |" in table and "| `r` |" in table and "| `g` |" in table


def test_a_tuner_on_one_and_eight_workers_gets_the_same_seeds() -> None:
    spec = TunerSpec("r", "reference:random")
    one, eight = spec.at_workers(1, True), spec.at_workers(8, True)
    c = Campaign(tuners=(one, eight), targets=(("pnpoly", "RTX_3090"),), budgets=(10,), repeats=3)
    seeds = {(r.tuner.label, r.repeat): r.seed for r in c.runs()}
    assert all(seeds["r@k1", i] == seeds["r@k8", i] for i in range(3))
    # yet they are stored apart
    assert next(r for r in c.runs() if r.tuner.label == "r@k1").run_id != \
        next(r for r in c.runs() if r.tuner.label == "r@k8").run_id


def test_compare_refuses_zero_workers(tmp_path, capsys) -> None:
    assert main(["compare", "-t", "reference:random", "-b", "pnpoly", "--compile-workers", "1,0",
                 "-o", str(tmp_path / "c")]) == 2
    assert "1 to 4096" in capsys.readouterr().err
