"""Four defects that let broken kernels pass, each with the test that failed before its fix.

1. Every output was restored from its (zero) host copy before each run, so poisoning
   never happened and an output a kernel never wrote passed where the expected value is 0.
2. N-body positions were compared whole at 1e-6, larger than the whole update v' dt.
3. The live GPU test passed when one of six configurations was ok, and counted incorrect
   and crashed configurations as passes.
4. ``#pragma unroll`` got a macro's name, not its value: NVRTC ignores it, nvcc rejects it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pandas as pd
import pytest
from gpu_checks import failures
from kernel_configs import CONFIGS

from bat.core.benchmark import load_benchmark
from bat.core.kernel import compare, load_runner
from bat.toolchain.nvrtc import macro_options

BENCHMARKS = list(CONFIGS)


# -- 1. poison what a run writes, restore only what it reads and writes ------------------------
@pytest.mark.parametrize("name", BENCHMARKS)
def test_outputs_are_poisoned_unless_a_run_reads_them(name: str) -> None:
    runner = load_runner(name)
    resets, poisoned = set(runner.reset_names()), set(runner.poison_names())
    assert not resets & poisoned
    assert set(runner.output_names()) <= resets | poisoned
    assert resets == ({"c"} if name == "gemm" else set())  # only GEMM's C is read (beta * C)


def test_an_output_written_only_where_it_is_not_zero_fails() -> None:
    from bat.backends.emulated.session import EmulatedSession

    bench = load_benchmark("pnpoly")
    session = EmulatedSession(bench, bench.size("emulation"))
    inside_only = session.source.replace("if (i < n_points) bitmap[i] = c[t] & 1;",
                                         "if (i < n_points && (c[t] & 1)) bitmap[i] = 1;")
    reference = session.reference["bitmap"]
    assert 0.3 < 1 - reference.mean() < 0.9  # many points are outside: expected 0, never written
    checked = session.verify(CONFIGS["pnpoly"], source=inside_only)
    assert checked.result.status.value == "incorrect" and "got -1" in checked.result.message


# -- 2. N-body: a kernel that never moves the bodies fails ---------------------------------------
def test_nbody_check_fails_bodies_that_never_move() -> None:
    runner = load_runner("nbody")
    size = {"n_bodies": 512}
    inputs = runner.make_inputs(size, 0)
    ref = runner.reference(inputs, size)
    good = {"vel_out": ref["vel_out"].astype("<f4"), "pos_out": ref["pos_out"].astype("<f4")}
    check = runner.verify(good, ref)
    assert check.ok and check.error_ratio <= 0.6, check  # float32 rounding of p + v' dt: half a spacing
    still = {"vel_out": good["vel_out"], "pos_out": inputs["pos4"].copy()}
    old_check = compare("pos_out", still["pos_out"], ref["pos_out"], rtol=1e-6, atol=1e-6)
    assert old_check.ok  # what passed before: whole positions at 1e-6
    result = runner.verify(still, ref)
    assert not result.ok and "displacement" in result.message


# -- 3. the GPU tests require every configuration a GPU accepts to be ok -------------------------
def test_gpu_recording_check_fails_on_one_bad_configuration() -> None:
    frame = pd.DataFrame({"x": [1, 2, 3, 4, 5, 6],
                          "status": ["ok", "ok", "incorrect", "ok", "runtime_error", "compile_error"],
                          "message": ["", "", "3 of 9 elements differ", "", "illegal address", "too much shared"]})
    measured = {"ok", "incorrect", "runtime_error", "compile_error", "timeout"}
    assert set(frame["status"]) <= measured and (frame["status"] == "ok").any()  # what passed before
    refused = {6}  # a configuration NVRTC rejects is not run on a GPU either
    bad = failures(frame, ["x"], lambda c: c["x"] not in refused)
    assert [line.split("}")[0] for line in bad] == ["{'x': 3", "{'x': 5"]
    assert "incorrect" in bad[0] and "runtime_error" in bad[1]
    assert failures(frame[frame["status"] == "ok"], ["x"], lambda c: True) == []


# -- 4. unroll pragmas carry numbers ------------------------------------------------------------
def compiled_source(name: str) -> tuple[str, list[str]]:
    """The kernel source as compiled for CONFIGS[name], and its options (macros, the include folder)."""
    runner = load_runner(name)
    macros = runner.macros(CONFIGS[name], dict(load_benchmark(name).size("emulation").values))
    source = runner.prepare_source(runner.source_path().read_text(), CONFIGS[name])
    return source, [*macro_options(macros), "-I", str(runner.bench.directory)]


def preprocessed(name: str) -> str:
    source, options = compiled_source(name)
    out = subprocess.run(["g++", "-E", "-P", "-x", "c++", *options, "-"], input=source,
                         capture_output=True, text=True, check=True)
    return out.stdout


@pytest.mark.parametrize("name", BENCHMARKS)
def test_unroll_pragmas_get_numbers_after_preprocessing(name: str) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    arguments = re.findall(r"#pragma unroll(.*)", preprocessed(name))
    assert arguments or name == "dedispersion_milo", f"{name} has no unroll pragma"  # its one pragma: factor 0
    assert all(re.fullmatch(r"\s*\d*\s*", a) for a in arguments), arguments


@pytest.mark.parametrize("name", BENCHMARKS)
def test_nvcc_compiles_every_kernel(name: str, tmp_path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (NVRTC compiles are checked in test_kernels_compile.py)")
    source, options = compiled_source(name)
    (tmp_path / "k.cu").write_text(source)
    out = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-std=c++17", "-o", str(tmp_path / "k.cubin"), *options,
                          str(tmp_path / "k.cu")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
