"""bat hypertune --hub: the FAIR Benchmark Hub's brute force of a Kernel Tuner strategy searched and compared.

Fixture: the hub's PSO brute force, copied whole (tests/fixtures/benchmark_hub/extra, PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat.analysis.hypertune.hub import read_hub
from bat.analysis.hypertune.space import declared, search_space
from bat.analysis.hypertune.splits import HypertuneError
from bat.cli import main

PSO = Path(__file__).parent / "fixtures" / "benchmark_hub" / "extra" / "hyperparamtuning_paper_bruteforce_pso.json"
RAW = json.loads(PSO.read_text())
SMALL = ["--train", "pnpoly_RTX_3090,pnpoly_RTX_2080_Ti", "--heldout", "pnpoly_RTX_Titan", "--budget", "20",
         "-r", "2", "--final-repeats", "2", "--no-report"]


def test_the_hub_file_is_read_setting_by_setting():
    hub = read_hub(PSO, "kernel_tuner:pso", declared("kernel_tuner:pso"))
    assert hub.strategy == "pso" and len(hub.settings) == len(RAW["cache"]) == 81
    assert hub.values == RAW["tune_params"]
    for entry in RAW["cache"].values():
        assert hub.score_of({k: entry[k] for k in RAW["tune_params_keys"]}) == entry["score"]
    assert hub.score_of({"popsize": 11, "maxiter": 50, "c1": 1.0, "c2": 0.5}) is None
    narrowed = {p.name: p for p in hub.narrowed(declared("kernel_tuner:pso"))}
    assert set(narrowed) == {"popsize", "maxiter", "c1", "c2"} and narrowed["c1"].choices == (1.0, 2.0, 3.0)
    grid = search_space("kernel_tuner:pso", tuple(narrowed.values()), 8, 81, with_defaults=False)
    assert grid.cardinality == grid.count_valid() == 81  # the hub's settings, and no other


def _changed(tmp_path: Path, change) -> Path:
    raw = json.loads(PSO.read_text())
    change(raw)
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize(("tuner", "change", "message"), [
    ("kernel_tuner:genetic_algorithm", lambda raw: None, "a brute force of 'hyperparamtuning_pso', not of the tuner "
                                                         "kernel_tuner:genetic_algorithm"),
    ("kernel_tuner:pso", lambda raw: raw["tune_params"].update(popsize=[10, 20, 1000]),
     "tune_params.popsize: 1000 is not int in"),
    ("kernel_tuner:pso", lambda raw: (raw["tune_params_keys"].append("zeta"), raw["tune_params"].update(zeta=[1])),
     "the hub varies 'zeta', which kernel_tuner:pso does not declare"),
])
def test_a_file_that_cannot_be_mapped_is_refused_in_one_line(tmp_path, capsys, tuner, change, message):
    with pytest.raises(HypertuneError, match=message):
        read_hub(_changed(tmp_path, change), tuner, declared(tuner))
    out = tmp_path / "ht"
    assert main(["hypertune", "-t", tuner, "--hub", str(_changed(tmp_path, change)), *SMALL, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_params_with_hub_are_refused(tmp_path, capsys):
    assert main(["hypertune", "-t", "kernel_tuner:pso", "--hub", str(PSO), "--params", "popsize", *SMALL,
                 "-o", str(tmp_path / "ht")]) == 2
    assert "give no --params or --range with it" in capsys.readouterr().err


def test_a_hypertune_on_the_hub_grid_reports_the_rank_correlation(tmp_path, capsys):
    out = tmp_path / "ht"
    assert main(["hypertune", "-t", "kernel_tuner:pso", "--hub", str(PSO), "--search", "grid", "-n", "4", *SMALL,
                 "-o", str(out)]) == 0
    assert "against the hub's brute force: 4 shared settings" in capsys.readouterr().out
    body = json.loads((out / "hypertune.json").read_text())
    scores = {tuple(e[k] for k in RAW["tune_params_keys"]): e["score"] for e in RAW["cache"].values()}
    ours, theirs = [], []
    for t in body["tried"]:
        key = tuple(t["setting"][k] for k in RAW["tune_params_keys"])
        if key in scores:
            ours.append(t["score"])
            theirs.append(scores[key])
        else:  # only the defaults are off the hub's grid
            assert t["setting"] == body["defaults"]
    assert len(ours) == body["hub"]["shared_settings"] == 4
    from scipy.stats import spearmanr  # SciPy loads here, not when pytest collects this file

    assert body["hub"]["spearman"] == pytest.approx(spearmanr(ours, theirs).statistic)
    assert "names neither its datasets" in body["hub"]["hub"] and "pnpoly/RTX_3090" in body["hub"]["ours"]
