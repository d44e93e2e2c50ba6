"""`bat analyze --all`: every analysis on every dataset under the results directory, as a report."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from analysis_fixtures import bat2

from bat.cli import main
from bat.core.trace import write_trace


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
    sample = data.datasets[titan].ok.sample(50, random_state=1)
    replay = sample["objective_ms"].to_numpy()
    frame = sample[list(data.space.names)].reset_index(drop=True).assign(
        charged=True, status="ok", objective_ms=replay, best_so_far_ms=np.minimum.accumulate(replay),
        cost_s=0.5, tuner_s=0.01)
    write_trace(frame, {"tuner": "replayed-random", "benchmark": "pnpoly", "gpu": titan}, trace)
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
    assert conv["definition"] == "median" and conv["random_search"]["definition"] == "median"
    assert conv["random_search_other"]["definition"] == "mean"
    for definition in ("median", "mean"):
        reach = conv["evaluations_to_reach"][definition]
        assert reach["90"] <= reach["95"]
    assert all(math.isfinite(v) for v in conv["random_search"]["centre"])
    tuner = conv["tuners"]["replayed-random"]
    assert tuner["budgets"] == [1, 2, 5, 10, 20, 50]
    assert tuner["centre"][-1] == pytest.approx(data.datasets[titan].best_ms / replay.min())
    assert set(tuner["evaluations_to_reach"]) == {"median", "mean"}
    # the Titan's pnpoly times are 2000x below the 3060's: flagged, and the report says so
    assert bench["flagged"] == [titan] and bench["data_checks"][titan]["flagged"]
    assert bench["noise"][titan]["size"] >= 1 and bench["noise"][titan]["test"].startswith("one-sided Mann-Whitney")
    score = bench["methodology"]["per_gpu"][titan]["tuners"]["replayed-random"]
    assert set(score) == {"evaluations", "time"} and score["evaluations"]["runs"] == 1

    report = (out / "report.md").read_text()
    assert "median over every recorded configuration" in report
    assert "## Flagged datasets (data checks)" in report and "**pnpoly on NVIDIA TITAN RTX**" in report
    assert "| setting | value |" in report and "| tuned on \\ run on |" in report and "{'" not in report
    assert "NVIDIA TITAN RTX ⚠" in report
    assert "n90 (median)" in report and "n90 (mean)" in report
    figures = [out / "figures" / png.split("/")[-1] for png in bench["figures"].values()]
    assert {"distribution", "centrality", "importance", "portability", f"convergence_{titan}"} <= set(bench["figures"])
    for png in [*figures, out / "figures" / "speedup.png"]:
        assert png.stat().st_size > 10_000, png  # written, and not empty
        assert png.with_suffix(".svg").stat().st_size > 10_000, png


def test_analyze_needs_a_benchmark(capsys):
    assert main(["analyze"]) == 2
    assert "--benchmark" in capsys.readouterr().err


def test_analyze_rejects_unknown_variant(capsys):
    assert main(["analyze", "-b", "pnpoly", "--centrality", "nope"]) == 2
    assert "centrality variant 'nope'" in capsys.readouterr().err
    assert main(["analyze", "-b", "pnpoly", "--convergence", "mode"]) == 2
    assert "convergence definition 'mode'" in capsys.readouterr().err


def test_a_single_gpu_benchmark_gets_no_portability_figure(tmp_path, monkeypatch):
    from bat.analysis.data import load_benchmark_data
    from bat.analysis.report import AnalyzeSettings, analyze_benchmark

    data = load_benchmark_data("coulomb")
    assert len(data.gpus) == 1
    out = analyze_benchmark(data, AnalyzeSettings(importance=False), tmp_path)
    assert "portability" not in out["figures"] and not list(tmp_path.glob("*portability*"))
    assert all(p.stat().st_size > 10_000 for p in out["figures"].values())
