"""Cost of exact constraint arithmetic (bat.core.arithmetic) against the plain NumPy evaluator it replaced.

Run: .venv/bin/python bench/expression_bench.py [--peer-rev 736b430] [--repeats 7]
The peer is bat/core/expressions.py as it was at ``--peer-rev`` (int64 ufuncs, no
overflow checks), read from git and imported from a temporary folder, so both
run in this process, interleaved, on the same inputs. Two workloads per
benchmark: (1) building its space and listing every valid configuration (the
real path: constraint groups feed open-mesh arrays, so intermediates stay
small); (2) every constraint over 10^6 random configurations given as flat
arrays (the worst case: each checked operation bounds full-size operands).
Both evaluators must agree on every configuration. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import bat.core.expressions as exact
import bat.core.space as space_module
from bat.core.benchmark import benchmark_names, load_benchmark
from bat.core.spacefile import space_from_dict

ROOT = Path(__file__).resolve().parents[1]


def load_peer(rev: str):
    source = subprocess.run(["git", "show", f"{rev}:bat/core/expressions.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp())
    (folder / "peer_expressions.py").write_text(source)
    spec = importlib.util.spec_from_file_location("peer_expressions", folder / "peer_expressions.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["peer_expressions"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def build_times(raw: dict, parse, repeats: int) -> tuple[list[float], int]:
    space_module.parse_expression = parse
    times, n = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        n = len(space_from_dict(raw).valid_ids())
        times.append(time.perf_counter() - start)
    return times, n


def flat_times(space, parse, env: dict, repeats: int) -> tuple[list[float], list[np.ndarray]]:
    exprs = [parse(c.expr, set(env), where="bench") for c in space.constraints]
    times, out = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        out = [np.asarray(e.evaluate(env), dtype=bool) for e in exprs]
        times.append(time.perf_counter() - start)
    return times, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer-rev", default="736b430")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    peer = load_peer(args.peer_rev)
    rng = np.random.default_rng(0)
    print("| benchmark | valid | build + list: plain / exact | ratio | 10^6 flat: plain / exact | ratio |")
    print("|---|---|---|---|---|---|")
    for name in benchmark_names():
        bench = load_benchmark(name)
        plain_b, exact_b = [], []
        for _ in range(args.repeats):  # interleaved
            t, n_plain = build_times(bench.raw, peer.parse_expression, 1)
            plain_b += t
            t, n_exact = build_times(bench.raw, exact.parse_expression, 1)
            exact_b += t
        assert n_plain == n_exact, name
        space = bench.space
        env = {p.name: rng.choice(np.asarray(p.values, dtype=object if any(isinstance(v, str) for v in p.values)
                                             else None), 1_000_000) for p in space.parameters}
        env |= {**space.problem_size, **space.constants}
        plain_f, exact_f = [], []
        for _ in range(args.repeats):
            t, a = flat_times(space, peer.parse_expression, env, 1)
            plain_f += t
            t, b = flat_times(space, exact.parse_expression, env, 1)
            exact_f += t
            assert all((np.broadcast_to(x, (10**6,)) == np.broadcast_to(y, (10**6,))).all()
                       for x, y in zip(a, b, strict=True)), name
        pb, eb = statistics.median(plain_b), statistics.median(exact_b)
        pf, ef = statistics.median(plain_f), statistics.median(exact_f)
        print(f"| {name} | {n_exact:,} | {pb * 1e3:.1f} / {eb * 1e3:.1f} ms | {eb / pb:.2f} | "
              f"{pf * 1e3:.1f} / {ef * 1e3:.1f} ms | {ef / pf:.2f} |")
    print(f"\n{sys.version.split()[0]}; medians of {args.repeats}; peer: bat/core/expressions.py at {args.peer_rev}")


if __name__ == "__main__":
    main()
