"""The gallery: every format users bring, in its realistic shapes, imported, replayed and analysed.

Each case writes its own files (own_data_files: real BAT 2.0 pnpoly numbers under a kernel this
project has never seen), imports them into a fresh data folder with `bat import`, replays a
tuner on the dataset with `bat run --dataset`, and analyses it with `bat analyze --dataset`.
"""

from __future__ import annotations

import json
from pathlib import Path

import own_data_files as files
import pytest

from bat.cli import main
from bat.core.trace import read_trace
from bat.formats.t4 import to_t4


def _files(shape: str, folder: Path) -> list[str]:
    """The `bat import` arguments of one shape (files written into ``folder``)."""
    ds = files.toy()
    if shape == "t1+cache":
        valid = (ds.frame["BX"] * ds.frame["TS"] <= 5000).to_numpy()
        brute = type(ds)(ds.frame[valid].reset_index(drop=True), ds.meta, ds.parameters)
        t1 = files.write(files.t1_space(ds), folder / "toy.T1.json")
        return [str(files.write(files.kt_cache_new(brute), folder / "toy_RTX_3090.json")), "--benchmark", str(t1)]
    makers = {"kernel_tuner_old": files.kt_cache_old, "kernel_tuner_new": files.kt_cache_new,
              "t4_kernel_tuner": files.t4_from_kernel_tuner, "t4_ktt": files.t4_ktt_shape, "t4_wild": files.t4_wild,
              "t4_bat": to_t4, "ktt": files.ktt_output}
    suffix = {"t4_": ".T4.json", "ktt": ".ktt.json"}
    name = "toy_RTX_3090" + next((v for k, v in suffix.items() if shape.startswith(k)), ".json")
    extra = [] if shape.startswith("kernel_tuner") or shape == "ktt" else ["--gpu", "RTX_3090"]
    return [str(files.write(makers[shape](ds), folder / name)), *extra]


@pytest.mark.parametrize("shape", ["kernel_tuner_old", "kernel_tuner_new", "t1+cache", "t4_kernel_tuner", "t4_ktt",
                                   "t4_wild", "t4_bat", "ktt"])
def test_gallery(shape, tmp_path, capsys):
    if shape == "t4_kernel_tuner":
        pytest.importorskip("kernel_tuner")
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "import", *_files(shape, tmp_path)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "toy_RTX_3090.parquet" in out.replace("\n", "")

    trace = tmp_path / "trace.parquet"
    assert main([*data, "run", "-t", "reference:random", "-d", "toy_RTX_3090", "-n", "15", "-o", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "toy_RTX_3090.parquet" in out.splitlines()[0]
    frame, meta = read_trace(trace)
    assert int(frame["charged"].sum()) == 15 and meta["benchmark"] == "toy" and meta["gpu"] == "RTX_3090"
    assert "missing" not in set(frame["status"])

    report = tmp_path / "report"
    assert main([*data, "analyze", "-d", "toy_RTX_3090", "--no-importance", "--out", str(report)]) == 0
    (bench,) = json.loads((report / "results.json").read_text())["benchmarks"]
    assert bench["benchmark"] == "toy" and list(bench["gpus"]) == ["RTX_3090"]
    for key in ("distribution", "speedup", "convergence", "centrality", "sizes"):
        assert bench[key], key
    assert bench["speedup"]["values"]["RTX_3090"]["all"]["value"] > 1.0
