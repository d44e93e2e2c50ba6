"""Max speedup over median and the portability matrix against the BAT 2.0 paper's values."""

from __future__ import annotations

import numpy as np
import pytest
from analysis_fixtures import bat2

from bat.analysis import published
from bat.analysis.portability import portability_matrix
from bat.analysis.speedup import max_speedup_over_median
from bat.core.dataset import Dataset, DatasetMeta, make_frame
from bat.core.errors import UnknownNameError


@pytest.mark.parametrize("benchmark", ["convolution", "pnpoly"])
def test_default_speedup_reproduces_published_values(benchmark):
    data = bat2(benchmark)
    for gpu, d in data.datasets.items():
        s = max_speedup_over_median(d)
        assert s.definition == "all"
        assert round(s.value, 3) == published.SPEEDUP[benchmark][published.gpu_key(gpu)]
        valid = max_speedup_over_median(d, "valid")
        # (a) is 3-26 % lower on this data (METHODS.md)
        assert 0.74 * s.value < valid.value < 0.97 * s.value


def _tiny(gpu: str, rows: list[tuple[int, str, float]]) -> Dataset:
    frame = make_frame(["a"], [{"a": a, "status": st, "objective_ms": t} for a, st, t in rows])
    return Dataset(frame, DatasetMeta(benchmark="tiny", space_hash="x", gpu=gpu), ("a",))


def test_speedup_median_counts_failures_as_infinite():
    d = _tiny("g", [(0, "ok", 1.0), (1, "ok", 3.0), (2, "compile_error", np.nan), (3, "ok", 2.0)])
    assert max_speedup_over_median(d, "all").value == pytest.approx(2.5)   # median of 1,2,3,inf
    assert max_speedup_over_median(d, "valid").value == pytest.approx(2.0)
    with pytest.raises(UnknownNameError, match="speedup definition"):
        max_speedup_over_median(d, "mean")


@pytest.mark.parametrize(("benchmark", "row", "col"), list(published.PORTABILITY))
def test_portability_cells_quoted_in_the_paper(benchmark, row, col):
    data = bat2(benchmark)
    port = portability_matrix(data.datasets)
    by_key = {published.gpu_key(g): i for i, g in enumerate(port.gpus)}
    value = port.matrix[by_key[row], by_key[col]]
    assert round(value * 100, 1) == published.PORTABILITY[(benchmark, row, col)]
    assert np.allclose(np.diag(port.matrix), 1.0)


def test_portability_marks_invalid_and_missing_cells():
    a = _tiny("A", [(0, "ok", 1.0), (1, "ok", 2.0), (2, "ok", 3.0)])
    b = _tiny("B", [(0, "runtime_error", np.nan), (1, "ok", 4.0), (2, "ok", 2.0)])
    c = _tiny("C", [(1, "ok", 1.0), (2, "ok", 5.0)])
    port = portability_matrix({"A": a, "B": b, "C": c})
    assert np.isnan(port.matrix[0, 1]) and port.reasons[("A", "B")] == "invalid"
    assert np.isnan(port.matrix[0, 2]) and port.reasons[("A", "C")] == "missing"
    assert port.matrix[1, 0] == pytest.approx(1.0 / 3.0)
    cells = port.to_dict()["cells"]
    assert cells["A->B"] == "invalid" and cells["A->C"] == "missing"
