"""SMAC3: our ``smac`` adapter against SMAC's HPO facade with every default, on the same GEMM trials.

Peer: ``HyperparameterOptimizationFacade`` as SMAC builds it by default
(random forest of 10 trees on all cores, BLAS on all cores, a refit after
every 8 proposals, the process's allocator as it is), driven by ask/tell on
our Problem with the same ConfigSpace (constraints as forbidden clauses,
``bat.tuner_adapters.smac_space``) and the same seed. Both sides get the
facade's own acquisition maximizer with its local search's start points in
a fixed order (``bat.tuner_adapters.hash_order``, the adapter's determinism
fix: it orders what SMAC would visit in hash order and costs nothing), so
that both propose the same trials. Ours: ``smac`` (the
settings listed in ``SmacTuner``'s docstring). Both run 200 evaluations of
replayed GEMM (RTX_3090), each in a fresh interpreter with
``PYTHONHASHSEED=0`` (SMAC's proposals depend on the hash seed, so without
it two processes would not propose the same trials), in turns: ours, peer,
ours, peer, ... The child reports its wall and CPU seconds of the run, its
page faults and a digest of the configurations it evaluated; the digests
show whether both sides ran the same trials.

Both sides import SMAC, scikit-learn and ConfigSpace inside the timed run
(the adapter imports them when it tunes). Without a bytecode cache (the
development environment sets ``PYTHONDONTWRITEBYTECODE=1`` and its venv has
no ``__pycache__``) each child compiles those modules from source: 1.7 s of
the adapter's CPU at load 10 (issue 45). So the children always run with a
bytecode cache of their own (``PYTHONPYCACHEPREFIX`` in a temporary folder,
PYTHONDONTWRITEBYTECODE unset), filled by one short untimed run of each side
first, as on an ordinary install where the first import writes the cache.

With ``--against DIR`` it times our adapter only, this checkout's against another's in
ABBA turns (this, other, other, this, ...; ``--pairs`` rounds of two), in CPU seconds: DIR is
put first on the children's ``PYTHONPATH``, laid out as one tree (its ``bat/`` with its
``analysis/``, ``benchmarks/``, ``tuner_adapters/`` and ``results/`` linked inside; checkouts
from de77516 on), so that a rise of the adapter's CPU can be put on the code or not.

Usage: ``python bench/smac_bench.py [--evals 200] [--pairs 2] [--option KEY=VALUE ...] [--against DIR]``
(``--option``: a tuner option of ours, e.g. ``retrain_after=16``).
Target: ours / peer <= 0.20 (wall).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date

import numpy as np

from bat.core.dataset import Status
from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed


class DefaultHpoFacade(Tuner):
    """SMAC's HPO facade with its defaults, proposals evaluated through the Problem."""

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        from smac import HyperparameterOptimizationFacade, Scenario
        from smac.main.exceptions import ConfigurationSpaceExhaustedException
        from smac.runhistory.dataclasses import TrialValue
        from smac.runhistory.enumerations import StatusType

        from bat.tuner_adapters.hash_order import smac_maximizer
        from bat.tuner_adapters.smac_space import configuration_space
        from bat.tuner_adapters.smac_tuner import CRASH_COST

        space, seed = problem.space, library_seed(rng)
        cs, _ = configuration_space(space, seed)
        with tempfile.TemporaryDirectory() as tmp:
            scenario = Scenario(cs, name="bat", output_directory=tmp, deterministic=True,
                                n_trials=problem.budget.max_evals, seed=seed, crash_cost=CRASH_COST)
            maximizer = smac_maximizer(HyperparameterOptimizationFacade, scenario)
            facade = HyperparameterOptimizationFacade(scenario, _unused, logging_level=False, overwrite=True,
                                                      acquisition_maximizer=maximizer)
            while not problem.exhausted:
                try:
                    info = facade.ask()
                except ConfigurationSpaceExhaustedException:
                    return
                result = problem.evaluate({p.name: p.values[int(info.config[p.name])] for p in space.parameters})
                ok = result.ok and result.status is Status.OK
                facade.tell(info, TrialValue(cost=float(result.objective_ms)) if ok else
                            TrialValue(cost=CRASH_COST, status=StatusType.CRASHED), save=False)


def _unused(config: object, seed: int = 0) -> float:
    raise AssertionError("driven by ask/tell")


