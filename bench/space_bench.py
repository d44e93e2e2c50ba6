"""Search-space engine benchmark: GEMM space build vs Kernel Tuner 1.5, and the Dedispersion count.

Run: .venv/bin/python bench/space_bench.py [--repeats 7]
Prints a Markdown section for bench/RESULTS.md ("Search-space engine"). Both
GEMM builders run in this process, interleaved, on the same space file; each
builds the full list of valid configurations (ours: value-index rows). The
Dedispersion count runs in a fresh subprocess so that its peak memory
(ru_maxrss, including the interpreter and NumPy) is its own.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bat.benchmark import load_benchmark
from bat.spacefile import space_from_dict


def ours_gemm(raw: dict) -> int:
    space = space_from_dict(raw)
    return sum(len(rows) for rows in space.iter_valid())


def kernel_tuner_gemm(raw: dict) -> int:
    from kernel_tuner.searchspace import Searchspace

    tune_params = {p["name"]: p["values"] for p in raw["parameters"]}
    restrictions = [c["expr"] for c in raw["constraints"]]
    return Searchspace(tune_params, restrictions, 1024).size


def timed(func, raw: dict) -> tuple[float, int]:
    start = time.perf_counter()
    n = func(raw)
    return time.perf_counter() - start, n


def dedispersion_child() -> None:
    start = time.perf_counter()
    space = load_benchmark("dedispersion").space
    count = space.count_valid()
    elapsed = time.perf_counter() - start
    sample_start = time.perf_counter()
    space.sample_valid(10_000, np.random.default_rng(0))
    sample_s = time.perf_counter() - sample_start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"count": count, "cardinality": space.cardinality, "count_s": elapsed,
                      "sample_s": sample_s, "peak_mib": peak_kib / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dedispersion-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dedispersion_child:
        dedispersion_child()
        return
    raw = load_benchmark("gemm").raw
    ours, theirs = [], []
    timed(ours_gemm, raw)  # warm imports of both before timing
    timed(kernel_tuner_gemm, raw)
    for _ in range(args.repeats):
        t, n_ours = timed(ours_gemm, raw)
        ours.append(t)
        t, n_theirs = timed(kernel_tuner_gemm, raw)
        theirs.append(t)
    if n_ours != n_theirs:
        raise SystemExit(f"builders disagree: ours {n_ours}, Kernel Tuner {n_theirs}")
    child = subprocess.run([sys.executable, str(Path(__file__)), "--dedispersion-child"],
                           check=True, capture_output=True, text=True)
    dd = json.loads(child.stdout)
    ours_ms, theirs_ms = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
    print("## Search-space engine\n")
    print(f"Machine: 2-core {platform.machine()} dev machine, no GPU, Python "
          f"{platform.python_version()}; {datetime.date.today().isoformat()}; "
          f"`bench/space_bench.py --repeats {args.repeats}`.\n")
    print("| measurement | ours | Kernel Tuner 1.5 | ratio |")
    print("|---|---|---|---|")
    print(f"| GEMM: build space + list its {n_ours:,} valid configurations (median of "
          f"{args.repeats}) | {ours_ms:.1f} ms | {theirs_ms:.1f} ms | "
          f"{theirs_ms / ours_ms:.0f}x faster |")
    print(f"| Dedispersion: load + count {dd['count']:,} valid of {dd['cardinality']:,} "
          f"| {dd['count_s'] * 1e3:.1f} ms, peak RSS {dd['peak_mib']:.0f} MiB | - | - |")
    print(f"| Dedispersion: sample 10,000 valid configurations without replacement "
          f"| {dd['sample_s'] * 1e3:.1f} ms | - | - |")


if __name__ == "__main__":
    main()
