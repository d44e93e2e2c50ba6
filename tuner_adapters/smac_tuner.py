"""SMAC3 adapter: the HPO facade (random forest) and the black-box facade (Gaussian process).

Driven through SMAC's ask/tell interface, so every evaluation goes through
our Problem. The space is handed to SMAC by :mod:`bat.tuner_adapters.smac_space`:
each parameter is an integer hyper-parameter over the indices of its ordered
values, so the models see the order of the values. ``deterministic`` is set
(a configuration is measured once, as the Problem answers repeats from
memory).

Constraints are given to SMAC as ConfigSpace forbidden clauses that forbid
exactly the violating value combinations of each constraint's parameters, so
SMAC's own sampling (initial design, random interleaving, local search of the
acquisition function) proposes only valid configurations. SMAC's model and
acquisition are unchanged; what changes is that a rejected proposal no longer
costs a model fit. (Telling SMAC "crashed" for each violating proposal and
asking again cost one fit per rejection: with four in five configurations
invalid, the tuner battery took minutes, and SMAC spent its budget of asks
learning where the constraints are, which the space already knows.) The
surrogate still sees every dimension of the index grid, so this is the usual
SMAC with a constrained ConfigSpace, not a different algorithm.

A constraint whose parameters span more than ``smac_space.MAX_PRODUCT``
combinations is not expressed; a proposal that violates it is answered by the
Problem as rejected (no budget, never sent to the backend) and told to SMAC
as crashed. A repeated proposal is answered from the Problem's memory (no
budget) and told with its earlier cost. After ``max_stall`` proposals in a
row that were rejected or repeated, or when SMAC says it has nothing new to
propose, the adapter tells SMAC one random valid, not yet evaluated
configuration itself (counted in ``fallbacks``).

Speed: the HPO facade's random forest runs its trees on all cores through
thread pools by default, and the Gaussian process's fits (and the
acquisition's predictions) call BLAS, whose thread pool also spans all
cores; on a small or busy machine both cost more than they save (the BLAS
threads made the black-box facade three times slower on a loaded 2-core
machine). The adapter builds the same random forest (the facade's own
arguments) with ``n_jobs`` (1 by default) and limits the BLAS thread pools to
``n_jobs`` during the run (threadpoolctl, which scikit-learn brings; -1
leaves both at their defaults): the same algorithm, single-threaded. The
forest's trees are built with room for 2^20 leaves, about 144 MiB of node
arrays per tree fit that glibc maps and unmaps each time (2.6 M page faults
in a 60-trial GEMM run); the run therefore keeps freed memory in the heap
(``bat.tuner_adapters.heap``). SMAC writes its run files into a temporary
directory that is removed after the run.

Determinism: SMAC's local search starts from a set of configurations, whose
order depends on the per-process string hash; the adapter hands the facade
its own maximizer with those start points in a fixed order
(bat.tuner_adapters.hash_order), so a seed gives the same trace in every process.

Settings that differ from SMAC's defaults, all of them: the forest's
``n_jobs`` and the BLAS threads (1 instead of all cores; ``n_jobs=-1``
restores both), the allocator (not a SMAC setting) and the order of the
local search's start points (above). The proposals are SMAC's own: with the
same seed the adapter evaluates the same trials as the default facade given
the same ordered local search (``bench/smac_bench.py`` checks it).
``retrain_after`` (refit the surrogate after this many proposals) is SMAC's
own default unless given (8 for the HPO facade, 1 for the black-box
facade); a larger value refits less often and makes a run faster, but
changes the proposals (bench/RESULTS.md has a measurement of both).
"""
from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bat.core.dataset import Status
from bat.core.errors import MissingDependencyError
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed
from bat.tuner_adapters.hash_order import smac_maximizer
from bat.tuner_adapters.heap import heap_kept
from bat.tuner_adapters.reference.steps import random_unevaluated
from bat.tuner_adapters.smac_space import configuration_space

FACADES = ("hpo", "blackbox")
#: the cost SMAC is told for a failed configuration, or one violating an unexpressed constraint (ms)
CRASH_COST = 1e10


