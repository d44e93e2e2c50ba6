"""Evaluations to reach a well-performing Coulomb configuration: profile search vs random search.

For each of 1,000 seeds: one profile search (exact counters, predicted
counters) over the whole space, through the common runner and replay; the
number of evaluations (distinct configurations run) and of empirical tests
(evaluations plus profiling re-runs of a configuration first run without
counters) until the first configuration within 1.05x, 1.1x and 1.2x of the
best. Random search: 1,000 seeded uniform permutations, and its exact
expectation (N+1)/(K+1). The ratio random / profile is the improvement.
The predicted-counters model is trained on the same Coulomb dataset (the
only dataset with counters in results/), seed 0: no other GPU or input is
available for the cross-GPU matrix. Online counters: the replay stands in
for a live GPU (counters come with each evaluation, the dataset is hidden
from the tuner's facts), the model is refitted on what the run has measured;
these searches get a budget of ``ONLINE_BUDGET`` evaluations (a search that
finds nothing within a threshold by then would count as NaN and is reported).

Usage: .venv/bin/python bench/profile_eval.py [--runs 1000] [--online-runs 200] [--modes exact,predicted,online]
"""

from __future__ import annotations

import argparse
import platform
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from bat.core.dataset import Dataset
from bat.core.problem import Budget
from bat.registry import find_dataset
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.tuner_adapters.profile.search import ProfileSearch

THRESHOLDS = (1.05, 1.1, 1.2)
#: evaluations an online search gets (refitting the model each step makes a whole-space search slow)
ONLINE_BUDGET = 60


def first_hits(trace: pd.DataFrame, best: float) -> dict[str, float]:
    """Evaluations and tests until the first objective within each threshold of ``best``."""
    tests = trace[(trace["kind"] == "evaluated") | trace["profiled"]].reset_index(drop=True)
    evals = tests[tests["kind"] == "evaluated"].reset_index(drop=True)
    out = {}
    for t in THRESHOLDS:
        hit_e = np.flatnonzero(evals["objective_ms"].to_numpy() <= t * best)
        hit_t = np.flatnonzero((tests["kind"] == "evaluated") & (tests["objective_ms"] <= t * best))
        out[f"evals@{t}"] = hit_e[0] + 1 if hit_e.size else np.nan
        out[f"tests@{t}"] = hit_t[0] + 1 if hit_t.size else np.nan
    return out


def summarise(values: np.ndarray) -> dict[str, float]:
    if np.isnan(values).any():
        print(f"  {int(np.isnan(values).sum())} of {len(values)} searches found none; left out of the figures")
        values = values[~np.isnan(values)]
    return {"mean": float(np.mean(values)), "median": float(np.median(values)),
            "p10": float(np.percentile(values, 10)), "p90": float(np.percentile(values, 90))}


def target(ds: Dataset, mode: str):
    """The Coulomb replay; for online counters, with the dataset hidden (replay standing in for live)."""
    t = replay_target("coulomb", dataset=ds)
    if mode == "online":
        t.facts = replace(t.facts, dataset=None)
    return t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--online-runs", type=int, default=200)
    ap.add_argument("--modes", default="exact,predicted,online")
    args = ap.parse_args()
    ds = Dataset.load(find_dataset("coulomb", "RTX_2080_Ti").path)
    times = ds.ok["objective_ms"].to_numpy()
    best, n = float(times.min()), len(times)
    rows = []
    for mode in args.modes.split(","):
        start = time.perf_counter()
        hits = []
        runs = args.online_runs if mode == "online" else args.runs
        budget = Budget(max_evals=min(n, ONLINE_BUDGET) if mode == "online" else n)
        for seed in range(runs):
            result = run_tuner(ProfileSearch(mode=mode, announce=False), target(ds, mode), budget=budget, seed=seed)
            hits.append(first_hits(result.trace, best))
        frame = pd.DataFrame(hits)
        print(f"profile/{mode}: {runs} searches in {time.perf_counter() - start:.1f} s")
        for t in THRESHOLDS:
            rows.append({"method": f"profile ({mode} counters)", "within": t, "count": "evaluations",
                         **summarise(frame[f"evals@{t}"].to_numpy())})
            rows.append({"method": f"profile ({mode} counters)", "within": t, "count": "tests incl. profiling",
                         **summarise(frame[f"tests@{t}"].to_numpy())})
    for t in THRESHOLDS:
        good = times <= t * best
        k = int(good.sum())
        draws = np.array([np.flatnonzero(good[np.random.default_rng(s).permutation(n)])[0] + 1
                          for s in range(args.runs)])
        rows.append({"method": "random (simulated)", "within": t, "count": "evaluations", **summarise(draws)})
        rows.append({"method": f"random (exact, K={k} of N={n})", "within": t, "count": "evaluations",
                     "mean": (n + 1) / (k + 1), "median": np.nan, "p10": np.nan, "p90": np.nan})
    table = pd.DataFrame(rows)
    for t in THRESHOLDS:
        exact_random = table[(table["within"] == t) & table["method"].str.startswith("random (exact")]["mean"].iloc[0]
        sel = table["within"] == t
        table.loc[sel, "improvement"] = exact_random / table.loc[sel, "mean"]
    pd.set_option("display.width", 200)
    print(table.round(2).to_string(index=False))
    print(f"machine: {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")


if __name__ == "__main__":
    main()
