"""Adapter overhead, as a ratio measured in one run on the replayed GEMM space.

Our ``optuna`` adapter (TPE, through the Problem) against a bare Optuna
ask/tell loop on the same objective (the replay backend called directly, the
same handling of invalid and repeated proposals), 200 evaluations, same
seed. Target: <= 10 % more time. (SMAC: ``bench/smac_bench.py``; Kernel
Tuner: ``bench/kernel_tuner_bench.py``.)

Usage: ``python bench/tuner_speed.py [--evals 200] [--repeats 3]``; prints a
Markdown table (median wall seconds over the repeats).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import date

import numpy as np

from bat.core.problem import Budget
from bat.core.tuner import library_seed
from bat.run.driver import run_tuner
from bat.run.targets import Target, replay_target
from bat.tuner_adapters.optuna_tuner import OptunaTuner


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bare_optuna(target: Target, evals: int, seed: int) -> None:
    """Optuna TPE driven by a plain loop: what a user would write without BAT."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    space, backend = target.space, target.backend
    sampler = optuna.samplers.TPESampler(seed=library_seed(np.random.default_rng(seed)), n_startup_trials=10)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    seen: dict[tuple, float] = {}
    while len(seen) < evals:
        trial = study.ask()
        idx = [trial.suggest_int(p.name, 0, len(p.values) - 1) for p in space.parameters]
        key = tuple(idx)
        if not space.is_valid(np.array([idx]))[0]:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        if key not in seen:
            seen[key] = backend.evaluate(space.config(np.array(idx))).fitness
        value = seen[key]
        if np.isfinite(value):
            study.tell(trial, value)
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    target = replay_target("gemm")
    budget = Budget(max_evals=args.evals)
    rows = []

    def run(tuner) -> float:
        return _timed(lambda: run_tuner(tuner, target, budget=budget, seed=0))

    bare = [_timed(lambda: bare_optuna(target, args.evals, 0)) for _ in range(args.repeats)]
    ours = [run(OptunaTuner(sampler="tpe")) for _ in range(args.repeats)]
    rows.append(("bare Optuna TPE ask/tell loop vs `optuna` adapter",
                 statistics.median(bare), statistics.median(ours), "<= 1.10"))
    print(f"{date.today()}, {platform.machine()}, Python {platform.python_version()}, "
          f"GEMM replayed on {target.gpu}, {args.evals} evaluations, seed 0")
    print("| comparison | peer s | ours s | ours / peer | target |")
    print("|---|---|---|---|---|")
    for what, peer, mine, goal in rows:
        print(f"| {what} | {peer:.1f} | {mine:.1f} | {mine / peer:.2f} | {goal} |")


if __name__ == "__main__":
    main()
