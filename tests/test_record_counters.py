"""``bat record --counters`` without a GPU: the profiled command, the engine, the dataset, the errors.

No GPU and no ncu are here. ``ReplayExecutor`` (tests/test_record.py) stands
in for the GPU: it answers with the times of the published pnpoly RTX 3090
data. ncu is the stand-in script of tests/test_profile_ncu.py, which writes
a FIXTURE IN NCU'S DOCUMENTED CSV LAYOUT (not a recorded ncu run) to the log
file it is given; wrapped here so that it also logs the command line it got.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_profile_ncu import FULL, fake_ncu, fixture_csv
from test_record import PNPOLY as PNPOLY_DATA
from test_record import ReplayExecutor, make_plan

from bat.backends.live.device import gpu_available
from bat.core.benchmark import load_benchmark
from bat.core.counters import METRICS, SPEC_METRICS
from bat.core.dataset import Dataset, counter_columns
from bat.core.errors import BackendError, DatasetError, MissingDependencyError
from bat.run.profile_one import parse_object
from bat.run.recording.engine import open_journal, run_recording, sample_valid, to_dataset
from bat.run.recording.journal import Journal
from bat.toolchain.profiler import CounterProfiler, profile_one_command

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the stand-in ncu is a POSIX shell script")

CONFIG = {"block_size_x": 256, "tile_size": 4, "between_method": 1, "use_method": 2}  # a valid pnpoly one


@pytest.fixture(scope="module")
def published() -> Dataset:
    return Dataset.load(PNPOLY_DATA)


def logging_ncu(tmp_path: Path, csv: str) -> tuple[str, Path]:
    """The stand-in ncu of test_profile_ncu, behind a wrapper that logs each call's arguments."""
    inner = fake_ncu(tmp_path, csv)
    log = tmp_path / "ncu-calls.txt"
    wrapper = tmp_path / "bin" / "ncu"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{log}'\necho '--end--' >> '{log}'\n"
                       f"exec '{inner}' \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper), log


def calls(log: Path) -> list[list[str]]:
    out, current = [], []
    for line in log.read_text().splitlines():
        if line == "--end--":
            out.append(current)
            current = []
        else:
            current.append(line)
    return out


PNPOLY = load_benchmark("pnpoly")


def test_profile_one_command_line():
    small = PNPOLY.size("small")
    cmd = profile_one_command(PNPOLY, CONFIG, size=small, seed=3)
    assert cmd[:3] == [sys.executable, "-m", "bat.run.profile_one"]
    args = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert args == {"--benchmark": str(PNPOLY.path),
                    "--config": json.dumps(CONFIG, sort_keys=True, separators=(",", ":")),
                    "--size": json.dumps(dict(small.values), sort_keys=True, separators=(",", ":")),
                    "--seed": "3"}
    assert json.loads(args["--config"]) == CONFIG
    assert json.loads(args["--size"]) == dict(small.values)