@dataclass(kw_only=True)
class SmacTuner(Tuner):
    """SMAC3 with the HPO facade (random forest) or the black-box facade (GP), on ``n_jobs`` threads."""

    facade: str = "hpo"
    n_jobs: int = 1
    retrain_after: int | None = None
    max_stall: int = 50
    fallbacks: int = field(default=0, init=False)
    smac_warnings: dict[str, int] = field(default_factory=dict, init=False)  # SMAC's log warnings, counted
    summary = ("SMAC3 ask/tell (HPO facade: random forest; blackbox facade: Gaussian process); "
               "constraints as ConfigSpace forbidden clauses")
    notes = ("differs from SMAC's defaults only in threads (forest n_jobs and BLAS on n_jobs threads, 1 by "
             "default), in the allocator (freed memory kept in the heap during the run) and in the local "
             "search's start points taken in a fixed order (the same trace in every process); retrain_after is "
             "SMAC's default unless set")
    slow = True  # a surrogate refit per trial: seconds on a tiny space

    @classmethod
    def hyperparameters(cls, variant: Mapping[str, Any]) -> tuple[HyperParam, ...]:
        """Refit interval (SMAC's default: 8 for the HPO facade, 1 for the black-box one), stall limit, threads."""
        refit = 1 if variant.get("facade", "hpo") == "blackbox" else 8
        return (
            HyperParam("retrain_after", "int", refit, 1, 32, log=True, doc="proposals between surrogate refits"),
            HyperParam("max_stall", "int", 50, 5, 500, log=True,
                       doc="rejected or repeated proposals in a row before a random valid one"),
            HyperParam("n_jobs", "choice", 1, choices=(1, 2, 4, 8, -1),
                       doc="threads of the forest and BLAS (-1: all cores); does not change the proposals"),
        )

    def __post_init__(self) -> None:
        if self.facade not in FACADES:
            raise ValueError(f"facade must be one of {FACADES}, got {self.facade!r}")
        if self.n_jobs == 0 or self.n_jobs < -1:
            raise ValueError(f"n_jobs must be >= 1 or -1 (all cores), got {self.n_jobs}")
        if self.max_stall < 1:
            raise ValueError(f"max_stall must be >= 1, got {self.max_stall}")
        if self.retrain_after is not None and self.retrain_after < 1:
            raise ValueError(f"retrain_after must be >= 1, got {self.retrain_after}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        try:
            import smac  # noqa: F401 - checked here for a clear error
        except ImportError as exc:
            raise MissingDependencyError("the smac tuners need the smac package, SMAC3 (the 'tuners' extra: "
                                         "pip install 'bat-autotune[tuners]')") from exc
        from threadpoolctl import threadpool_limits

        threads = threadpool_limits(limits=self.n_jobs) if self.n_jobs > 0 else contextlib.nullcontext()
        self.smac_warnings = {}
        with threads, heap_kept(), _smac_log_counted(self.smac_warnings), \
                tempfile.TemporaryDirectory(prefix="bat-smac-") as tmp:
            self._tune(problem, rng, tmp)

    def run_report(self) -> dict[str, Any]:
        """Random fallbacks, and SMAC's log warnings counted by message (kept out of the console)."""
        return {"fallbacks": self.fallbacks, "smac_warnings": dict(self.smac_warnings)}

    def _tune(self, problem: Problem, rng: np.random.Generator, outdir: str) -> None:
        from ConfigSpace import Configuration
        from smac import BlackBoxFacade, HyperparameterOptimizationFacade, Scenario
        from smac.main.exceptions import ConfigurationSpaceExhaustedException
        from smac.runhistory.dataclasses import TrialInfo, TrialValue
        from smac.runhistory.enumerations import StatusType

        space = problem.space
        seed = library_seed(rng)
        cs, _ = configuration_space(space, seed)
        n_trials = problem.budget.max_evals or 10_000
        scenario = Scenario(cs, name="bat", output_directory=Path(outdir), deterministic=True,
                            n_trials=n_trials, seed=seed, crash_cost=CRASH_COST)
        facade_cls = HyperparameterOptimizationFacade if self.facade == "hpo" else BlackBoxFacade
        parts: dict[str, Any] = {}
        if self.facade == "hpo":
            parts["model"] = _hpo_model(scenario, self.n_jobs)
        if self.retrain_after is not None:
            parts["config_selector"] = facade_cls.get_config_selector(scenario, retrain_after=self.retrain_after)
        facade = facade_cls(scenario, _never_called, logging_level=False, overwrite=True,
                            acquisition_maximizer=smac_maximizer(facade_cls, scenario), **parts)
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
                facade.tell(info, TrialValue(cost=result.fitness), save=False)
            else:
                facade.tell(info, TrialValue(cost=CRASH_COST, status=StatusType.CRASHED), save=False)


@contextlib.contextmanager
def _smac_log_counted(counts: dict[str, int]) -> Iterator[None]:
    """SMAC's warnings during a run counted in ``counts`` instead of printed.

    With ``logging_level=False`` SMAC installs no handler, so Python's last-resort handler
    printed lines such as "Did not find enough configurations from the acquisition
    function" on the user's console, many times a run. A user who configured a handler on
    SMAC's logger keeps it.
    """
    logger = logging.getLogger("smac")

    class Counter(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            counts[message] = counts.get(message, 0) + 1

    counter = Counter(level=logging.WARNING)
    quiet = not logger.handlers
    logger.addHandler(counter)
    previous = logger.propagate
    if quiet:
        logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(counter)
        logger.propagate = previous


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
