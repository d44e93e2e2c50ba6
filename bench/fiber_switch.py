"""What the emulator's portable fiber switch (ucontext, used on aarch64) costs against the x86-64 one.

Run: .venv/bin/python bench/fiber_switch.py [--repeats 3] [BENCHMARK ...]
The emulated backend switches the threads of a block (fibers) with a few
instructions on x86-64 and with glibc's swapcontext elsewhere (bat_fibers.cpp).
No aarch64 machine is at hand, so this runs both switches on this x86-64
machine (``-DBAT_EMU_UCONTEXT`` forces the portable one) on the CI selection of
kernels with barriers, under AddressSanitizer as CI runs them, and prints the
emulated run time of each (both block orders; builds excluded, each executable
built once before it is timed) and the ratio, best of ``--repeats``. These are
costs of checking on a CPU, never kernel timings.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile

from bat.backends.emulated import build
from bat.backends.emulated.edges import EdgeSessions
from bat.backends.emulated.selection import ci_selection
from bat.core.benchmark import load_benchmark

#: kernels whose blocks meet at barriers (pnpoly, dedispersion and expdist's default have few or none)
BENCHMARKS = ["gemm", "hotspot", "nbody", "convolution"]
FAST = build.BASE_FLAGS


def run_seconds(name: str, flags: tuple[str, ...], cache: str, repeats: int) -> float:
    """Emulated run seconds of ``name``'s CI selection built with ``flags``, best of ``repeats``."""
    build.BASE_FLAGS = flags  # read by every Builder made from here on
    bench = load_benchmark(name)
    sessions = EdgeSessions(bench, bench.size("emulation"), cache=cache)
    configs = [item.config for item in ci_selection(bench, sessions.base, accept=sessions.gpu_accepts)]
    for config in configs:  # build (and check) once
        assert sessions.verify(config)[1].ok, (name, config)
    best = float("inf")
    for _ in range(repeats):
        best = min(best, sum(sessions.verify(config)[1].run_s for config in configs))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", default=BENCHMARKS)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows, totals = [], [0.0, 0.0]
    with tempfile.TemporaryDirectory(prefix="bat-fibers-") as tmp:
        for name in args.benchmarks:
            fast = run_seconds(name, FAST, os.path.join(tmp, "fast"), args.repeats)
            portable = run_seconds(name, (*FAST, "-DBAT_EMU_UCONTEXT"), os.path.join(tmp, "portable"), args.repeats)
            totals[0] += fast
            totals[1] += portable
            rows.append(f"| {name} | {fast:.2f} | {portable:.2f} | {portable / fast:.2f} |")
    print(f"### Fiber switch: x86-64 instructions against ucontext (the aarch64 path), "
          f"{datetime.date.today().isoformat()}\n")
    print(f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"CI selection under ASan + UBSan, emulated run seconds (both block orders), best of {args.repeats}\n")
    print("| kernel | x86-64 switch (s) | ucontext (s) | ratio |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"| all | {totals[0]:.2f} | {totals[1]:.2f} | {totals[1] / totals[0]:.2f} |")


if __name__ == "__main__":
    main()