def test_profile_one_parses_its_configuration_and_runs_as_a_module():
    assert parse_object(json.dumps(CONFIG), "--config") == CONFIG
    with pytest.raises(BackendError, match="not JSON"):
        parse_object("{block_size_x: 32}", "--config")
    args = [sys.executable, "-m", "bat.run.profile_one", "--benchmark", "pnpoly", "--config", "[1]"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "must be a JSON object" in run.stderr


@pytest.mark.gpu
def test_profile_one_launches_a_configuration_on_the_gpu():
    if not gpu_available():
        pytest.skip("needs CuPy and a CUDA device (none found)")
    run = subprocess.run(profile_one_command(PNPOLY, CONFIG, size=PNPOLY.size("small"), seed=0),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


@pytest.mark.gpu
def test_real_ncu_counters_of_one_configuration():
    if not gpu_available() or shutil.which("ncu") is None:
        pytest.skip("needs CuPy, a CUDA device and Nsight Compute's ncu on PATH")
    got = CounterProfiler(PNPOLY, size=PNPOLY.size("small"), seed=0).profile(CONFIG)
    assert got.counters[METRICS["INST_EXE"]] > 0 and got.profile_ms > 0
    assert set(got.counters) | set(got.missing) == set(SPEC_METRICS)
    from bat.backends.live.backend import LiveBackend
    from bat.backends.live.session import LiveSession

    backend = LiveBackend(LiveSession(PNPOLY, PNPOLY.size("small"), repeats=2), counters=True)
    try:
        result = backend.evaluate(CONFIG)
    finally:
        backend.close()
    assert result.ok and result.extra["profile_ms"] > 0 and "profiled" in backend.describe()
    assert result.extra[METRICS["INST_EXE"]] == got.counters[METRICS["INST_EXE"]]  # same work, same count


@pytest.mark.gpu
def test_bat_run_profile_live_learns_online_with_the_devices_core_count(tmp_path, capsys):
    """``bat run --tuner profile`` on a GPU: every evaluation profiled, online counters, cores from the device."""
    if not gpu_available() or shutil.which("ncu") is None:
        pytest.skip("needs CuPy, a CUDA device and Nsight Compute's ncu on PATH")
    from bat.backends.live.device import device_info
    from bat.cli import main

    info = device_info()
    code = main(["run", "--tuner", "profile", "--benchmark", "pnpoly", "--backend", "live", "--budget", "6",
                 "--out", str(tmp_path / "t.parquet")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert info["cuda_cores"] and info["cuda_cores"] % info["sm_count"] == 0
    assert "online counters" in captured.err and f"{info['cuda_cores']} CUDA cores" in captured.err


def test_ncu_gets_the_metrics_the_kernel_filter_and_the_profiled_command(tmp_path):
    ncu, log = logging_ncu(tmp_path, fixture_csv(FULL))
    profiler = CounterProfiler(PNPOLY, size=PNPOLY.size(), seed=0, ncu=ncu)
    got = profiler.profile(CONFIG)
    (argv,) = calls(log)
    assert argv[argv.index("--metrics") + 1].split(",") == list(SPEC_METRICS)
    assert argv[argv.index("--kernel-name") + 1] == "regex:^pnpoly_kernel$"
    assert argv[argv.index("--launch-count") + 1] == "1"
    start = argv.index(sys.executable)
    assert argv[start:] == profile_one_command(PNPOLY, CONFIG, size=PNPOLY.size(), seed=0)
    assert got.counters[METRICS["DRAM_RT"]] == 1234567.0 and got.missing == ()
    assert got.extra()["profile_ms"] == got.profile_ms > 0


def test_recording_with_counters_fills_counter_columns_profile_ms_and_names_missing(tmp_path, published):
    partial = dict(FULL)
    del partial[METRICS["DRAM_RT"]]  # a metric this (stand-in) GPU does not have
    partial[METRICS["SM_E"]] = "n/a"
    ncu, log = logging_ncu(tmp_path, fixture_csv(partial))
    profiler = CounterProfiler(PNPOLY, size=PNPOLY.size(), seed=0, ncu=ncu)
    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, 8, 4))
    plan.counters = profiler.metrics
    path = tmp_path / "r.journal.jsonl"
    executor = ReplayExecutor(published)
    outcome = run_recording(plan, executor, open_journal(plan, path, resume=False), workers=0,
                            profiler=profiler)
    assert outcome.complete
    dataset = to_dataset(plan, Journal.read(path))
    frame = dataset.frame
    ok = frame["status"] == "ok"
    assert ok.sum() == len(calls(log)) >= 1  # one profiled run per ok configuration, none for others
    assert set(counter_columns(frame)) == set(SPEC_METRICS)
    assert (frame.loc[ok, METRICS["L2_WT"]] == 1234567.0).all()
    assert frame.loc[~ok, METRICS["L2_WT"]].isna().all()
    for metric in (METRICS["DRAM_RT"], METRICS["SM_E"]):  # missing: NaN columns, never zero
        assert frame[metric].isna().all()
    assert (frame.loc[ok, "profile_ms"] > 0).all() and frame.loc[~ok, "profile_ms"].isna().all()
    info = dataset.meta.extra["counters"]
    assert info["missing"] == {METRICS["DRAM_RT"]: int(ok.sum()), METRICS["SM_E"]: int(ok.sum())}
    assert info["profiled"] == int(ok.sum()) and info["metrics"] == list(SPEC_METRICS)
    assert METRICS["DRAM_RT"] in dataset.meta.notes
    # the timed values are the stand-in device's own, untouched by profiling
    assert np.allclose(frame.loc[ok, "objective_ms"],
                       [executor.replay.evaluate({p: r[p] for p in plan.space.names}).objective_ms
                        for r in frame[ok].to_dict("records")])
    saved = tmp_path / "c.parquet"
    dataset.save(saved)
    again = Dataset.load(saved)
    assert set(again.counters) == set(SPEC_METRICS) and "profile_ms" in again.frame.columns


def test_resume_refuses_to_mix_recordings_with_and_without_counters(tmp_path, published):
    ncu, _ = logging_ncu(tmp_path, fixture_csv(FULL))
    profiler = CounterProfiler(PNPOLY, size=PNPOLY.size(), seed=0, ncu=ncu)
    space = load_benchmark("pnpoly").space
    plan = make_plan(sample_valid(space, 6, 1))
    path = tmp_path / "r.journal.jsonl"
    run_recording(plan, ReplayExecutor(published), open_journal(plan, path, resume=False), workers=0, limit=2)
    with_counters = make_plan(sample_valid(space, 6, 1))
    with_counters.counters = profiler.metrics
    with pytest.raises(DatasetError, match="counters"):
        open_journal(with_counters, path, resume=True)
    with pytest.raises(DatasetError, match="plan names 0"):
        run_recording(plan, ReplayExecutor(published), open_journal(plan, path, resume=True), profiler=profiler)


def test_missing_ncu_is_a_clear_error_before_anything_is_measured(tmp_path, monkeypatch, capsys):
    with pytest.raises(MissingDependencyError, match="not on PATH"):
        CounterProfiler(PNPOLY, size=PNPOLY.size(), seed=0, ncu="ncu-that-does-not-exist-here")
    from bat.cli import main

    monkeypatch.setenv("PATH", str(tmp_path))  # no ncu; the check comes before CuPy and the GPU
    out = tmp_path / "p.parquet"
    args = ["record", "--benchmark", "pnpoly", "--sample", "3", "--counters", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "ncu" in err and "not on PATH" in err
    assert not out.exists() and not list(tmp_path.glob("*.journal.jsonl"))
