"""SMAC3 adapter: the HPO facade (random forest) and the black-box facade (Gaussian process).

Driven through SMAC's ask/tell interface, so every evaluation goes through
our Problem. Each parameter is a SMAC integer hyper-parameter over the
indices of its ordered values (a constant for a single-valued parameter), so
the models see the order of the values. ``deterministic`` is set (a
configuration is measured once, as the Problem answers repeats from memory).

Constraints: SMAC does not know them (forbidden clauses cannot express
arithmetic constraints such as ``MWG % (MDIMC * VWM) == 0``). A proposal that
violates one is answered by the Problem as rejected (no budget, never sent to
the backend) and told to SMAC as crashed, so its model learns to avoid the
region. A repeated proposal is answered from the Problem's memory (no
budget) and told to SMAC with its earlier cost. After ``max_stall`` proposals
in a row that were rejected or repeated, or when SMAC says it has nothing new
to propose, the adapter tells SMAC one random valid, not yet evaluated
configuration itself (counted in ``fallbacks``).

Speed: the HPO facade's random forest runs its trees on all cores through
thread pools by default; on a small machine that costs more than it saves.
The adapter builds the same random forest (the facade's own arguments) with
``n_jobs`` (1 by default): the same algorithm, single-threaded. SMAC writes
its run files into a temporary directory that is removed after the run.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bat.dataset import Status
from bat.errors import MissingDependencyError
from bat.problem import Problem
from bat.tuner import Tuner, library_seed
from tuner_adapters.reference.steps import random_unevaluated

FACADES = ("hpo", "blackbox")
#: the cost SMAC is told for a failed or constraint-violating configuration (ms)
CRASH_COST = 1e10


@dataclass(kw_only=True)
class SmacTuner(Tuner):
    """SMAC3 with the HPO facade (random forest, ``n_jobs`` threads) or the black-box facade (GP)."""

    facade: str = "hpo"
    n_jobs: int = 1
    max_stall: int = 50
    fallbacks: int = field(default=0, init=False)
    summary = "SMAC3 ask/tell (HPO facade: random forest; blackbox facade: Gaussian process)"

    def __post_init__(self) -> None:
        if self.facade not in FACADES:
            raise ValueError(f"facade must be one of {FACADES}, got {self.facade!r}")
        if self.n_jobs == 0 or self.n_jobs < -1:
            raise ValueError(f"n_jobs must be >= 1 or -1 (all cores), got {self.n_jobs}")
        if self.max_stall < 1:
            raise ValueError(f"max_stall must be >= 1, got {self.max_stall}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        try:
            import smac  # noqa: F401 - checked here for a clear error
        except ImportError as exc:
            raise MissingDependencyError("the smac tuners need the smac package (SMAC3)") from exc
        with tempfile.TemporaryDirectory(prefix="bat-smac-") as tmp:
            self._tune(problem, rng, tmp)

    def _tune(self, problem: Problem, rng: np.random.Generator, outdir: str) -> None:
        from ConfigSpace import Configuration, ConfigurationSpace, Constant, Integer
        from smac import BlackBoxFacade, HyperparameterOptimizationFacade, Scenario
        from smac.main.exceptions import ConfigurationSpaceExhaustedException
        from smac.runhistory.dataclasses import TrialInfo, TrialValue
        from smac.runhistory.enumerations import StatusType

        space = problem.space
        seed = library_seed(rng)
        cs = ConfigurationSpace(seed=seed)
        cs.add([Integer(p.name, (0, len(p.values) - 1)) if len(p.values) > 1 else Constant(p.name, 0)
                for p in space.parameters])
        n_trials = problem.budget.max_evals or 10_000
        scenario = Scenario(cs, name="bat", output_directory=outdir, deterministic=True,
                            n_trials=n_trials, seed=seed, crash_cost=CRASH_COST)
        if self.facade == "hpo":
            model = _hpo_model(scenario, self.n_jobs)
            facade = HyperparameterOptimizationFacade(scenario, _never_called, model=model,
                                                      logging_level=False, overwrite=True)
        else:
            facade = BlackBoxFacade(scenario, _never_called, logging_level=False, overwrite=True)
        self.fallbacks, stall = 0, 0
        while not problem.exhausted:
            if stall >= self.max_stall:
                row = random_unevaluated(problem, rng)
                if row is None:
                    return
                info = TrialInfo(Configuration(cs, values={p.name: int(i) for p, i in
                                                           zip(space.parameters, row, strict=True)}),
                                 seed=0)
                self.fallbacks += 1
            else:
                try:
                    info = facade.ask()
                except ConfigurationSpaceExhaustedException:  # SMAC found nothing new to propose
                    stall = self.max_stall
                    continue
            config = {p.name: p.values[int(info.config[p.name])] for p in space.parameters}
            seen = problem.is_evaluated(config)
            result = problem.evaluate(config)
            charged = not seen and result.status is not Status.CONSTRAINT_VIOLATION
            stall = 0 if charged else stall + 1
            if result.ok:
                facade.tell(info, TrialValue(cost=float(result.objective_ms)), save=False)
            else:
                facade.tell(info, TrialValue(cost=CRASH_COST, status=StatusType.CRASHED), save=False)


def _hpo_model(scenario: Any, n_jobs: int) -> Any:
    """The HPO facade's random forest, with the facade's default arguments, on ``n_jobs`` threads."""
    import inspect

    from smac import HyperparameterOptimizationFacade
    from smac.model.random_forest import RandomForest

    defaults = {name: p.default for name, p in
                inspect.signature(HyperparameterOptimizationFacade.get_model).parameters.items()
                if p.kind is p.KEYWORD_ONLY}
    return RandomForest(log_y=True, configspace=scenario.configspace,
                        instance_features=scenario.instance_features, seed=scenario.seed,
                        n_jobs=n_jobs, **defaults)


def _never_called(config: Any, seed: int = 0) -> float:
    """SMAC wants a target function; with ask/tell it is never called."""
    raise AssertionError("SMAC called the target function; the adapter drives it with ask/tell")
