"""The FAIR Benchmark Hub's kernels as benchmarks: convolution_milo and dedispersion_milo.

Each space file agrees with the hub's T1 file shipped beside it, configuration for
configuration; the HIP twins run through the emulated HIP layer (bat.backends.emulated.hip)
and give outputs bit-identical to their CUDA kernels on the configurations CI checks; a HIP
source that names something the layer lacks is refused in one line naming it, and a broken
HIP twin is caught like a broken CUDA kernel.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from kernel_configs import CONFIGS

from bat.backends.emulated.edges import EdgeSessions
from bat.backends.emulated.selection import ci_selection
from bat.backends.emulated.session import EmulatedSession
from bat.cli import main
from bat.core.benchmark import load_benchmark
from bat.core.dataset import Status
from bat.core.errors import BackendError
from bat.core.spacefile import space_from_dict
from bat.core.t1 import t1_to_space

MILO = {"convolution_milo": 4362, "dedispersion_milo": 11130}  # the hub's brute-force caches hold these


def configurations(space) -> set[tuple]:
    rows = space.unrank_valid(np.arange(space.count_valid()))
    return {tuple(space.config(row)[n] for n in space.names) for row in rows}


@pytest.mark.parametrize("name", sorted(MILO))
def test_space_is_the_t1_file_configuration_for_configuration(name: str) -> None:
    bench = load_benchmark(name)
    path = bench.directory / bench.kernel["t1_file"]
    t1 = space_from_dict(t1_to_space(json.loads(path.read_text()), str(path), name), str(path))
    assert t1.names == bench.space.names
    assert [p.values for p in t1.parameters] == [p.values for p in bench.space.parameters]
    ours = configurations(bench.space)
    assert len(ours) == bench.space.count_valid() == MILO[name] == bench.published["constrained"]
    assert ours == configurations(t1)


@pytest.mark.parametrize("name", sorted(MILO))
def test_hip_twin_is_the_cuda_kernel_after_the_hip_include(name: str) -> None:
    bench = load_benchmark(name)
    cuda = (bench.directory / bench.kernel["source"]).read_text()
    hip = (bench.directory / bench.kernel["hip_source"]).read_text()
    assert hip == '#include "hip/hip_runtime.h"\n' + cuda


@pytest.mark.parametrize("name", [pytest.param("convolution_milo", marks=pytest.mark.slow),  # over 10 CPU s
                                  "dedispersion_milo"])
def test_hip_twin_gives_the_cuda_outputs_bit_for_bit(name: str) -> None:
    bench = load_benchmark(name)
    sessions = EdgeSessions(bench, bench.size("emulation"))  # as bat verify --ci: each at its edge size
    hip_name = bench.kernel["hip_source"]
    hip = (bench.directory / hip_name).read_text()
    compared = 0
    for item in ci_selection(bench, sessions.base, accept=sessions.gpu_accepts):
        _, cuda_run = sessions.verify(item.config)
        _, hip_run = sessions.verify(item.config, source=hip, source_name=hip_name)
        assert (cuda_run.result.status, hip_run.result.status) == (Status.OK, Status.OK), hip_run.result.message
        for out in sessions.first.runner.output_names():
            assert cuda_run.outputs[out].tobytes() == hip_run.outputs[out].tobytes(), (item.why, out)
        compared += 1
    assert compared >= 4


def test_hip_names_run_through_the_layer() -> None:
    """HIP's own index names (not used by the twins) give the same outputs as CUDA's."""
    bench = load_benchmark("convolution_milo")
    session = EmulatedSession(bench, bench.size("emulation"))
    hip = (bench.directory / bench.kernel["hip_source"]).read_text()
    renamed = (hip.replace("threadIdx.y", "hipThreadIdx_y").replace("threadIdx.x", "hipThreadIdx_x")
               .replace("blockIdx.y", "hipBlockIdx_y").replace("blockIdx.x", "hipBlockIdx_x"))
    assert renamed.count("hipThreadIdx_x") >= 2
    config = CONFIGS["convolution_milo"]
    plain, named = session.verify(config), session.verify(config, source=renamed, source_name="renamed.cu.hip")
    assert named.ok, named.result.message
    assert named.outputs["output"].tobytes() == plain.outputs["output"].tobytes()


def test_broken_hip_twin_is_caught() -> None:
    bench = load_benchmark("dedispersion_milo")
    session = EmulatedSession(bench, bench.size("emulation"))
    hip = (bench.directory / bench.kernel["hip_source"]).read_text()
    broken = hip.replace("if (dm < nr_dms) {\n\n                    float", "{\n\n                    float")
    assert broken != hip
    result = session.verify(CONFIGS["dedispersion_milo"], source=broken, source_name="dedispersion.cu.hip").result
    assert result.status is Status.RUNTIME_ERROR and "heap-buffer-overflow" in result.message, result.message
    assert "dedispersion.cu.hip" in result.message


@pytest.mark.parametrize(("edit", "named"), [
    (("int tx = threadIdx.x;", "int tx = threadIdx.x; float lane = hipWarpSize;"), "uses hipWarpSize"),
    (("int tx = threadIdx.x;", "int tx = threadIdx.x; hipMemsetAsync(output, 0, 4, 0);"), "uses hipMemsetAsync"),
    (('#include "hip/hip_runtime.h"', '#include "hip/hip_runtime.h"\n#include <hip/hip_cooperative_groups.h>'),
     "includes hip/hip_cooperative_groups.h"),
])
def test_hip_source_with_what_the_layer_lacks_is_one_line_naming_it(tmp_path, capsys, edit, named) -> None:
    bench = load_benchmark("convolution_milo")
    text = (bench.directory / bench.kernel["hip_source"]).read_text()
    assert edit[0] in text
    path = tmp_path / "lacking.cu.hip"
    path.write_text(text.replace(edit[0], edit[1], 1))
    code = main(["verify", "--benchmark", "convolution_milo", "--first", "--source", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and named in err and "lacking.cu.hip:" in err, err
    session = EmulatedSession(bench, bench.size("emulation"))
    with pytest.raises(BackendError, match=named):
        session.verify(CONFIGS["convolution_milo"], source=path.read_text(), source_name=path.name)


def test_unroll_factor_reaches_the_kernel_as_kernel_tuner_passes_it() -> None:
    """0 removes the kernel's ``#pragma unroll loop_unroll_factor_channel``; another value is a constexpr."""
    bench = load_benchmark("dedispersion_milo")
    session = EmulatedSession(bench, bench.size("emulation"))
    runner, config = session.runner, CONFIGS["dedispersion_milo"]
    assert "loop_unroll_factor_channel" not in runner.macros(config, session.size.values)
    assert "#pragma unroll loop_unroll_factor_channel" in session.source
    assert "loop_unroll_factor_channel" not in runner.prepare_source(session.source, config)
    four = {**config, "loop_unroll_factor_channel": 4}
    assert runner.prepare_source(session.source, four).startswith("constexpr int loop_unroll_factor_channel = 4;\n")
    plain, unrolled = session.verify(config), session.verify(four)
    assert plain.ok and unrolled.ok, unrolled.result.message
    assert plain.outputs["output"].tobytes() == unrolled.outputs["output"].tobytes()


