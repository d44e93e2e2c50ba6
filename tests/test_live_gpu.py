"""The live CuPy backend and ``bat record`` on a real GPU (skipped, with the reason, without one)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gpu_checks import failures

from bat.backends.emulated.session import EmulatedSession
from bat.backends.live.device import gpu_available
from bat.core.benchmark import benchmark_names, load_benchmark
from bat.core.dataset import DatasetMeta, Status
from bat.run.recording.engine import RecordPlan, open_journal, run_recording, sample_valid, to_dataset
from bat.run.recording.journal import Journal

pytestmark = pytest.mark.gpu

if not gpu_available():
    pytest.skip("needs CuPy and a CUDA device (none found)", allow_module_level=True)

KERNEL_BENCHMARKS = [n for n in benchmark_names() if load_benchmark(n).kernel.get("runner")]
MEASURED = {s.value for s in Status} - {Status.CONSTRAINT_VIOLATION.value, Status.MISSING.value}


@pytest.fixture(scope="module", params=KERNEL_BENCHMARKS)
def session(request):
    from bat.backends.live.session import LiveSession

    bench = load_benchmark(request.param)
    s = LiveSession(bench, bench.size("small"), repeats=7, timeout_s=20.0)
    yield s
    s.close()


def _plan(session, n: int, seed: int) -> RecordPlan:
    from bat.run.recording.live import provenance_meta

    work = sample_valid(session.bench.space, min(n, session.bench.space.count_valid()), seed)
    meta = DatasetMeta(**provenance_meta(session))
    return RecordPlan(space=session.bench.space, work=work, size_name="small", meta=meta,
                      device={"gpu": meta.gpu, "arch": session.arch})


def test_record_sample_at_small_size_verifies_and_resumes(session, tmp_path):
    plan = _plan(session, 6, seed=11)
    path = tmp_path / "j.jsonl"
    first = run_recording(plan, session, open_journal(plan, path, resume=False), workers=2, limit=3)
    assert first.measured_now == 3 and not first.complete
    second = run_recording(plan, session, open_journal(plan, path, resume=True), workers=2)
    assert second.complete and second.measured_now == len(plan.work.ids) - 3
    journal = Journal.read(path)
    ids = [r["id"] for r in journal.records]
    assert sorted(ids) == plan.work.ids.tolist() and len(set(ids)) == len(ids)
    frame = to_dataset(plan, journal).frame
    assert set(frame["status"]) <= MEASURED
    gate = EmulatedSession(session.bench, session.size)  # NVRTC for sm_90: what a GPU accepts
    bad = failures(frame, list(session.bench.space.names), gate.gpu_accepts)
    assert not bad, "\n".join(bad)  # every configuration a GPU accepts must be ok
    ok = frame[frame["status"] == "ok"]
    for row in ok.itertuples():
        assert len(row.times_ms) == 7 and all(t > 0 for t in row.times_ms)
        assert math.isclose(row.objective_ms, float(np.mean(row.times_ms)))
        assert row.registers > 0 and row.threads >= 1 and row.compile_ms > 0
    assert not session.broken


def test_live_backend_evaluates_and_reports_compile_errors_as_data(session):
    from bat.backends.live.backend import LiveBackend
    from bat.toolchain.compiling import cupy_compiler

    space = session.bench.space
    config = space.config(space.sample_valid(1, np.random.default_rng(2))[0])
    backend = LiveBackend(session)
    result = backend.evaluate(config)
    accepted = EmulatedSession(session.bench, session.size).gpu_accepts(config)
    assert result.ok or not accepted, result.message
    assert result.compile_ms and result.compile_ms > 0 and result.cost_s > 0
    assert session.info["gpu_name"] in backend.describe()
    job = session.job(0, config)
    broken = type(job)(job.key, job.source + "\nthis is not CUDA;\n", job.macros, job.arch)
    compiled = cupy_compiler(broken)
    assert not compiled.ok and "error" in compiled.log


def test_bat_run_goes_live_on_a_gpu():
    from bat.run.targets import make_target

    target, how = make_target("gemm")
    assert target.backend.name == "live" and "live" in how
    target.backend.close()
