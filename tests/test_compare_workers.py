"""`bat compare --compile-workers 1,8`: every tuner at each K, scored on its own clock, in results.json."""

from __future__ import annotations

import json

from bat.campaign.design import Campaign, TunerSpec
from bat.cli import main


def test_compare_at_one_and_eight_compile_workers(tmp_path, capsys) -> None:
    out = tmp_path / "cmp"
    assert main(["compare", "-t", "r=reference:random,g=reference:genetic,o=optuna:random,c=reference:coordinate",
                 "-b", "pnpoly", "--gpus", "RTX_3090",
                 "--budgets", "20", "--repeats", "2", "--no-plots", "--tuner-charge", "0",
                 "--compile-workers", "1,8", "-o", str(out)]) == 0
    capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    campaign = results["campaign"]
    assert campaign["compile_workers"] == [1, 8] and campaign["devices"] == 1
    assert {(t["label"], t["compile_workers"]) for t in campaign["tuners"]} == {
        (f"{b}@k{k}", k) for b in "rgoc" for k in (1, 8)}
    target = next(iter(results["methodology"]["targets"].values()))
    windows = target["time_windows_s"]
    assert 0 < windows["8"] < windows["1"]  # random search on 8 workers spends the budget sooner
    assert set(target["scores"]) == {f"{b}@k{k}" for b in "rgoc" for k in (1, 8)}
    # with prefixes of one long run no longer valid on 8 workers, random search runs once per budget there
    assert campaign["budget_policy"]["r@k8"] == "one run per budget"
    summary = (out / "summary.md").read_text()
    table = summary.split("## Parallel compilation")[1].split("##")[0]
    assert "| tuner | declares | K = 1 | K = 8 | change |" in table
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines()
            if line.startswith("| `")}
    assert rows == {"`r`": "proposes batches", "`g`": "proposes batches", "`o`": "runs ahead of its results",
                    "`c`": "waits for each result"}


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


def test_a_run_on_several_workers_is_made_again_when_the_clock_changes(monkeypatch) -> None:
    import bat.campaign.design as campaign_module

    spec = TunerSpec("r", "reference:random")
    c = Campaign(tuners=(spec.at_workers(1, True), spec.at_workers(8, True)), targets=(("pnpoly", "RTX_3090"),),
                 budgets=(10,), repeats=1)
    before = {r.tuner.compile_workers: r.run_id for r in c.runs()}
    monkeypatch.setattr(campaign_module, "CLOCK_REVISION", campaign_module.CLOCK_REVISION + 1)
    after = {r.tuner.compile_workers: r.run_id for r in c.runs()}
    assert after[1] == before[1] and after[8] != before[8]  # the sequential clock's runs keep their ids
