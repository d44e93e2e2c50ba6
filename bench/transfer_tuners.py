"""The reference transfer tuners on the shipped data: evaluations to 1.10 / 1.05 of the target's optimum and
the tuner's own CPU time per run (issue 34, the tuners' side; the study itself is ``bat compare --study``).

For each family with data on three or more GPUs, each GPU in turn is the target and the other GPUs' data
its prior (``TargetFacts.others``). Every tuner runs ``--seeds`` seeds with budget ``--budget`` on the
replayed target; the per-run tuner time is the CPU time of this process between proposals
(``Problem(tuner_clock=time.process_time)``), the first run of a prior included (it aligns the prior and, for
``transfer:model``, fits the model). Random search (``reference:random``) is the peer in the same run.

    .venv/bin/python bench/transfer_tuners.py --seeds 20 --budget 200
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from bat.core.problem import Budget, Problem
from bat.core.trace import TraceRecorder
from bat.registry import make_tuner
from bat.run.targets import replay_target

FAMILIES = {
    "gemm": ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"),
    "convolution": ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"),
    "pnpoly": ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan"),
    "convolution_milo": ("A100", "A4000", "A6000", "MI250X", "W6600"),
    "dedispersion_milo": ("A100", "A4000", "A6000", "MI250X", "W6600"),
}
TUNERS = ("reference:random", "transfer:best", "transfer:rank", "transfer:model")


def evals_to(trace, best_ms: float, factor: float, budget: int) -> float:
    """Evaluations until one within ``factor`` of the optimum (budget + 1 when none was)."""
    evaluated = trace[trace["kind"] == "evaluated"].reset_index(drop=True)
    hit = np.flatnonzero(evaluated["objective_ms"].to_numpy(dtype=float) <= factor * best_ms)
    return float(hit[0] + 1) if len(hit) else float(budget + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    print("| family | target | tuner | median evals to 1.10 | to 1.05 | tuner CPU s/run: median | max |")
    print("|---|---|---|---|---|---|---|")
    totals: dict[str, list[float]] = {t: [] for t in TUNERS}
    for family in args.families.split(","):
        gpus = FAMILIES[family]
        targets = {g: replay_target(family, g) for g in gpus}
        for gpu, target in targets.items():
            others = {g: t.dataset for g, t in targets.items() if g != gpu}
            facts = dataclasses.replace(target.facts, others=others)
            for name in TUNERS:
                to10, to05, cpu = [], [], []
                for seed in range(args.seeds):
                    recorder = TraceRecorder(target.space.names)
                    problem = Problem(space=target.space, backend=target.backend, facts=facts,
                                      budget=Budget(max_evals=args.budget), observers=[recorder],
                                      tuner_clock=time.process_time)
                    problem.start_clock()
                    make_tuner(name).tune(problem, np.random.default_rng(seed))
                    trace = recorder.frame()
                    to10.append(evals_to(trace, target.best_known_ms, 1.10, args.budget))
                    to05.append(evals_to(trace, target.best_known_ms, 1.05, args.budget))
                    cpu.append(problem.stats.tuner_s)
                totals[name] += cpu
                print(f"| {family} | {gpu} | {name} | {np.median(to10):g} | {np.median(to05):g} | "
                      f"{np.median(cpu):.4f} | {max(cpu):.3f} |", flush=True)
    for name, cpu in totals.items():
        print(f"{name}: {len(cpu)} runs, tuner CPU total {sum(cpu):.1f} s, median {np.median(cpu):.4f} s, "
              f"max {max(cpu):.3f} s")


if __name__ == "__main__":
    main()