def child(side: str, evals: int, options: list[str]) -> None:
    from bat.core.problem import Budget
    from bat.registry import make_tuner
    from bat.run.driver import run_tuner
    from bat.run.targets import replay_target

    target = replay_target("gemm", "RTX_3090")
    tuner = make_tuner("smac", options) if side == "ours" else DefaultHpoFacade()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start, cpu = time.perf_counter(), time.process_time()
    trace = run_tuner(tuner, target, budget=Budget(max_evals=evals), seed=0).trace
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    charged = trace.loc[trace["charged"], list(target.space.names)]
    digest = hashlib.sha256(charged.to_csv(index=False).encode()).hexdigest()[:12]
    print(json.dumps({"wall": wall, "cpu": cpu, "sys": after.ru_stime - before.ru_stime,
                      "faults": after.ru_minflt - before.ru_minflt, "evaluated": len(charged),
                      "digest": digest, "best_ms": float(trace["objective_ms"].min())}))


def measure(side: str, evals: int, options: list[str], pycache: str, tree: str | None = None) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPYCACHEPREFIX": pycache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree:
        env["PYTHONPATH"] = tree
    flags = [f"--option={o}" for o in options]
    out = subprocess.run([sys.executable, __file__, "--child", side, "--evals", str(evals), *flags], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def against(other: str, evals: int, pairs: int, options: list[str]) -> None:
    """Our adapter's CPU seconds, this checkout's and ``other``'s, in ABBA turns; the paired differences."""
    trees: dict[str, str | None] = {"this": None, "other": other}
    cpu: dict[str, list[float]] = {"this": [], "other": []}
    with tempfile.TemporaryDirectory() as pycache:
        for tree in trees.values():  # untimed: fills the bytecode cache
            measure("ours", 10, options, pycache, tree)
        for i in range(pairs):
            for name in ("this", "other") if i % 2 == 0 else ("other", "this"):
                run = measure("ours", evals, options, pycache, trees[name])
                cpu[name].append(run["cpu"])
                print(name, json.dumps({**run, "load": round(os.getloadavg()[0], 2)}), flush=True)
    diffs = [a - b for a, b in zip(cpu["this"], cpu["other"], strict=True)]
    print(f"load average at the end {os.getloadavg()[0]:.2f}; CPU s median: this {statistics.median(cpu['this']):.2f}, "
          f"{other} {statistics.median(cpu['other']):.2f}; paired differences (this - other): "
          f"{', '.join(f'{d:+.2f}' for d in diffs)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--option", action="append", default=[], help="a tuner option of ours (KEY=VALUE)")
    ap.add_argument("--against", metavar="DIR", help="time our adapter only, against another checkout's (see above)")
    ap.add_argument("--child", choices=("ours", "peer"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.evals, args.option)
        return
    if args.against:
        against(args.against, args.evals, args.pairs, args.option)
        return
    print(f"{date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"GEMM replayed on RTX_3090, {args.evals} evaluations, seed 0, options of ours {args.option}; load average "
          f"{os.getloadavg()[0]:.2f} at the start", flush=True)
    runs: dict[str, list[dict]] = {"ours": [], "peer": []}
    with tempfile.TemporaryDirectory() as pycache:
        for side in ("ours", "peer"):  # untimed: fills the bytecode cache
            measure(side, 10, args.option, pycache)
        for _ in range(args.pairs):
            for side in ("ours", "peer"):
                runs[side].append(measure(side, args.evals, args.option, pycache))
                print(side, json.dumps(runs[side][-1]), flush=True)
    med = {side: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "sys", "faults")}
           for side, rs in runs.items()}
    same = {r["digest"] for r in runs["ours"]} == {r["digest"] for r in runs["peer"]}
    print(f"load average at the end {os.getloadavg()[0]:.2f}; same trials on both sides: {same}")
    print(f"| measurement (median of {args.pairs}) | SMAC HPO facade, defaults | `smac` adapter | ours / peer |")
    print("|---|---|---|---|")
    for key, unit in (("wall", "s"), ("cpu", "s"), ("sys", "s"), ("faults", "")):
        p, o = med["peer"][key], med["ours"][key]
        print(f"| {key} | {p:,.1f} {unit} | {o:,.1f} {unit} | {o / p:.2f} |")


if __name__ == "__main__":
    main()