def dynamic_twin(hip: str) -> str:
    """The convolution HIP twin with its input tile in dynamic shared memory (HIP_DYNAMIC_SHARED)."""
    static = "__shared__ float sh_input[block_size_y*tile_size_y+border_height][shared_mem_width];"
    assert hip.count(static) == 1
    return hip.replace(static, "HIP_DYNAMIC_SHARED(float, sh_dynamic)\n"
                       "    float (*sh_input)[shared_mem_width] = (float (*)[shared_mem_width])sh_dynamic;")


@pytest.mark.parametrize(("spare", "ok"), [(0, True), (-4, False)])
def test_hip_dynamic_shared_memory_is_emulated_and_guarded(spare: int, ok: bool) -> None:
    bench = load_benchmark("convolution_milo")
    session = EmulatedSession(bench, bench.size("emulation"))
    config = {**CONFIGS["convolution_milo"], "use_padding": 0}  # tile: (4 * 2 + 14) rows of (16 * 2 + 14) floats
    tile_bytes = (4 * 2 + 14) * (16 * 2 + 14) * 4
    launches = session.runner.launches
    session.runner.launches = lambda c, s: [dataclasses.replace(launch, shared_bytes=tile_bytes + spare)
                                            for launch in launches(c, s)]
    hip = (bench.directory / bench.kernel["hip_source"]).read_text()
    checked = session.verify(config, source=dynamic_twin(hip), source_name="dynamic.cu.hip")
    if ok:
        assert checked.ok, checked.result.message
        session.runner.launches = launches
        assert checked.outputs["output"].tobytes() == session.verify(config).outputs["output"].tobytes()
    else:  # four bytes short: the last float of the tile is past the array's end
        assert checked.result.status is Status.RUNTIME_ERROR and "heap-buffer-overflow" in checked.result.message


def test_dynamic_shared_memory_over_the_block_limit_is_refused() -> None:
    bench = load_benchmark("convolution_milo")
    session = EmulatedSession(bench, bench.size("emulation"))
    launches = session.runner.launches
    session.runner.launches = lambda c, s: [dataclasses.replace(launch, shared_bytes=48 * 1024)
                                            for launch in launches(c, s)]
    checked = session.verify(CONFIGS["convolution_milo"])  # 48 KiB dynamic on top of its static tile
    assert checked.refused and "dynamic shared memory" in checked.result.message, checked.result.message


def test_ptxas_report_of_a_cpp_kernel_is_found_by_its_plain_name() -> None:
    """convolution_kernel is not extern "C": ptxas names it _Z18convolution_kernelPfS_S_."""
    from bat.toolchain.resources import parse_ptxas_log

    log = ("ptxas info    : Compiling entry function '_Z18convolution_kernelPfS_S_' for 'sm_90'\n"
           "ptxas info    : Used 40 registers, 8704 bytes smem\n"
           "ptxas info    : Compiling entry function '_Z4stepPf' for 'sm_90'\n"
           "ptxas info    : Used 8 registers\n"
           "ptxas info    : Compiling entry function '_Z4stepPd' for 'sm_90'\n"
           "ptxas info    : Used 9 registers\n")
    usages = parse_ptxas_log(log)
    assert usages["convolution_kernel"].shared_bytes == 8704
    assert usages["convolution_kernel"] is usages["_Z18convolution_kernelPfS_S_"]
    assert "step" not in usages  # overloaded: ambiguous, no alias
