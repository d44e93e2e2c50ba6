"""The nine kernels emulated on the CPU: what CI runs, how close to the reference, what it costs.

Run: .venv/bin/python bench/emulate_kernels.py [--sanitizer address|thread|none] [--random N]
     [--cache DIR] [BENCHMARK ...]
Prints a Markdown section for bench/RESULTS.md ("Emulated kernels"): per kernel, every
configuration of the CI selection (bat.backends.emulated.selection; plus N uniformly drawn
ones with --random), the problem size it ran at (its edge size, bat.backends.emulated.edges),
its status, its largest error as a fraction of the tolerance, and the seconds this machine
spent on it: NVRTC for sm_90 (the gate), the host build, the emulated run (both block
orders). A benchmark with a HIP twin (the space file's ``kernel.hip_source``) has its twin
run on the same configurations, and the section says whether its outputs equal the CUDA
kernel's bit for bit. These are costs of checking on a CPU, never kernel timings. A fresh
cache directory (the default: a temporary one) measures a cold CI run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import tempfile
import time

from bat.backends.emulated.edges import EdgeSessions
from bat.backends.emulated.selection import ci_selection, wider
from bat.core.benchmark import load_benchmark

BENCHMARKS = ["gemm", "nbody", "hotspot", "pnpoly", "convolution", "expdist", "dedispersion", "convolution_milo",
              "dedispersion_milo"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", default=BENCHMARKS)
    parser.add_argument("--sanitizer", default="address", choices=("address", "thread", "none"))
    parser.add_argument("--random", type=int, default=0, help="add this many uniformly drawn configurations")
    parser.add_argument("--cache", default=None, help="emulation cache (default: a fresh temporary one)")
    args = parser.parse_args()
    tmp = None if args.cache else tempfile.TemporaryDirectory(prefix="bat-emu-bench-")
    cache = args.cache or tmp.name
    start = time.perf_counter()
    sections, totals = [], {"gate": 0.0, "build": 0.0, "run": 0.0, "selection": 0.0, "n": 0, "twins": 0}
    for name in args.benchmarks:
        bench = load_benchmark(name)
        sessions = EdgeSessions(bench, bench.size("emulation"), sanitizer=args.sanitizer, cache=cache)
        t0 = time.perf_counter()
        selection = ci_selection(bench, sessions.base, accept=sessions.gpu_accepts)
        totals["selection"] += time.perf_counter() - t0
        selection += wider(bench, args.random) if args.random else []
        hip = bench.kernel.get("hip_source")
        hip_text = (bench.directory / hip).read_text() if hip else None
        rows, worst, twins = [], 0.0, []
        for item in selection:
            edge, checked = sessions.verify(item.config)
            ratio = "-" if checked.error_ratio is None else f"{checked.error_ratio:.3g}"
            worst = max(worst, checked.error_ratio or 0.0)
            status = checked.result.status.value + (f" ({checked.result.message[:80]})" if not checked.ok else "")
            at = ", ".join(f"{k}={v}" for k, v in edge.size.values.items())
            rows.append(f"| {item.why} | `{json.dumps(item.config)}` | {at} | {status} | {ratio} | "
                        f"{checked.gate_s:.2f} | {checked.build_s:.2f} | {checked.run_s:.2f} |")
            for seconds, key in ((checked.gate_s, "gate"), (checked.build_s, "build"), (checked.run_s, "run")):
                totals[key] += seconds
            totals["n"] += 1
            if hip_text is not None and checked.ok:
                _, twin = sessions.verify(item.config, source=hip_text, source_name=hip)
                twins.append(twin.ok and all(twin.outputs[k].tobytes() == checked.outputs[k].tobytes()
                                             for k in sessions.first.runner.output_names()))
                for seconds, key in ((twin.gate_s, "gate"), (twin.build_s, "build"), (twin.run_s, "run")):
                    totals[key] += seconds
                totals["twins"] += 1
        twin_line = (f" HIP twin ({hip}): {sum(twins)} of {len(twins)} configurations ok with outputs equal to the "
                     "CUDA kernel's bit for bit." if hip_text is not None else "")
        sections.append(f"### {name} (from the {sessions.base.describe()})\n\nLargest error of any configuration: "
                        f"{worst:.3g} of the tolerance.{twin_line}\n\n| why | configuration | size | status | "
                        "error / tolerance | NVRTC s | build s | run s |\n|---|---|---|---|---|---|---|---|\n"
                        + "\n".join(rows))
    wall = time.perf_counter() - start
    twins = f", the {totals['twins']} runs of HIP twins included" if totals["twins"] else ""
    print("## Emulated kernels\n")
    print(f"Machine: 2-core x86_64 dev machine, no GPU, Python {platform.python_version()}; "
          f"{datetime.date.today().isoformat()}; `bench/emulate_kernels.py --sanitizer {args.sanitizer}"
          f"{f' --random {args.random}' if args.random else ''}`"
          f"{' (warm cache)' if args.cache else ' (cold cache)'}.\n")
    print(f"{totals['n']} configurations in {wall:.0f} s wall: choosing them {totals['selection']:.0f} s (of which "
          f"NVRTC for the chosen ones {totals['gate']:.0f} s, the rest NVRTC for candidates a GPU refuses and "
          f"sampling), host builds {totals['build']:.0f} s, emulated runs {totals['run']:.0f} s (both block orders)"
          f"{twins}. "
          "Seconds are what this machine spent checking, never kernel timings; the NVRTC column is the compile "
          "made while choosing.\n")
    print("\n\n".join(sections))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
