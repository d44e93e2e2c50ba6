"""Two frameworks' datasets of one benchmark and GPU compared (bat/analysis/frameworks.py, ``bat check``).

Data: the shipped Kernel Tuner dataset of pnpoly and convolution on the RTX 2080 Ti (results/bat2-kerneltuner)
and an excerpt of KTT's output of the same convolution kernel on the same GPU (tests/fixtures/benchmark_hub/extra).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from bat.analysis.frameworks import compare_frameworks, framework
from bat.cli import main
from bat.core.dataset import Dataset, Status
from bat.formats.importing import import_file
from bat.registry import find_dataset

KTT_CONV = Path(__file__).parent / "fixtures" / "benchmark_hub" / "extra" / "KTConvolutionOutput_2080Ti.json.gz"


@pytest.fixture(scope="module")
def pnpoly() -> Dataset:
    return Dataset.load(find_dataset("pnpoly", "RTX_2080_Ti").path)


def _twin(ds: Dataset, factor: float) -> Dataset:
    """The same measurements as if another framework had timed every one ``factor`` times slower."""
    other = Dataset(frame=ds.frame.copy(), meta=copy.deepcopy(ds.meta), parameters=ds.parameters)
    other.frame["objective_ms"] = other.frame["objective_ms"] * factor
    other.frame["times_ms"] = [list(np.asarray(t, float) * factor) for t in other.frame["times_ms"]]
    other.meta.extra = {"ktt_header": {}}
    other.meta.toolkit = "KTT 9.9"
    return other


def test_a_framework_that_is_only_slower_agrees_everywhere(pnpoly):
    c = compare_frameworks(pnpoly, _twin(pnpoly, 2.0))
    ok = int((pnpoly.frame["status"] == Status.OK.value).sum())
    assert c.frameworks == ("Kernel Tuner", "KTT 9.9")
    assert c.both_recorded == len(pnpoly.frame) and c.both_ok == ok and c.ok_only_in == (0, 0)
    assert c.spearman == pytest.approx(1.0)
    assert c.scale == pytest.approx(2.0) and c.best_ratio == pytest.approx(2.0) and c.same_best
    assert c.judged == ok and c.disagree == 0 and c.examples == []


def test_one_configuration_beyond_the_noise_is_found_and_named(pnpoly):
    other = _twin(pnpoly, 2.0)
    ok_rows = np.flatnonzero((other.frame["status"] == Status.OK.value).to_numpy())
    row = int(ok_rows[len(ok_rows) // 2])
    other.frame.loc[row, "objective_ms"] *= 3.0
    failed = int(ok_rows[0])
    other.frame.loc[failed, "status"] = Status.RUNTIME_ERROR.value
    c = compare_frameworks(pnpoly, other)
    assert c.disagree == 1 and c.ok_only_in == (1, 0)
    expected = {p: pnpoly.frame.loc[row, p] for p in pnpoly.parameters}
    assert c.examples[0]["config"] == expected
    assert c.examples[0]["scaled_ratio"] == pytest.approx(3.0, rel=1e-6)
    other.frame.loc[row, "objective_ms"] /= 2.9  # 3.0 / 2.9: within that configuration's noise
    assert compare_frameworks(pnpoly, other).disagree == 0


def test_without_repeats_on_either_side_nothing_is_judged(pnpoly):
    one = Dataset(frame=pnpoly.frame.copy(), meta=pnpoly.meta, parameters=pnpoly.parameters)
    one.frame["times_ms"] = [[] for _ in range(len(one.frame))]
    other = _twin(one, 3.0)
    other.frame.loc[0, "objective_ms"] *= 10
    c = compare_frameworks(one, other)
    assert c.judged == 0 and c.disagree == 0 and c.without_repeats == (c.both_ok, c.both_ok)


def test_ktt_and_kernel_tuner_on_the_2080_ti_compared(tmp_path):
    ktt = import_file(KTT_CONV, benchmark="convolution").dataset
    kt = Dataset.load(find_dataset("convolution", "RTX_2080_Ti").path)
    c = compare_frameworks(kt, ktt)
    assert (framework(kt.meta), framework(ktt.meta)) == ("Kernel Tuner", "KTT 2.1.0")
    assert c.recorded == (len(kt.frame), len(ktt.frame)) == (6768, 34)
    shared = ktt.frame.merge(kt.frame, on=list(kt.parameters), suffixes=("_ktt", "_kt"))
    both_ok = shared[(shared["status_ktt"] == "ok") & (shared["status_kt"] == "ok")]
    assert c.both_recorded == 34 and c.both_ok == len(both_ok) > 2
    ratio = both_ok["objective_ms_ktt"] / both_ok["objective_ms_kt"]
    assert c.scale == pytest.approx(float(np.exp(np.median(np.log(ratio)))))
    assert c.without_repeats == (0, c.both_ok)  # KTT's output holds one duration per configuration
    assert -1.0 <= c.spearman <= 1.0


def test_bat_check_compares_two_frameworks_of_one_gpu(tmp_path, capsys):
    out = tmp_path / "convolution_ktt.parquet"
    assert main(["import", str(KTT_CONV), "--benchmark", "convolution", "-o", str(out)]) == 0
    capsys.readouterr()
    kt = str(find_dataset("convolution", "RTX_2080_Ti").path)
    assert main(["--json", "check", kt, str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (pair,) = doc["frameworks"]
    assert pair["frameworks"] == ["Kernel Tuner", "KTT 2.1.0"] and pair["datasets"] == [kt, str(out)]
    assert main(["check", kt, str(find_dataset("convolution", "RTX_3090").path)]) == 0
    assert "recorded by both" not in capsys.readouterr().out  # two GPUs: nothing to compare


def test_bat_analyze_reports_the_other_frameworks_data_of_a_gpu(tmp_path):
    ktt = KTT_CONV.with_name("KTPnpolyOutput_2080Ti.json.gz")
    assert main(["import", str(ktt), "--benchmark", "pnpoly"]) == 0  # into the data folder, beside the shipped one
    kt = Path(__file__).parents[1] / "results" / "bat2-kerneltuner" / "pnpoly_RTX_2080_Ti.parquet"
    out = tmp_path / "report"
    assert main(["analyze", "--dataset", str(kt), "--no-importance", "--format", "png", "--out", str(out)]) == 0
    (result,) = json.loads((out / "results.json").read_text())["benchmarks"]
    (pair,) = result["frameworks"]
    assert pair["frameworks"] == ["Kernel Tuner", "KTT 2.1.0"] and pair["both_recorded"] == 24
    assert "Other frameworks' data of these GPUs" in (out / "report.md").read_text()
