"""`bat analyze --all`: every analysis on every dataset under the results directory, as a report."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import bat2

from bat.cli import main
from bat.trace import write_trace


def test_analyze_all_writes_report(tmp_path, monkeypatch, capsys):
    data = bat2("pnpoly", ("RTX_3060_laptop", "RTX_Titan"))
    results = tmp_path / "results"
    for gpu, d in data.datasets.items():
        if "3060" in gpu:  # a partial dataset exercises the surrogate landscape
            d = type(d)(d.frame.iloc[::2].reset_index(drop=True), d.meta, d.parameters)
            d.meta.partial = True
        d.save(results / f"pnpoly_{gpu}.parquet")
    monkeypatch.setenv("BAT_RESULTS", str(results))
    titan = next(g for g in data.datasets if "titan" in g.lower())
    trace = tmp_path / "trace.parquet"
    replay = data.datasets[titan].ok.sample(50, random_state=1)["objective_ms"].to_numpy()
    write_trace(pd.DataFrame({"charged": True, "best_so_far_ms": np.minimum.accumulate(replay)}),
                {"tuner": "replayed-random", "benchmark": "pnpoly", "gpu": titan}, trace)
    out = tmp_path / "report"
    assert main(["analyze", "--all", "--out", str(out), "--iterations", "20", "--repeats", "2",
                 "--trace", str(trace)]) == 0
    assert "max speedup over median (all)" in capsys.readouterr().out

    payload = json.loads((out / "results.json").read_text())
    (bench,) = payload["benchmarks"]
    assert bench["benchmark"] == "pnpoly" and set(bench["gpus"]) == set(data.datasets)
    for key in ("distribution", "speedup", "convergence", "centrality", "importance",
                "portability", "sizes"):
        assert bench[key], key
    partial = next(g for g in bench["gpus"] if "3060" in g)
    assert round(bench["speedup"]["values"][titan]["all"]["value"], 3) == 1.705
    assert bench["speedup"]["values"][titan]["all"]["definition"] == "all"
    assert "surrogate" in bench["centrality"][partial]
    assert "model estimate" in bench["centrality"][partial]["surrogate"]["estimate"]
    assert "surrogate" not in bench["centrality"][titan]
    conv = bench["convergence"][titan]
    assert conv["evaluations_to_90pct"] <= conv["evaluations_to_95pct"]
    assert all(math.isfinite(v) for v in conv["random_search"]["centre"])
    tuner = conv["tuners"]["replayed-random"]
    assert tuner["budgets"] == [1, 2, 5, 10, 20, 50]
    assert tuner["centre"][-1] == pytest.approx(data.datasets[titan].best_ms / replay.min())

    report = (out / "report.md").read_text()
    assert "median over every recorded configuration" in report
    for png in bench["figures"].values():
        assert (out / "figures" / png.split("/")[-1]).exists()
        assert (out / "figures" / png.split("/")[-1].replace(".png", ".svg")).exists()
    assert (out / "figures" / "speedup.png").exists()


def test_analyze_needs_a_benchmark(capsys):
    assert main(["analyze"]) == 2
    assert "--benchmark" in capsys.readouterr().err


def test_analyze_rejects_unknown_variant(capsys):
    assert main(["analyze", "-b", "pnpoly", "--centrality", "nope"]) == 2
    assert "centrality variant 'nope'" in capsys.readouterr().err
