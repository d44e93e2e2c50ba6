"""Every kernel on a GPU: the configurations CI emulates must all be ok live, and agree with emulation.

Skipped (with the reason shown) unless CuPy imports and a CUDA device is present. For each
kernel, the CI selection (bat.backends.emulated.selection, only what a GPU accepts) runs
through the live backend's session and the shared measurement procedure: at the emulation
size the outputs are compared with the emulated backend's for the same configuration and
inputs (within the runner's tolerances: GPU arithmetic differs from the CPU's), and at the
small size every configuration is measured and must be ok.
"""

from __future__ import annotations

import pytest

from bat.backends.live.device import gpu_available

pytestmark = pytest.mark.gpu

if not gpu_available():
    pytest.skip("needs CuPy and a CUDA device (none found)", allow_module_level=True)

from bat.backends.emulated.selection import ci_selection  # noqa: E402
from bat.backends.emulated.session import EmulatedSession  # noqa: E402
from bat.backends.live.session import LiveSession  # noqa: E402
from bat.backends.procedure import agreement, check, execute  # noqa: E402
from bat.core.benchmark import load_benchmark  # noqa: E402
from bat.core.kernel import digest  # noqa: E402

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion", "convolution_milo",
              "dedispersion_milo"]


@pytest.mark.parametrize("name", BENCHMARKS)
def test_live_outputs_agree_with_emulation(name: str) -> None:
    bench = load_benchmark(name)
    size = bench.size("emulation")
    emulated = EmulatedSession(bench, size)
    live = LiveSession(bench, size, repeats=1)
    assert digest(live.host) == digest(emulated.host)
    failures = []
    try:
        for item in ci_selection(bench, size, accept=emulated.gpu_accepts):
            on_cpu = emulated.verify(item.config)
            compiled = live.compiler(live.job(0, item.config))
            if not compiled.ok:
                failures.append(f"{item.config}: NVRTC through CuPy: {compiled.first_error()}")
                continue
            launches = live.runner.launches(item.config, size.values)
            live.device.load(compiled.cubin, {launch.kernel for launch in launches})
            on_gpu = execute(live.device, live.runner, live.host, launches, warmups=0, repeats=1).outputs
            for what, outcome in (("emulated", on_cpu.result), ("live", check(live.runner, on_gpu, live.reference))):
                if not outcome.ok:
                    failures.append(f"{item.config}: {what}: {outcome.message}")
            if on_cpu.ok and not (same := agreement(live.runner, on_gpu, on_cpu.outputs, size.values)):
                failures.append(f"{item.config}: live and emulated outputs differ: {same.message}")
    finally:
        live.close()
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_selected_configuration_is_ok_live(name: str) -> None:
    bench = load_benchmark(name)
    live = LiveSession(bench, bench.size("small"), repeats=3)
    gate = EmulatedSession(bench, bench.size("small"))
    failures = []
    try:
        for item in ci_selection(bench, bench.size("emulation"), accept=gate.gpu_accepts):
            result = live.measure(item.config, live.compiler(live.job(0, item.config)))
            if not result.ok:
                failures.append(f"{item.why} {item.config}: {result.status.value}: {result.message}")
            else:
                assert len(result.times_ms) == 3 and result.objective_ms > 0
    finally:
        live.close()
    assert not failures, "\n".join(failures)
