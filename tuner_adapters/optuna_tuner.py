"""Optuna adapter: TPE (default), random, Gaussian-process and CMA-ES samplers.

Driven through Optuna's ask/tell interface, so every evaluation goes through
our Problem. Each parameter is exposed to Optuna as an integer index into its
ordered value list (``suggest_int``), so ordered values keep their order for
the GP and CMA-ES samplers.

Constraints: Optuna does not know them. A proposal that violates one is
answered by the Problem as rejected (no budget, never sent to the backend)
and told to Optuna as a failed trial, which its samplers skip when they
model. A repeated proposal is answered from the Problem's memory (no budget)
and told to Optuna with its earlier value. After ``max_stall`` proposals in a
row that were rejected or repeated, the adapter proposes one random valid,
not yet evaluated configuration itself (enqueued as an Optuna trial, so the
sampler learns from it); such fall-backs are counted in ``fallbacks``.

Batches: with ``constant_liar`` (TPE only, the ``optuna:tpe-liar`` variant)
the adapter keeps ``problem.slots`` trials in flight (``problem.submit``)
and tells each as its answer comes (``problem.collect``); Optuna's constant
liar scores the running trials as the worst value seen, so a batch spreads
out. Without it, one trial at a time; the random sampler never reads a
result, and TPE draws its first ``n_startup_trials`` trials at random (Optuna
models once that many trials completed), so those proposals run ahead of the
results (``runs_ahead``, bat.core.ahead) and their compiles overlap on
parallel compile workers.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bat.core.ahead import ALWAYS, WAITS, RunsAhead
from bat.core.errors import MissingDependencyError
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed
from bat.tuner_adapters.reference.steps import random_unevaluated

SAMPLERS = ("tpe", "random", "gp", "cmaes")
#: what a sampler needs beyond Optuna
SAMPLER_NEEDS = {"gp": ("torch", "Optuna's GPSampler needs PyTorch"),
                 "cmaes": ("cmaes", "Optuna's CmaEsSampler needs the cmaes package")}
FAILED_VALUE = float("inf")


@dataclass(kw_only=True)
class OptunaTuner(Tuner):
    """Optuna with one of its samplers (``sampler`` in tpe, random, gp, cmaes)."""

    sampler: str = "tpe"
    n_startup_trials: int = 10
    n_ei_candidates: int = 24
    max_stall: int = 50
    constant_liar: bool = False
    fallbacks: int = field(default=0, init=False)
    summary = "Optuna ask/tell with a sampler (TPE by default)"

    @classmethod
    def hyperparameters(cls, variant: Mapping[str, Any]) -> tuple[HyperParam, ...]:
        """TPE: start-up trials and candidates; GP and CMA-ES: start-up trials; random: only the stall limit."""
        stall = HyperParam("max_stall", "int", 50, 5, 500, log=True,
                           doc="rejected or repeated proposals in a row before a random valid one")
        sampler = variant.get("sampler", "tpe")
        startup = HyperParam("n_startup_trials", "int", 10, 1, 100, log=True, doc="random trials before the model")
        if sampler == "tpe":
            return (startup, HyperParam("n_ei_candidates", "int", 24, 4, 256, log=True,
                                        doc="candidates scored by expected improvement per trial"), stall)
        return (startup, stall) if sampler in ("gp", "cmaes") else (stall,)

    @property
    def proposes_batches(self) -> bool:  # type: ignore[override]  # a class flag of Tuner, per instance here (its options)
        """TPE with a constant liar keeps every slot busy: the trials in flight count as the worst value
        seen so far, so the next proposal avoids them."""
        return self.sampler == "tpe" and self.constant_liar

    @property
    def runs_ahead(self) -> RunsAhead:  # type: ignore[override]
        """Random never reads a result; TPE's start-up trials are drawn at random (trial i < n_startup_trials
        sees fewer completed trials than that). GP and CMA-ES are not declared (not checked: their extra
        packages are missing on the test machine)."""
        if self.sampler == "random":
            return RunsAhead(first=ALWAYS)
        return RunsAhead(first=self.n_startup_trials) if self.sampler == "tpe" else WAITS

    @property
    def budget_agnostic(self) -> bool:  # type: ignore[override]  # a class flag of Tuner, per instance here (its options)
        """TPE and random never see the budget (ask/tell until the problem is exhausted); GP and
        CMA-ES are not checked (their extra packages are missing on the test machine)."""
        return self.sampler in ("tpe", "random")

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.max_stall < 1:
            raise ValueError("max_stall must be >= 1")
        if self.constant_liar and self.sampler != "tpe":
            raise ValueError(f"constant_liar is a TPE option, not one of the {self.sampler} sampler")

    def _make_sampler(self, optuna: Any, seed: int) -> Any:
        s = optuna.samplers
        if self.sampler == "tpe":
            # Optuna's own multivariate default (None in 5.0) is kept: it is not a declared option
            return s.TPESampler(seed=seed, n_startup_trials=self.n_startup_trials,
                                n_ei_candidates=self.n_ei_candidates, constant_liar=self.constant_liar)
        if self.sampler == "random":
            return s.RandomSampler(seed=seed)
        if self.sampler == "gp":
            return s.GPSampler(seed=seed, n_startup_trials=self.n_startup_trials)
        return s.CmaEsSampler(seed=seed, n_startup_trials=self.n_startup_trials, warn_independent_sampling=False)

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        try:
            import optuna
        except ImportError as exc:
            raise MissingDependencyError("the optuna tuners need the optuna package (the 'tuners' extra: "
                                         "pip install 'bat-autotune[tuners]')") from exc
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        space = problem.space
        if self.sampler in SAMPLER_NEEDS:
            module, why = SAMPLER_NEEDS[self.sampler]
            if importlib.util.find_spec(module) is None:
                raise MissingDependencyError(f"optuna:{self.sampler}: {why}, which is not installed")
        study = optuna.create_study(direction="minimize", sampler=self._make_sampler(optuna, library_seed(rng)))
        width = problem.slots if self.proposes_batches else 1
        asked: dict[tuple, list[Any]] = {}  # configuration in flight -> its trials, oldest first
        stall = 0
        while True:
            while problem.in_flight < width and not problem.exhausted:
                if stall >= self.max_stall:
                    row = random_unevaluated(problem, rng)
                    if row is None:
                        break
                    study.enqueue_trial({p.name: int(i) for p, i in zip(space.parameters, row, strict=True)})
                    self.fallbacks += 1
                    stall = 0
                trial = study.ask()
                idx = [trial.suggest_int(p.name, 0, len(p.values) - 1) for p in space.parameters]
                config = {p.name: p.values[i] for p, i in zip(space.parameters, idx, strict=True)}
                if not problem.submit(config):
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    break
                asked.setdefault(problem.key(config), []).append(trial)
            if not problem.in_flight:
                return
            answer = problem.collect()
            trial = asked[problem.key(answer.result.config)].pop(0)
            if answer.kind == "rejected":
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                stall += 1
                continue
            stall = stall + 1 if answer.kind == "repeat" else 0
            value = answer.result.fitness
            if not np.isfinite(value):
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(trial, value)
