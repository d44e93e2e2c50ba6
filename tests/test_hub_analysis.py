"""Every analysis on the FAIR Benchmark Hub's shipped data (results/benchmark-hub): vendors in the portability
matrix, speedup over the default configuration, the tuning-impact figure, and the commands (analyze, compare
with the methodology score, check) on both benchmarks. Kept small: two GPUs, few CatBoost iterations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bat.analysis.data import load_benchmark_data
from bat.analysis.portability import portability_matrix
from bat.analysis.speedup import speedup_over_default
from bat.cli import main


@pytest.fixture(scope="module")
def convolution():
    return load_benchmark_data("convolution_milo")


def test_the_portability_matrix_groups_vendors_and_summarises_both_directions(convolution):
    vendors = {g: convolution.vendor(g) for g in convolution.gpus}
    assert vendors == {"A100": "NVIDIA", "A4000": "NVIDIA", "A6000": "NVIDIA", "MI250X": "AMD", "W6600": "AMD"}
    port = portability_matrix({g: convolution.datasets[g] for g in ("MI250X", "A100", "W6600", "A6000")}, vendors)
    assert port.gpus == ["A100", "A6000", "MI250X", "W6600"] and port.vendors == ["NVIDIA", "NVIDIA", "AMD", "AMD"]
    np.testing.assert_allclose(np.diag(port.matrix), 1.0)
    across = port.to_dict()["across_vendors"]
    assert set(across) == {"NVIDIA->AMD", "AMD->NVIDIA"}
    cells = port.frame()
    nv_to_amd = cells.loc[["A100", "A6000"], ["MI250X", "W6600"]].to_numpy()
    assert across["NVIDIA->AMD"]["mean"] == pytest.approx(nv_to_amd.mean())
    assert across["NVIDIA->AMD"]["worst"] == pytest.approx(nv_to_amd.min()) and across["NVIDIA->AMD"]["cells"] == 4
    assert 0 < across["NVIDIA->AMD"]["worst"] < across["AMD->NVIDIA"]["worst"] < 1  # the published data's asymmetry
    from bat.analysis.plots import portability_figure  # matplotlib loads here, not when pytest collects this file

    fig = portability_figure("convolution_milo", port)
    boundaries = [line for line in fig.axes[0].lines if line.get_color() == "red"]
    assert len(boundaries) == 2  # one horizontal, one vertical line between the vendors


def test_speedup_over_the_default_configuration(convolution):
    a100 = convolution.datasets["A100"]
    default = a100.meta.load_benchmark().raw["default"]
    over = speedup_over_default(a100, default)
    row = a100.frame.set_index(list(a100.parameters)).loc[tuple(default[p] for p in a100.parameters)]
    assert over.reason == "" and over.value == pytest.approx(row["objective_ms"] / a100.best_ms) and over.value > 1
    failed = a100.frame[a100.frame["status"] == "compile_error"].iloc[0]
    broken = speedup_over_default(a100, {p: failed[p] for p in a100.parameters})
    assert broken.value is None and "failed (compile_error)" in broken.reason
    dedisp = load_benchmark_data("dedispersion_milo", ["A100"]).datasets["A100"]
    none = speedup_over_default(dedisp, dedisp.meta.load_benchmark().raw["default"])  # T1 default breaks a condition
    assert none.value is None and "no row" in none.reason
    assert speedup_over_default(dedisp, None).reason == "the space names no default configuration"


def test_the_tuning_impact_figure_tells_vendors_and_missing_defaults_apart():
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from bat.analysis.plots import tuning_impact_figure

    fig = tuning_impact_figure("x", {"A": {"over_median": 3.0, "over_default": 2.0},
                                     "B": {"over_median": 30.0, "over_default": None}}, {"A": "NVIDIA", "B": "AMD"})
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    ax = fig.axes[0]
    assert [round(b.get_height(), 6) for b in ax.patches[:3]] == [3.0, 30.0, 2.0]
    assert ax.patches[0].get_facecolor() != ax.patches[1].get_facecolor()  # NVIDIA and AMD told apart
    assert "n/a" in [t.get_text() for t in ax.texts] and ax.get_yscale() == "log"
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"over the median configuration",
                                                                   "over the default configuration"}
    # the vendor is written out under each bar, not told by colour alone (grey print)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A (NVIDIA)", "B (AMD)"]


@pytest.mark.slow
def test_analyze_on_two_vendors(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["analyze", "--benchmark", "convolution_milo", "--gpus", "A100", "--gpus", "W6600",
                 "--iterations", "20", "--repeats", "2", "--out", str(out)]) == 0
    (r,) = json.loads((out / "results.json").read_text())["benchmarks"]
    assert r["vendors"] == {"A100": "NVIDIA", "W6600": "AMD"}
    assert r["speedup"]["values"]["W6600"]["all"]["value"] > 10 > r["speedup"]["values"]["A100"]["all"]["value"] > 1
    assert r["speedup"]["over_default"]["A100"]["value"] > 1
    reach = r["convergence"]["A100"]["evaluations_to_reach"]["median"]
    assert 1 <= reach["90"] <= reach["95"] <= 4201
    assert set(r["centrality"]) == {"A100", "W6600"} and set(r["importance"]) == {"A100", "W6600"}
    assert set(r["portability"]["across_vendors"]) == {"NVIDIA->AMD", "AMD->NVIDIA"}
    assert {"tuning_impact", "portability"} <= set(r["figures"])
    report = (out / "report.md").read_text()
    assert "Across vendors" in report and "NVIDIA to AMD" in report and "AMD to NVIDIA" in report
    assert (out / "figures" / "convolution_milo_tuning_impact.png").is_file()


@pytest.mark.slow
def test_compare_and_the_methodology_score_run_on_hub_data(tmp_path, capsys):
    out = tmp_path / "compare"
    assert main(["compare", "--tuners", "reference:random", "--benchmarks", "dedispersion_milo,convolution_milo",
                 "--gpus", "MI250X", "--budgets", "10", "--repeats", "2", "--no-plots", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["random_baseline"]) == {"dedispersion_milo/MI250X", "convolution_milo/MI250X"}
    assert "reference:random" in results["scores"] and results["methodology"]["aggregate"]


def test_check_runs_on_hub_data(capsys):
    assert main(["check", "dedispersion_milo"]) == 0
    assert "5 datasets checked, 0 flagged" in capsys.readouterr().out
    # the published A6000 convolution cache: 'time' is neither the mean nor the median of 'times' in many rows
    assert main(["check", "convolution_milo/A6000"]) == 3
    assert "neither the mean nor the median" in capsys.readouterr().out
