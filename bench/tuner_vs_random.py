"""Every tuner against random search on the shipped datasets: Mann-Whitney U at 25, 100, 400 evaluations.

For each tuner, benchmark (replayed on the default GPU) and seed, one run of
the largest budget is made, and the relative performance (best known time /
best time found) after 25, 100 and 400 charged evaluations is read from its
trace (so a checkpoint is the prefix of a 400-evaluation run, not a run with
that budget: tuners whose behaviour depends on the budget, such as SMAC's
initial design, are seen as configured for 400). Each tuner is compared with
``reference:random`` on the same seeds by the two-sided Mann-Whitney U test
(scipy.stats) and the common-language effect size (CLES: the probability that
a run of the tuner ends better than a run of random search, ties counting one
half). Whatever it shows is written to ``bench/tuner_vs_random.md``.

Usage: ``python bench/tuner_vs_random.py [--repeats 10] [--jobs 2]``.
SMAC is slow per proposal, so its tuners run to ``--smac-budget`` (100)
evaluations with the same repeats; their 400 column is empty.
"""

from __future__ import annotations

import argparse
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from bat.core.errors import BatError
from bat.core.problem import Budget
from bat.registry import DEFAULT_GPU, tuner_names
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target

CHECKPOINTS = (25, 100, 400)
BENCHMARKS = ("gemm", "convolution", "pnpoly")
BASELINE = "reference:random"
OUT = Path(__file__).with_suffix(".md")


@cache
def _target(benchmark: str) -> Target:
    return replay_target(benchmark, DEFAULT_GPU)


def one_run(job: tuple[str, str, int, int]) -> dict:
    """Relative performance at each checkpoint of one run (NaN past the run's budget)."""
    tuner, benchmark, seed, budget = job
    target = _target(benchmark)
    start = time.perf_counter()
    try:
        result = run_tuner(tuner, target, budget=Budget(max_evals=budget), seed=seed)
    except BatError as exc:  # a missing library, or a tuner that cannot run on this dataset
        return {"tuner": tuner, "benchmark": benchmark, "seed": seed, "error": f"{type(exc).__name__}: {exc}"}
    charged = result.trace[result.trace["charged"]]
    best = charged["best_so_far_ms"].to_numpy()
    row = {"tuner": tuner, "benchmark": benchmark, "seed": seed, "error": "",
           "wall_s": time.perf_counter() - start}
    for k in CHECKPOINTS:
        if k > budget or len(best) < k:
            row[f"rp{k}"] = np.nan
        else:
            found = best[k - 1]
            row[f"rp{k}"] = target.best_known_ms / found if np.isfinite(found) else 0.0
    return row


def compare(frame: pd.DataFrame) -> pd.DataFrame:
    from scipy.stats import mannwhitneyu

    rows = []
    for (tuner, bench), g in frame.groupby(["tuner", "benchmark"], sort=True):
        if tuner == BASELINE:
            continue
        base = frame[(frame["tuner"] == BASELINE) & (frame["benchmark"] == bench)]
        row = {"tuner": tuner, "benchmark": bench, "n": len(g)}
        for k in CHECKPOINTS:
            a, b = g[f"rp{k}"].dropna().to_numpy(), base[f"rp{k}"].dropna().to_numpy()
            if len(a) == 0 or len(b) == 0:
                row[f"@{k}"] = "—"
                continue
            u, p = mannwhitneyu(a, b, alternative="two-sided")
            cles = u / (len(a) * len(b))
            mark = "**" if p < 0.05 else ""
            row[f"@{k}"] = f"{np.median(a):.3f} vs {np.median(b):.3f}, CLES {cles:.2f}, {mark}p={p:.3g}{mark}"
        rows.append(row)
    return pd.DataFrame(rows)


def _markdown(table: pd.DataFrame) -> str:
    head = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--smac-budget", type=int, default=100)
    parser.add_argument("--tuners", nargs="*", default=None, help="default: every registered tuner")
    args = parser.parse_args()
    benchmarks, unusable = [], []
    for b in BENCHMARKS:
        try:
            _target(b)
            benchmarks.append(b)
        except BatError as exc:  # a dataset that does not load is reported, not hidden
            unusable.append(f"- {b}: {type(exc).__name__}: {exc}")
    tuners = args.tuners or tuner_names()
    if BASELINE not in tuners:
        tuners = [BASELINE, *tuners]
    jobs = [(t, b, seed, args.smac_budget if t.startswith("smac") else max(CHECKPOINTS))
            for t in tuners for b in benchmarks for seed in range(args.repeats)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        frame = pd.DataFrame(list(pool.map(one_run, jobs, chunksize=1)))
    wall = time.perf_counter() - start
    frame.to_csv(OUT.with_suffix(".csv"), index=False)
    errors = frame[frame["error"] != ""].drop_duplicates("tuner")
    ok = frame[frame["error"] == ""]
    table = compare(ok)
    lines = [
        "# Every tuner against random search (relative performance, Mann-Whitney U)",
        "",
        f"Generated by `bench/tuner_vs_random.py` on {date.today()}: {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {args.jobs} worker processes, "
        f"{wall:.0f} s wall.",
        f"Datasets: {', '.join(benchmarks)} replayed on {DEFAULT_GPU}. Seeds 0..{args.repeats - 1} "
        f"({args.repeats} runs per tuner and benchmark); SMAC runs stop at {args.smac_budget} evaluations.",
        "Each cell: median relative performance of the tuner vs of random search (best known / best found,",
        "1 = optimum found), CLES (probability that the tuner ends better), two-sided p-value;",
        "**bold** p < 0.05. Checkpoints are prefixes of one 400-evaluation run per seed.",
        "",
        _markdown(table) if len(table) else "(no results)",
        "",
    ]
    if unusable:
        lines += ["Datasets that could not be replayed (left out):", "", *unusable, ""]
    if len(errors):
        lines += ["Not run:", ""] + [f"- {r.tuner}: {r.error}" for r in errors.itertuples()] + [""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT} ({len(frame)} runs, {wall:.0f} s)")


if __name__ == "__main__":
    main()
