"""Search-space engine benchmark: GEMM space build and Hotspot sampling vs Kernel Tuner 1.5, Dedispersion count.

Run: .venv/bin/python bench/space_bench.py [--repeats 7]
Prints a Markdown section for bench/RESULTS.md ("Search-space engine"). Both
GEMM builders run in this process, interleaved, on the same space file; each
builds the full list of valid configurations (ours: value-index rows).
Hotspot sampling: both spaces are built first (Kernel Tuner's from the same
parameters, with the constants written into its restriction strings), then
10,000 distinct valid configurations are drawn from each, interleaved, and
the draws alone are timed (ours ``sample_valid``, Kernel Tuner
``Searchspace.get_random_sample``). The Dedispersion count runs in a fresh
subprocess so that its peak memory (ru_maxrss, including the interpreter and
NumPy) is its own.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bat.core.benchmark import load_benchmark
from bat.core.spacefile import space_from_dict


def ours_gemm(raw: dict) -> int:
    space = space_from_dict(raw)
    return sum(len(rows) for rows in space.iter_valid())


def kernel_tuner_gemm(raw: dict) -> int:
    from kernel_tuner.searchspace import Searchspace

    tune_params = {p["name"]: p["values"] for p in raw["parameters"]}
    restrictions = [c["expr"] for c in raw["constraints"]]
    return Searchspace(tune_params, restrictions, 1024).size


def hotspot_sampling(repeats: int, n: int = 10_000) -> tuple[list[float], list[float], float]:
    """Seconds of each draw of ``n`` valid Hotspot configurations: ours, Kernel Tuner's; its build time."""
    from kernel_tuner.searchspace import Searchspace

    space = load_benchmark("hotspot").space
    space.count_valid()
    env = {**space.problem_size, **space.constants}
    restrictions = []
    for c in space.constraints:
        text = c.expr
        for name, value in env.items():
            text = re.sub(rf"\b{name}\b", str(value), text)
        restrictions.append(text)
    start = time.perf_counter()
    theirs = Searchspace({p.name: list(p.values) for p in space.parameters}, restrictions, 1024)
    build_s = time.perf_counter() - start
    if theirs.size != space.count_valid():
        raise SystemExit(f"Hotspot spaces disagree: ours {space.count_valid()}, Kernel Tuner {theirs.size}")
    ours_s, theirs_s = [], []
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        np.random.seed(seed)  # Kernel Tuner draws from the global generator
        start = time.perf_counter()
        space.sample_valid(n, rng)
        ours_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs.get_random_sample(n)
        theirs_s.append(time.perf_counter() - start)
    return ours_s, theirs_s, build_s


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
    hot_ours, hot_theirs, hot_build = hotspot_sampling(3 * args.repeats)
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
    (o_med, o_min), (t_med, t_min) = ((statistics.median(x), min(x)) for x in (hot_ours, hot_theirs))
    print(f"| Hotspot: draw 10,000 distinct valid configurations of 410,523, median (min) of {3 * args.repeats} "
          f"(Kernel Tuner's space built once beforehand in {hot_build:.1f} s) | {o_med * 1e3:.1f} ms "
          f"({o_min * 1e3:.1f}) | {t_med * 1e3:.1f} ms ({t_min * 1e3:.1f}) | {t_med / o_med:.0f}x faster |")
    print(f"| Dedispersion: load + count {dd['count']:,} valid of {dd['cardinality']:,} "
          f"| {dd['count_s'] * 1e3:.1f} ms, peak RSS {dd['peak_mib']:.0f} MiB | - | - |")
    print(f"| Dedispersion: sample 10,000 valid configurations without replacement "
          f"| {dd['sample_s'] * 1e3:.1f} ms | - | - |")


if __name__ == "__main__":
    main()
