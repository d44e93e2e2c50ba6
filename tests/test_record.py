"""The recording engine without a GPU: work lists, journal, resume after kill -9, compile pool.

The device is replaced by ``ReplayExecutor``, which stands in for the GPU: it
returns the times recorded in the published pnpoly RTX 3090 data (replay)
instead of running kernels. Where a test says so, its compiler stands in for
NVRTC too (``stand_in_compiler``: no compilation, an empty cubin); the compile
pool test uses the real NVRTC (cuda-bindings) on the real pnpoly kernel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bat.backends.replay import ReplayBackend
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Dataset, DatasetMeta, Status
from bat.core.errors import DatasetError
from bat.core.problem import EvalResult
from bat.run.recording.engine import (
    RecordPlan,
    WorkList,
    all_valid,
    open_journal,
    run_recording,
    sample_valid,
    to_dataset,
)
from bat.run.recording.journal import Journal
from bat.toolchain.compiling import CompileJob, CompileResult, nvrtc_compiler

TESTS = Path(__file__).resolve().parent
PNPOLY = TESTS.parent / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"  # published, imported


def stand_in_compiler(job: CompileJob) -> CompileResult:
    """Stands in for NVRTC (CPU-only): compiles nothing, returns an empty cubin."""
    return CompileResult(True, "", 0.0, b"")


class ReplayExecutor:
    """Stands in for the GPU: answers with the times recorded in a published dataset."""

    broken: str | None = None

    def __init__(self, dataset: Dataset, *, compiler=stand_in_compiler, delay_s: float = 0.0,
                 broken_macro: Mapping[int, dict] | None = None) -> None:
        self.replay = ReplayBackend(dataset)
        self.compiler = compiler
        self.delay_s = delay_s
        self.broken_macro = dict(broken_macro or {})
        self.measured: list[dict] = []
        from bat.core.kernel import load_runner

        self.runner = load_runner("pnpoly")
        bench = load_benchmark("pnpoly")
        self.source = (bench.directory / "kernel.cu").read_text()
        self.size = bench.problem_size

    def job(self, key: int, config: Mapping[str, Any]) -> CompileJob:
        macros = {**self.runner.macros(config, self.size), **self.broken_macro.get(key, {})}
        return CompileJob(key, self.source, macros, "sm_90")

    def measure(self, config: Mapping[str, Any], compiled: CompileResult) -> EvalResult:
        time.sleep(self.delay_s)
        self.measured.append(dict(config))
        return self.replay.evaluate(config)


@pytest.fixture(scope="module")
def published() -> Dataset:
    return Dataset.load(PNPOLY)


def make_plan(work: WorkList) -> RecordPlan:
    space = load_benchmark("pnpoly").space
    meta = DatasetMeta(benchmark="pnpoly", space_hash=space.space_hash, gpu="RTX_3090",
                       gpu_name="replayed published data", problem_size={"n": 1},
                       source="test: replay stands in for the GPU")
    return RecordPlan(space=space, work=work, size_name="published", meta=meta,
                      device={"gpu": "RTX_3090"})


# -- work lists ------------------------------------------------------------------------------
def test_sample_is_reproducible_by_seed_and_valid():
    space = load_benchmark("pnpoly").space
    a, b, c = (sample_valid(space, 50, s) for s in (7, 7, 8))
    assert np.array_equal(a.ids, b.ids)
    assert not np.array_equal(a.ids, c.ids)
    assert len(np.unique(a.ids)) == 50 and np.all(np.diff(a.ids) > 0)
    assert space.is_valid(space.from_ids(a.ids)).all()


def test_all_valid_lists_every_valid_configuration_in_id_order():
    space = load_benchmark("pnpoly").space
    work = all_valid(space)
    assert len(work.ids) == space.count_valid()
    assert np.all(np.diff(work.ids) > 0)
    assert space.is_valid(space.from_ids(work.ids)).all()


# -- journal ---------------------------------------------------------------------------------
def test_journal_cuts_a_torn_last_line_and_refuses_to_overwrite(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal.create(path, {"benchmark": "x"})
    journal.append({"id": 1, "status": "ok"})
    journal.append({"id": 2, "status": "ok"})
    journal.close()
    with open(path, "ab") as fh:
        fh.write(b'{"id": 3, "sta')  # what a kill during the write leaves
    reopened = Journal.open(path)
    assert [r["id"] for r in reopened.records] == [1, 2]
    reopened.append({"id": 3, "status": "ok"})
    reopened.close()
    assert [r["id"] for r in Journal.read(path).records] == [1, 2, 3]
    with pytest.raises(DatasetError, match="exists"):
        Journal.create(path, {"benchmark": "x"})


# -- recording -------------------------------------------------------------------------------
def test_limit_stops_cleanly_with_a_partial_dataset_and_resume_finishes(tmp_path, published):
    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, 30, 1))
    path = tmp_path / "r.journal.jsonl"
    first = run_recording(plan, ReplayExecutor(published), open_journal(plan, path, resume=False),
                          workers=0, limit=12)
    assert (first.measured_now, first.done, first.complete) == (12, 12, False)
    assert "limit" in first.stopped
    part = to_dataset(plan, Journal.read(path))
    assert part.meta.partial and part.meta.n_expected == 30 and len(part.frame) == 12
    executor = ReplayExecutor(published)
    second = run_recording(plan, executor, open_journal(plan, path, resume=True), workers=0)
    assert second.complete and second.measured_now == 18 and second.stopped == ""
    assert len(executor.measured) == 18
    full = to_dataset(plan, Journal.read(path))
    assert not full.meta.partial and len(full.frame) == 30
    # every row carries what the stand-in device recorded for that configuration
    replay = ReplayBackend(published)
    for row in full.frame.head(10).to_dict("records"):
        expected = replay.evaluate({p: row[p] for p in plan.space.names})
        assert row["status"] == expected.status.value
        assert row["times_ms"] == list(expected.times_ms)


def test_resume_refuses_a_different_selection(tmp_path, published):
    space = load_benchmark("pnpoly").space
    path = tmp_path / "r.journal.jsonl"
    plan = make_plan(sample_valid(space, 10, 1))
    run_recording(plan, ReplayExecutor(published), open_journal(plan, path, resume=False),
                  workers=0, limit=3)
    with pytest.raises(DatasetError, match="selection"):
        open_journal(make_plan(sample_valid(space, 10, 2)), path, resume=True)
    with pytest.raises(DatasetError, match="exists"):
        open_journal(plan, path, resume=False)


def _child(journal: str, n: int, seed: int) -> None:
    """Run in a subprocess by the kill -9 test: records slowly until killed."""
    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, n, seed))
    executor = ReplayExecutor(Dataset.load(PNPOLY), delay_s=0.02)
    run_recording(plan, executor, open_journal(plan, journal, resume=False), workers=0)


def test_kill_9_mid_recording_then_resume_loses_and_repeats_nothing(tmp_path, published):
    n, seed = 120, 3
    path = tmp_path / "r.journal.jsonl"
    code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); import test_record; "
            f"test_record._child({str(path)!r}, {n}, {seed})")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=TESTS.parent)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= 21:  # header + 20 records
            break
        assert proc.poll() is None, "the recording subprocess ended before it was killed"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = Journal.read(path).records
    assert 20 <= len(before) < n, "the kill did not land mid-recording"

    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, n, seed))
    executor = ReplayExecutor(published)
    outcome = run_recording(plan, executor, open_journal(plan, path, resume=True), workers=0)
    assert outcome.complete and outcome.measured_now == n - len(before)
    done_before = {json.dumps(r["config"], sort_keys=True) for r in before}
    resumed = {json.dumps(c, sort_keys=True) for c in executor.measured}
    assert not done_before & resumed, "a finished configuration was measured again"

    journal = Journal.read(path)
    assert journal.records[: len(before)] == before  # nothing finished was rewritten
    ids = [r["id"] for r in journal.records]
    assert len(ids) == len(set(ids)) == n
    dataset = to_dataset(plan, journal)
    assert not dataset.meta.partial
    got = plan.space.to_ids(plan.space.encode(dataset.configs()))
    assert np.array_equal(got, plan.work.ids)


def test_compile_pool_returns_compile_errors_as_data(tmp_path, published):
    """Real NVRTC (cuda-bindings) in 2 worker processes; two configurations get a broken macro."""
    pytest.importorskip("cuda.bindings.nvrtc", reason="needs cuda-bindings (uv group nvrtc)")
    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, 6, 5))
    broken = {int(plan.work.ids[1]): {"tile_size": "2+"}, int(plan.work.ids[4]): {"use_method": "("}}
    executor = ReplayExecutor(published, compiler=nvrtc_compiler, broken_macro=broken)
    path = tmp_path / "r.journal.jsonl"
    outcome = run_recording(plan, executor, open_journal(plan, path, resume=False), workers=2)
    assert outcome.complete
    records = Journal.read(path).records
    assert [r["id"] for r in records] == plan.work.ids.tolist()  # pool results come in order
    for rec in records:
        if rec["id"] in broken:
            assert rec["status"] == Status.COMPILE_ERROR.value
            assert "error" in rec["message"] and rec["compile_ms"] > 0
            assert rec["times_ms"] == [] and rec["objective_ms"] is None
        else:
            assert rec["status"] != Status.COMPILE_ERROR.value
    assert len(executor.measured) == 4  # configurations that failed to compile never ran
    dataset = to_dataset(plan, Journal.read(path))
    assert (dataset.frame["status"] == "compile_error").sum() == 2


def test_max_minutes_stops_between_configurations(tmp_path, published):
    plan = make_plan(sample_valid(load_benchmark("pnpoly").space, 40, 2))
    path = tmp_path / "r.journal.jsonl"
    outcome = run_recording(plan, ReplayExecutor(published, delay_s=0.05),
                            open_journal(plan, path, resume=False), workers=0, max_seconds=0.2)
    assert "time limit" in outcome.stopped and not outcome.complete
    assert 1 <= outcome.measured_now < 40
    assert len(Journal.read(path).records) == outcome.measured_now


def test_gpu_ids_from_device_names():
    from bat.backends.live.device import short_gpu_name

    assert short_gpu_name("NVIDIA GeForce RTX 3090") == "RTX_3090"
    assert short_gpu_name("NVIDIA H100 80GB HBM3") == "H100_80GB_HBM3"
    assert short_gpu_name("Tesla V100-SXM2-16GB") == "V100_SXM2_16GB"


def test_bat_record_without_cupy_says_what_is_missing(capsys):
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed here: the GPU tests cover bat record")
    from bat.cli import main

    assert main(["record", "--benchmark", "gemm", "--sample", "3", "--size", "small"]) == 2
    assert "CuPy" in capsys.readouterr().err
    assert main(["record", "--benchmark", "gemm", "--size", "small"]) == 2
    assert "exactly one of --all and --sample" in capsys.readouterr().err


def test_bat_record_of_a_command_benchmark_runs_in_chunks(tmp_path, capsys):
    """matmul_c has a command section and no CUDA kernel: bat record hands it to the command backend."""
    import shutil

    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler (cc) for the matmul_c command benchmark")
    from bat.cli import main

    out = tmp_path / "m.parquet"
    args = ["record", "--benchmark", "matmul_c", "--sample", "3", "--size", "small", "--out", str(out)]
    assert main([*args, "--limit", "2"]) == 0
    assert "stopped: limit of 2" in capsys.readouterr().out
    assert Dataset.read_meta(out).partial
    assert main([*args, "--resume"]) == 0
    done = Dataset.load(out)
    assert not done.meta.partial and len(done.frame) == 3 and done.meta.n_expected == 3
    assert (done.frame["status"] == "ok").all()
