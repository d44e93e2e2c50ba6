"""The emulated backend's parts: cache, argument checks, the shared procedure, reports, CLI, bat run."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from kernel_configs import CONFIGS

from bat.backends.emulated.build import cache_root, driver_source
from bat.backends.emulated.device import EmulatedDevice, report
from bat.backends.emulated.session import EmulatedSession
from bat.backends.procedure import allocate, check, execute
from bat.cli import main
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Status
from bat.core.kernel import scalar


def session_for(name: str, **options) -> EmulatedSession:
    bench = load_benchmark(name)
    return EmulatedSession(bench, bench.size("emulation"), **options)


def test_builds_are_cached_by_source_and_macros() -> None:
    session = session_for("pnpoly")
    runner, builder = session.runner, session.builder
    macros = runner.macros(CONFIGS["pnpoly"], session.size.values)
    first = builder.build(session.source, "kernel.cu", macros, runner.kernel_names, runner.symbol_names())
    again = builder.build(session.source, "kernel.cu", macros, runner.kernel_names, runner.symbol_names())
    other = builder.build(session.source, "kernel.cu", {**macros, "tile_size": 2}, runner.kernel_names,
                          runner.symbol_names())
    assert first.ok and again.cached and again.executable == first.executable
    assert other.ok and other.executable != first.executable


def test_shared_memory_regions_come_from_the_symbol_table() -> None:
    session = session_for("expdist")
    runner = session.runner
    macros = runner.macros(CONFIGS["expdist"], session.size.values)
    build = session.builder.build(session.source, "kernel.cu", macros, runner.kernel_names)
    names = {region.name: region.size for region in build.shared}
    bx, by = CONFIGS["expdist"]["block_size_x"], CONFIGS["expdist"]["block_size_y"]
    assert names["expdist_kernel::red"] == 8 * bx * by and names["reduce_kernel::red"] == 8 * 256
    assert names["expdist_kernel::sh_ax"] == 8 * bx * CONFIGS["expdist"]["tile_size_x"]


def test_the_driver_names_only_kernels_and_symbols() -> None:
    text = driver_source("kernel.cu", ["pnpoly_kernel"], ["vertices"])
    assert text.index('#include "bat_pch.h"') < text.index('#include "kernel.cu"')  # kernel macros come last
    assert 'bat_emu::kernel("pnpoly_kernel", pnpoly_kernel)' in text and "float" not in text


def test_a_scalar_of_the_wrong_type_is_refused_with_the_kernels_signature() -> None:
    session = session_for("gemm")
    original = session.runner.launches

    def float64_alpha(config, size):
        (launch,) = original(config, size)
        return [replace(launch, args=(*launch.args[:3], scalar(np.float64(0.75)), launch.args[4]))]

    session.runner.launches = float64_alpha
    result = session.verify(CONFIGS["gemm"]).result
    assert result.status is Status.RUNTIME_ERROR
    assert "gemm_kernel: parameter 4 is f32; the runner passes f64" in result.message


def test_runs_restore_what_they_read_and_poison_what_they_write() -> None:
    session = session_for("gemm")
    runner = session.runner
    config = CONFIGS["gemm"]
    launches = runner.launches(config, session.size.values)
    macros = runner.macros(config, session.size.values)
    build = session.builder.build(session.source, "kernel.cu", macros, runner.kernel_names)

    def two_runs() -> dict:
        device = EmulatedDevice(build)
        try:
            allocate(device, runner, session.host)
            return execute(device, runner, session.host, launches, warmups=1, repeats=1).outputs
        finally:
            device.close()

    assert check(runner, two_runs(), session.reference).ok  # C restored before the second run
    runner.reset_names = lambda: []  # C is then poisoned instead: the run reads NaN
    assert not check(runner, two_runs(), session.reference).ok


def test_reports_say_what_went_wrong_in_one_line() -> None:
    asan = "\n".join([
        "=================================================================",
        "==24993==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x632000014100 at pc 0x55ffc0610273 "
        "bp 0x7f5531b55ea0 sp 0x7f5531b55e98",
        "WRITE of size 4 at 0x632000014100 thread T0",
        f"    #0 0x55ffc0610272 in pnpoly_kernel {cache_root()}/bin/f2/.build-z8yfw2ez/kernel.cu:63",
        "    #1 0x55ffc0611234 in bat_emu::Binder<int*, float2 const*>::call(void*) bat_launch.h:95",
        "0x632000014100 is located 84 bytes to the right of 80044-byte region [0x632000000800,0x6320000140ac)",
        "bat-emu: during kernel pnpoly_kernel (launch 1), block (78, 0, 0), thread (0, 0, 0)",
    ])
    line = report(asan, 1)
    assert line == ("AddressSanitizer: heap-buffer-overflow; WRITE of size 4; located 84 bytes to the right of "
                    "80044-byte region; at pnpoly_kernel kernel.cu:63; during kernel pnpoly_kernel (launch 1), "
                    "block (78, 0, 0), thread (0, 0, 0)")
    ubsan = "kernel.cu:41:25: runtime error: index 1218 out of bounds for type 'float [1218]'\n"
    assert report(ubsan, 1) == "kernel.cu:41:25: runtime error: index 1218 out of bounds for type 'float [1218]'"
    assert report("bat-emu: barrier divergence in kernel k\n", 3) == "barrier divergence in kernel k"
    assert report("", -11) == "the emulation exited with status -11"


def test_bat_verify_says_correctness_only_first_and_fails_on_a_broken_kernel(tmp_path, capsys) -> None:
    config = json.dumps(CONFIGS["pnpoly"])
    assert main(["verify", "--benchmark", "pnpoly", "--config", config, "--first", "--random", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("emulated on the CPU: results are correctness only, never timings")
    assert "3 of 3 configurations ok" in out and "uniform sample (seed 0)" in out
    broken = tmp_path / "kernel.cu"
    source = load_benchmark("pnpoly").directory.joinpath("kernel.cu").read_text()
    broken.write_text(source.replace("if (i < n_points) bitmap[i]", "bitmap[i]"))
    assert main(["verify", "--benchmark", "pnpoly", "--config", config, "--source", str(broken)]) == 3
    out = capsys.readouterr().out
    assert "runtime_error" in out and "heap-buffer-overflow" in out and "0 of 1 configurations ok" in out


def test_bat_verify_refuses_a_configuration_outside_the_space(capsys) -> None:
    bad = json.dumps({**CONFIGS["pnpoly"], "tile_size": 3})
    assert main(["verify", "--benchmark", "pnpoly", "--config", bad]) == 2


def test_bat_run_emulated_records_statuses_and_never_a_time(tmp_path, capsys) -> None:
    from bat.core.trace import read_trace

    out = tmp_path / "trace.parquet"
    code = main(["run", "--backend", "emulated", "--tuner", "reference:random", "--benchmark", "pnpoly",
                 "--budget", "2", "--seed", "3", "--out", str(out)])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("emulated on the CPU: results are correctness only, never timings")
    assert any("configurations verified correct: 2 of 2 (no timings)" in line for line in lines)
    assert any("time spent checking on this machine" in line for line in lines)
    frame, meta = read_trace(out)
    assert meta["backend"] == "emulated" and list(frame["status"]) == ["ok", "ok"]
    assert frame["objective_ms"].isna().all() and frame["best_so_far_ms"].isna().all()


def test_what_cannot_be_emulated_is_refused_in_one_line() -> None:
    from bat.core.errors import BackendError
    from bat.run.targets import TargetRequest, make_target

    with pytest.raises(BackendError, match="no CUDA kernel"):
        make_target("coulomb", backend="emulated")
    with pytest.raises(BackendError, match="performance counters"):
        make_target("pnpoly", backend="emulated", request=TargetRequest(counters=True))
