"""Protocol overhead per evaluation: a tuner through ``exec:`` against the same tuner in process.

On the replayed GEMM data, the C++ example (bat/protocol/cpp/example_tuner.cpp,
built here with g++ -O2) runs against its in-process twin
(bat.tuner_adapters.portable_search.PortableSearch) with the same seed; both make
the same evaluations (the traces are checked to be equal), so the difference
in wall time is what the protocol costs: process start, pipes, JSON both
ways, the server's checks. Runs alternate between the two, ``--repeats``
times; medians are reported.

Per strategy: wall seconds of each, the ratio, the overhead per evaluation
(difference / evaluations) with and without the program's start-up (the
tuner time before its first evaluation), and the requests per evaluation.
``--single`` rows evaluate one configuration per request (no batches): the
cost of one round trip. Target: under 0.2 ms per evaluation.

Usage: ``python bench/protocol_overhead.py [--evals 2000] [--repeats 5]``;
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import tempfile
from datetime import date
from pathlib import Path

import pandas as pd

from bat.core.problem import Budget
from bat.registry import make_tuner
from bat.run.driver import RunResult, run_tuner
from bat.run.targets import Target, replay_target
from bat.tuner_adapters.portable_search import PortableSearch

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = (("random", ""), ("local", ""), ("random", " --single"), ("local", " --single"))


def build(out: Path) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        raise SystemExit("g++ is needed to build the C++ example")
    binary = out / "bat_example_tuner"
    subprocess.run([gxx, "-std=c++17", "-O2", "-o", str(binary), str(ROOT / "bat/protocol/cpp/example_tuner.cpp")],
                   check=True)
    return binary


def pair(binary: Path, target: Target, strategy: str, args: str, evals: int, seed: int
         ) -> tuple[RunResult, RunResult]:
    budget = Budget(max_evals=evals)
    inproc = run_tuner(PortableSearch(strategy=strategy), target, budget=budget, seed=seed)
    external = run_tuner(make_tuner(f"exec:{binary} --strategy {strategy}{args}"), target, budget=budget,
                         seed=seed)
    cols = [c for c in inproc.trace.columns if c != "tuner_s"]
    pd.testing.assert_frame_equal(inproc.trace[cols], external.trace[cols], check_exact=True)
    return inproc, external


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--evals", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    target = replay_target("gemm", "RTX_3090")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(Path(tmp))
        pair(binary, target, "random", "", 50, args.seed)  # warm-up: imports, caches, the page cache
        for strategy, extra in VARIANTS:
            ins, ext, start, requests = [], [], [], []
            for r in range(args.repeats):
                inproc, external = pair(binary, target, strategy, extra, args.evals, args.seed + r)
                ins.append(inproc.wall_s)
                ext.append(external.wall_s)
                start.append(float(external.trace["tuner_s"].iloc[0]))
                requests.append(external.trace_meta["tuner_report"]["requests"] / external.evaluated)
            a, b, s = statistics.median(ins), statistics.median(ext), statistics.median(start)
            rows.append((f"{strategy}{extra}", a, b, b / a, (b - a) / args.evals * 1e3,
                         (b - s - a) / args.evals * 1e3, statistics.median(requests)))
    print(f"Protocol overhead, GEMM replay (RTX_3090), {args.evals} evaluations per run, median of "
          f"{args.repeats} alternating pairs; {platform.machine()}, Python {platform.python_version()}, "
          f"{date.today()}\n")
    print("| strategy | in process (s) | exec: C++ (s) | ratio | overhead per eval (ms) | "
          "without start-up (ms) | requests per eval |")
    print("|---|---|---|---|---|---|---|")
    for name, a, b, ratio, per, steady, req in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | {ratio:.2f} | {per:.3f} | {steady:.3f} | {req:.2f} |")


if __name__ == "__main__":
    main()
