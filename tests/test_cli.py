"""The `bat` command end to end: list, space, run (replay), import/export, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bat.cli import main
from bat.core.dataset import Dataset
from bat.core.trace import read_trace

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_optuna_on_gemm_replays(tmp_path, capsys):
    out = tmp_path / "trace.parquet"
    code, stdout, _ = run(["run", "--tuner", "optuna", "--benchmark", "gemm", "--budget", "20",
                           "--out", str(out)], capsys)
    assert code == 0
    assert "replaying" in stdout and "RTX 3090" in stdout
    assert "best time:" in stdout and "ratio best known / found" in stdout
    assert "invalid rate" in stdout and str(out) in stdout.replace("\n", "")
    trace, meta = read_trace(out)
    assert int(trace["charged"].sum()) == 20
    assert meta["tuner"] == "optuna" and meta["gpu"] == "RTX_3090"


def test_same_seed_same_trace(tmp_path, capsys):
    frames = []
    for i in range(2):
        out = tmp_path / f"t{i}.parquet"
        assert run(["run", "-t", "optuna", "-b", "pnpoly", "-n", "15", "-s", "3", "-o", str(out)], capsys)[0] == 0
        frames.append(read_trace(out)[0].drop(columns=["tuner_s"]))
    assert frames[0].equals(frames[1])


def test_unknown_tuner_lists_valid_names(capsys):
    code, _, err = run(["run", "--tuner", "nope", "--benchmark", "gemm"], capsys)
    assert code == 2
    assert "unknown tuner 'nope'" in err and "optuna:random" in err


def test_unknown_benchmark_and_gpu(capsys):
    code, _, err = run(["run", "--tuner", "optuna", "--benchmark", "nope"], capsys)
    assert code == 2 and "unknown benchmark 'nope'" in err and "gemm" in err
    code, _, err = run(["run", "--tuner", "optuna", "--benchmark", "gemm", "--gpu", "H100"], capsys)
    assert code == 2 and "'H100'" in err and "RTX_2080_Ti" in err


def test_malformed_space_file_names_file_and_path(tmp_path, capsys):
    bad = tmp_path / "space.json"
    spec = json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())
    spec["parameters"][1]["values"] = "many"
    bad.write_text(json.dumps(spec))
    code, _, err = run(["space", str(bad)], capsys)
    assert code == 2
    assert str(bad) in err.replace("\n", "") and "parameters[1].values" in err


def test_dataset_whose_space_hash_does_not_match(tmp_path, capsys, monkeypatch):
    src = ROOT / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
    ds = Dataset.load(src)
    ds.meta.space_hash = "f" * 64
    ds.save(tmp_path / "pnpoly.parquet")
    monkeypatch.setenv("BAT_RESULTS", str(tmp_path))
    code, _, err = run(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "5"], capsys)
    assert code == 2 and "space hash" in err


def test_list_and_space(capsys):
    code, out, _ = run(["list"], capsys)
    assert code == 0
    for word in ("gemm", "dedispersion", "optuna", "reference:random", "RTX_Titan"):
        assert word in out
    assert "profile:exact [oracle]" in out and "[oracle]: reads the target's measurements" in out  # not markup
    code, out, _ = run(["space"], capsys)
    assert code == 0 and "17,956" in out and "123,863,040" in out


def test_import_then_export_round_trip(published_dir, tmp_path, capsys):
    out = tmp_path / "p.parquet"
    code, stdout, _ = run(["import", str(published_dir / "pnpoly_RTX_3090.json.gz"), "--out", str(out)], capsys)
    assert code == 0 and "4092 rows" in stdout and "runtime_error 318" in stdout
    back = tmp_path / "p.json"
    assert run(["export", str(out), "--to", "kernel_tuner", "--out", str(back)], capsys)[0] == 0
    assert len(json.loads(back.read_text())["cache"]) == 4092


def test_console_script_runs():
    exe = Path(sys.executable).with_name("bat")
    if not exe.exists():
        pytest.skip(f"the `bat` console script is not installed next to {sys.executable}")
    proc = subprocess.run([str(exe), "run", "-t", "nope", "-b", "gemm"], capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown tuner" in proc.stderr


def test_inspect_shows_resources(capsys):
    pytest.importorskip("cuda.bindings.nvrtc", reason="bat inspect compiles with NVRTC from cuda-bindings")
    config = "block_size_x=128,tile_size=4,between_method=1,use_method=2"
    code, out, err = run(["inspect", "-b", "pnpoly", "--config", config], capsys)
    assert code == 0, err
    assert "registers" in out and "spill_stores_bytes" in out and "sm_90" in out


def test_inspect_rejects_incomplete_config(capsys):
    code, _, err = run(["inspect", "-b", "pnpoly", "--config", "block_size_x=128"], capsys)
    assert code == 2 and "missing" in err and "tile_size" in err
