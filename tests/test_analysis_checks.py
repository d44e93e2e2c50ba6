"""Data checks (`bat check`, import, analyze) and the noise-aware optimum."""

from __future__ import annotations

import numpy as np
import pytest

from bat.analysis.noise import noise_set
from bat.cli import main
from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.spacefile import space_from_dict
from bat.data.checks import Peer, best_time, check_dataset, registry_peers
from bat.registry import find_dataset

SPACE = space_from_dict({"name": "toy", "parameters": [{"name": "x", "values": [1, 2, 3, 4, 5, 6]}],
                         "constraints": [{"expr": "x != 6", "why": "test"}], "problem_size": {}})


def toy(rows, **meta) -> Dataset:
    return Dataset(make_frame(("x",), rows), DatasetMeta(benchmark="toy", space_hash=SPACE.space_hash, gpu="G",
                                                         **meta), ("x",))


def clean_rows():
    return [{"x": x, "status": "ok", "objective_ms": float(x), "times_ms": [x - 0.01, x + 0.01]} for x in range(1, 6)]


def test_a_clean_dataset_passes_and_each_problem_is_named():
    assert not check_dataset(toy(clean_rows()), SPACE).flagged
    rows = clean_rows()
    rows[0]["objective_ms"] = 1.5  # neither mean nor median of its repeats
    rows[1].update(status="runtime_error")  # a failure that carries an objective
    rows.append({"x": 6, "status": "ok", "objective_ms": 6.0, "times_ms": [6.0]})  # violates x != 6, yet measured
    rows.append({"x": 3, "status": "ok", "objective_ms": 3.0, "times_ms": [3.0]})  # a duplicate
    result = check_dataset(toy(rows), SPACE)
    found = {f.check: f.message for f in result.flags}
    assert set(found) == {"repeats", "statuses", "space", "duplicates"}
    assert "1 ok rows" in found["repeats"] and "objective 1.5" in found["repeats"]
    assert "1 failed rows carry an objective" in found["statuses"]
    assert "1 rows violate a constraint" in found["space"]
    assert "1 rows repeat a configuration" in found["duplicates"]
    assert result.summary().startswith("toy/G flagged: ")


def test_coverage_is_a_note_and_scale_needs_peers_at_the_same_problem_size():
    partial = toy(clean_rows()[:3])
    result = check_dataset(partial, SPACE, [Peer("H", 100.0, {"n": 1})])
    assert not result.flagged
    notes = {f.check: f.message for f in result.findings}
    assert "3 of 5 constrained configurations recorded" in notes["coverage"]
    assert "no other GPU" in notes["scale"]  # the peer ran another problem size
    far = check_dataset(partial, SPACE, [Peer("H", 100.0, {}), Peer("I", 30.0, {})])
    assert far.flagged and "30x below the median best time 30 ms" in far.flags[0].message  # upper median


def test_shipped_pnpoly_turing_datasets_are_flagged_and_the_others_pass():
    peers = registry_peers("pnpoly")
    for gpu, flagged in (("RTX_2080_Ti", True), ("RTX_Titan", True), ("RTX_3090", False),
                         ("RTX_3060_laptop", False)):
        result = check_dataset(Dataset.load(find_dataset("pnpoly", gpu).path), peers=peers)
        assert result.flagged is flagged, gpu
        if flagged:
            assert "unit or problem-size error" in result.flags[0].message


def test_bat_check_exit_status_and_output(capsys):
    assert main(["check", "pnpoly"]) == 3
    out = capsys.readouterr().out
    assert "pnpoly/RTX_2080_Ti flagged" in out and "pnpoly/RTX_Titan flagged" in out
    assert "4 datasets checked, 2 flagged" in out
    assert main(["check", "gemm/RTX_3090"]) == 0
    assert main(["check", "no_such_benchmark"]) == 2


def test_import_runs_the_checks(tmp_path, capsys):
    cache = tmp_path / "pnpoly.json"
    assert main(["export", str(find_dataset("pnpoly", "RTX_2080_Ti").path), "--to", "kernel_tuner",
                 "--out", str(cache)]) == 0
    assert main(["import", str(cache), "--benchmark", "pnpoly", "--gpu", "RTX_2080_Ti",
                 "--out", str(tmp_path / "p.parquet")]) == 0
    assert "data checks: pnpoly/RTX_2080_Ti flagged: scale" in " ".join(capsys.readouterr().out.split())


def test_noise_set_keeps_what_the_repeats_cannot_tell_apart():
    rng = np.random.default_rng(0)
    best = 10 + rng.normal(0, 0.05, 10)
    rows = [{"x": 1, "objective_ms": best.mean(), "times_ms": best.tolist()},
            {"x": 2, "objective_ms": 10.01, "times_ms": (best + rng.normal(0.01, 0.05, 10)).tolist()},
            {"x": 3, "objective_ms": 11.0, "times_ms": (best + 1.0).tolist()},
            {"x": 4, "objective_ms": 10.5, "times_ms": [10.5]}]  # one repeat: not testable
    s = noise_set(toy(rows), alpha=0.05)
    assert sorted(s.rows.tolist()) == [0, 1]
    assert s.n_tested == 2 and s.size == 2
    hit = s.random_search_hit()
    assert hit["mean"] == pytest.approx((4 + 1) / (2 + 1))
    assert noise_set(toy(rows), alpha=0.9999).size == 1  # at a level of almost 1 everything is rejected
    single = noise_set(toy([{"x": 1, "objective_ms": 1.0, "times_ms": [1.0]}]))
    assert single.size == 1 and "fewer than two" in single.note


def test_bat_run_on_a_flagged_dataset_says_so(tmp_path, capsys):
    assert main(["run", "--tuner", "reference:random", "--benchmark", "pnpoly", "--gpu", "RTX_Titan",
                 "--budget", "3", "--out", str(tmp_path / "t.parquet")]) == 0
    assert "data check flagged this dataset: best time 0.01352 ms" in " ".join(capsys.readouterr().out.split())


def test_bat_space_variant_reproduces_both_counts(capsys):
    assert main(["space", "hotspot", "--variant", "kernel_tuner"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "410,523 valid configurations under its own constraints, 349,853 under the kernel_tuner rules" in out
    assert main(["space", "hotspot", "--variant", "nope"]) == 2


def test_a_peers_best_time_is_read_again_when_its_file_changes(tmp_path):
    """best_time is remembered per file version: a dataset rewritten in place gives its new best."""
    path = tmp_path / "toy.parquet"
    toy(clean_rows()).save(path)
    assert best_time(path) == 1.0
    rows = [dict(r, objective_ms=r["objective_ms"] / 4) for r in clean_rows()]
    toy(rows).save(path)
    assert best_time(path) == 0.25
