"""Kernel Tuner adapter: its search strategies, evaluating through our Problem.

How it is driven: the adapter calls a strategy's own ``tune(searchspace,
runner, tuning_options)`` (what Kernel Tuner's ``tune_kernel`` calls) with

- a Kernel Tuner ``Searchspace`` built from the valid configurations our
  space engine lists (its ``from_cache`` construction), so it holds exactly
  the configurations that satisfy our constraints, in our semantics, and
  never proposes one that violates them;
- a runner of ours whose ``run`` sends each configuration to
  ``problem.evaluate`` and answers in Kernel Tuner's result format (the time
  in ``time``, failures as its error markers);
- ``max_fevals`` set to the evaluations left: Kernel Tuner's budget is only
  advanced for configurations the problem charged, so repeats cost nothing,
  as for every tuner.

What differs from the other adapters: Kernel Tuner's strategies draw from
the global ``random`` and ``numpy.random`` generators; the adapter seeds both
from our generator for the run and restores their previous state afterwards.
Its Latin-hypercube sampling (bayes_opt's initial sample, diff_evo's
population) builds SciPy's ``LatinHypercube`` without a seed; for the run the
adapter hands it one drawn from the seeded global generator, so the same seed
gives the same trace, and it orders the neighbouring values Kernel Tuner
collects in a set (bat.tuner_adapters.hash_order), so that holds across processes.

Speed: only the chosen strategy's module is imported (Kernel Tuner loads
strategies lazily; SciPy's ``qmc`` only for the strategies that draw a Latin
hypercube), and the list of a space's valid configurations that Kernel
Tuner's ``Searchspace`` is built from is made once per space object and
reused by every later run on it (a campaign runs hundreds of times on the
same target). The ``Searchspace`` itself is built afresh for each run: it
keeps neighbour caches that strategies fill and pop as they go, so sharing
one would make a run depend on the runs before it.
Points a strategy snaps to a configuration outside its search space are
refused inside Kernel Tuner and never reach the Problem, so they do not
appear in the rejected count. A strategy that ends before the budget is
spent (its own iteration limit, convergence) is restarted with the budget
that is left; after ``max_stall`` repeated proposals in a row the runner
stops the strategy, which is restarted the same way. After
``max_futile_restarts`` restarts in a row that evaluated nothing new the
adapter gives up, leaving budget unspent.

``random_sample`` and ``brute_force`` never read a result (a random sample,
every configuration in order; the restarts count evaluations, not times), so
they declare that their proposals run ahead of the results (``runs_ahead``,
bat.core.ahead): on parallel compile workers their compiles overlap.
"""

from __future__ import annotations

import contextlib
import random
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from bat.core.ahead import ALWAYS, WAITS, RunsAhead
from bat.core.dataset import Status
from bat.core.errors import MissingDependencyError, TunerError
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.space import SearchSpace
from bat.core.tuner import ExpectedFailure, Tuner, library_seed
from bat.tuner_adapters.hash_order import kernel_tuner_searchspace

STRATEGIES = (
    "random_sample", "genetic_algorithm", "simulated_annealing", "dual_annealing", "greedy_ils",
    "bayes_opt", "pso", "firefly_algorithm", "diff_evo", "mls", "brute_force",
    "greedy_mls", "basinhopping", "minimize",
)
#: Kernel Tuner lists the whole valid set; larger spaces are refused with a clear error
MAX_VALID = 1 << 22
OBJECTIVE = "time"
#: strategies that draw a Latin hypercube through SciPy (bayes_opt's initial sample, diff_evo's population)
LHS_STRATEGIES = frozenset({"bayes_opt", "diff_evo"})
#: space -> Kernel Tuner's ``from_cache`` description of its valid configurations, made on first use
_CROSSOVER = ("single_point", "two_point", "uniform", "disruptive_uniform")
_NEIGHBOR = ("Hamming", "adjacent")
_AWARE = HyperParam("constraint_aware", "bool", True, doc="moves only to valid configurations")
#: each strategy's options as Kernel Tuner names them, with its defaults; the ranges are ours
KT_OPTIONS: dict[str, tuple[HyperParam, ...]] = {
    "random_sample": (),  # its one option (fraction) is a budget, which the Problem owns
    "genetic_algorithm": (
        HyperParam("popsize", "int", 26, 4, 100, log=True, doc="population size"),
        HyperParam("maxiter", "int", 90, 10, 300, log=True, doc="generations"),
        HyperParam("method", "choice", "single_point", choices=_CROSSOVER, doc="crossover"),
        HyperParam("mutation_chance", "int", 55, 2, 200, log=True, doc="a gene mutates with chance 1 in this"),
        _AWARE),
    "simulated_annealing": (
        HyperParam("T", "float", 0.1, 0.001, 10.0, log=True, doc="starting temperature"),
        HyperParam("T_min", "float", 0.0001, 1e-6, 0.01, log=True, doc="end temperature"),
        HyperParam("alpha", "float", 0.9975, 0.9, 0.9999, doc="cooling factor"),
        HyperParam("maxiter", "int", 1, 1, 20, doc="iterations per temperature step"),
        _AWARE),
    "pso": (
        HyperParam("popsize", "int", 50, 4, 100, log=True, doc="swarm size"),
        HyperParam("maxiter", "int", 190, 10, 500, log=True, doc="iterations"),
        HyperParam("w", "float", 0.5, 0.1, 1.0, doc="inertia"),
        HyperParam("c1", "float", 3.5, 0.5, 4.0, doc="cognitive constant"),
        HyperParam("c2", "float", 1.0, 0.5, 4.0, doc="social constant"),
        _AWARE),
    "firefly_algorithm": (
        HyperParam("popsize", "int", 20, 4, 100, log=True, doc="swarm size"),
        HyperParam("maxiter", "int", 100, 10, 300, log=True, doc="iterations"),
        HyperParam("B0", "float", 1.0, 0.1, 2.0, doc="maximum attractiveness"),
        HyperParam("gamma", "float", 1.0, 0.01, 10.0, log=True, doc="light absorption"),
        HyperParam("alpha", "float", 0.2, 0.01, 1.0, log=True, doc="randomization"),
        _AWARE),
    "diff_evo": (
        HyperParam("popsize", "int", 16, 4, 64, log=True, doc="population size (x dimensions unless disabled)"),
        HyperParam("popsize_times_dimensions", "bool", True, doc="multiply the population by the dimensions"),
        HyperParam("F", "float", 0.7, 0.1, 1.5, doc="differential weight"),
        HyperParam("CR", "float", 0.6, 0.0, 1.0, doc="crossover rate"),
        HyperParam("method", "choice", "best1bin", choices=("best1bin", "rand1bin", "best2bin", "rand2bin",
                                                            "currenttobest1bin", "randtobest1bin"), doc="scheme"),
        _AWARE),
    "greedy_ils": (
        HyperParam("neighbor", "choice", "Hamming", choices=_NEIGHBOR, doc="neighbourhood"),
        HyperParam("restart", "bool", True, doc="move as soon as a neighbour improves"),
        HyperParam("no_improvement", "int", 50, 5, 500, log=True, doc="evaluations without gain before a restart"),
        HyperParam("random_walk", "float", 0.3, 0.0, 1.0, doc="share of parameters perturbed at a restart"),
    ),
    "mls": (
        HyperParam("neighbor", "choice", "Hamming", choices=_NEIGHBOR, doc="neighbourhood"),
        HyperParam("restart", "bool", False, doc="move as soon as a neighbour improves"),
        HyperParam("randomize", "bool", True, doc="random order of the dimensions"),
    ),
    "greedy_mls": (
        HyperParam("neighbor", "choice", "Hamming", choices=_NEIGHBOR, doc="neighbourhood"),
        HyperParam("restart", "bool", True, doc="move as soon as a neighbour improves"),
        HyperParam("randomize", "bool", True, doc="random order of the dimensions"),
    ),
    "basinhopping": (
        HyperParam("T", "float", 1.0, 0.01, 10.0, log=True, doc="temperature of the accept test"),
    ),
}
_VALID_CACHES: weakref.WeakKeyDictionary[SearchSpace, dict[str, Any]] = weakref.WeakKeyDictionary()


@dataclass(kw_only=True)
class KernelTunerStrategy(Tuner):
    """One Kernel Tuner strategy (``strategy``) with its ``strategy_options``."""

    strategy: str = "random_sample"
    strategy_options: dict[str, Any] = field(default_factory=dict)
    max_stall: int = 100
    max_futile_restarts: int = 3
    #: how many times the strategy was (re)started in the last run
    starts: int = field(default=0, init=False)
    summary = "Kernel Tuner strategy driven through its tune(searchspace, runner, options)"
    #: strategies that fail on a space smaller than their population or initial sample
    TOO_SMALL: ClassVar[dict[str, tuple[type[Exception], str]]] = {
        "bayes_opt": (ValueError, "its initial sample is larger than a 6-configuration space"),
        "diff_evo": (IndexError, "its population is larger than a 6-configuration space"),
        "firefly_algorithm": (IndexError, "its swarm is larger than a 6-configuration space"),
    }
    #: strategies whose share of repeated proposals is above the battery's bound
    WASTEFUL: ClassVar[dict[str, str]] = {
        "basinhopping": "SciPy's basin hopping steps back to configurations it has evaluated: about 87 % of "
                        "its proposals in the battery are repeats (answered from memory, no budget)",
    }

    @classmethod
    def hyperparameters(cls, variant: Mapping[str, Any]) -> tuple[HyperParam, ...]:
        """The strategy's own options (into ``strategy_options``; defaults Kernel Tuner's) and the adapter's."""
        own = tuple(replace(p, into="strategy_options") for p in KT_OPTIONS.get(variant.get("strategy", ""), ()))
        return (*own,
                HyperParam("max_stall", "int", 100, 10, 1000, log=True,
                           doc="repeated proposals in a row before the strategy is restarted"),
                HyperParam("max_futile_restarts", "int", 3, 1, 10, doc="restarts without a new evaluation "
                                                                       "before giving up"))

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        reserved = {"max_fevals", "time_limit"} & set(self.strategy_options)
        if reserved:
            raise ValueError(f"strategy_options may not set {sorted(reserved)}: the Problem owns the budget")
        if self.max_stall < 1 or self.max_futile_restarts < 1:
            raise ValueError("max_stall and max_futile_restarts must be >= 1")

    @property
    def battery_expected_failures(self) -> dict[str, ExpectedFailure]:  # type: ignore[override]  # a class flag of Tuner, per instance here (its options)
        """Checks of :mod:`bat.testing` this strategy is known to fail, with the exception and reason."""
        declared = {}
        if self.strategy in self.TOO_SMALL:
            raises, reason = self.TOO_SMALL[self.strategy]
            declared["small_space"] = ExpectedFailure(raises, f"Kernel Tuner {self.strategy}: {reason}")
        if self.strategy in self.WASTEFUL:
            declared["proposal_waste"] = ExpectedFailure(AssertionError, self.WASTEFUL[self.strategy])
        return declared

    @property
    def runs_ahead(self) -> RunsAhead:  # type: ignore[override]
        """A random sample and the exhaustive search read no result (see the module docstring)."""
        return RunsAhead(first=ALWAYS) if self.strategy in ("random_sample", "brute_force") else WAITS

    @property
    def slow(self) -> bool:  # type: ignore[override]  # a class flag of Tuner, per instance here (its options)
        """Bayesian optimisation fits a Gaussian process per step: seconds on a tiny space."""
        return self.strategy == "bayes_opt"

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        try:
            from kernel_tuner import util
            from kernel_tuner.interface import Options, strategy_map
        except ImportError as exc:
            raise MissingDependencyError("the kernel_tuner tuners need the kernel_tuner package (the 'tuners' "
                                         "extra: pip install 'bat-autotune[tuners]')") from exc
        space = problem.space
        total = space.count_valid()
        if total > MAX_VALID:
            raise TunerError(f"kernel_tuner:{self.strategy}: space {space.name} has {total} valid "
                             f"configurations; Kernel Tuner lists them all (limit {MAX_VALID})")
        tune_params, searchspace = _searchspace(space)
        strategy = strategy_map[self.strategy]
        runner = _ProblemRunner(problem, space.names, self.max_stall, util)
        self.starts, futile = 0, 0
        with _seeded_globals(library_seed(rng), self.strategy):
            while not problem.exhausted and problem.stats.evaluated < total:
                before = problem.stats.evaluated
                remaining = problem.remaining if problem.remaining is not None else total
                options = _options(util, Options, tune_params, self.strategy, self.strategy_options,
                                   min(remaining, total - before))
                runner.stall = 0
                self.starts += 1
                with contextlib.suppress(util.StopCriterionReached):
                    strategy.tune(searchspace, runner, options)
                futile = futile + 1 if problem.stats.evaluated == before else 0
                if futile >= self.max_futile_restarts:
                    return


def _searchspace(space: SearchSpace) -> tuple[dict[str, list], Any]:
    """(tune_params, a fresh Kernel Tuner ``Searchspace`` holding exactly our valid configurations)."""
    if space not in _VALID_CACHES:
        frame = space.decode(space.from_ids(space.valid_ids()))
        columns = [frame[name].tolist() for name in space.names]  # plain Python values
        _VALID_CACHES[space] = {
            "tune_params": {p.name: list(p.values) for p in space.parameters},
            "cache": {str(i): dict(zip(space.names, row, strict=True))
                      for i, row in enumerate(zip(*columns, strict=True))},
        }
    described = _VALID_CACHES[space]
    return described["tune_params"], kernel_tuner_searchspace()(None, None, None, from_cache=described)


class _ProblemRunner:
    """Kernel Tuner's runner interface, answering from our Problem."""

    def __init__(self, problem: Problem, names: tuple[str, ...], max_stall: int, util: Any) -> None:
        self.problem, self.names, self.max_stall, self.util = problem, names, max_stall, util
        self.stall = 0
        # bayes_opt reads the device's thread limit; our space's constraints already hold it
        self.dev = SimpleNamespace(max_threads=1 << 30)

    def add_strategy_time(self, seconds: float) -> None:
        """Kernel Tuner reports its strategy time here; the Problem measures it itself."""

    def run(self, parameter_space: Any, tuning_options: Any) -> list[dict[str, Any] | None]:
        out: list[dict[str, Any] | None] = []
        for element in parameter_space:
            if self.problem.exhausted or self.stall >= self.max_stall:
                out.append(None)  # Kernel Tuner's sign that the budget is spent
                continue
            config = {n: _plain(v) for n, v in zip(self.names, element, strict=True)}
            fresh = not self.problem.is_evaluated(config)
            result = self.problem.evaluate(config)
            if fresh:
                tuning_options.budget.add_evaluations(1)
                self.stall = 0
            else:
                self.stall += 1
            answer: dict[str, Any] = dict(config)
            if result.ok:
                answer[OBJECTIVE] = result.fitness
            else:
                error = (self.util.CompilationFailedConfig() if result.status is Status.COMPILE_ERROR
                         else self.util.RuntimeFailedConfig())
                answer[OBJECTIVE] = error
                answer["__error__"] = error
            out.append(answer)
        return out


def _options(util: Any, options_cls: type, tune_params: dict, strategy: str,
             strategy_options: dict, max_fevals: int) -> Any:
    return options_cls(
        tune_params=tune_params,
        restrictions=[],
        restrictions_unmodified=[],
        strategy=strategy,
        strategy_options=options_cls(strategy_options),
        objective=[OBJECTIVE],
        objective_higher_is_better=[False],
        metrics=None,
        verbose=False,
        max_fevals=max_fevals,
        budget=util.TuningBudget(None, max_fevals),
        cache={},
        simulation_mode=True,
        seed=None,
    )


@contextlib.contextmanager
def _seeded_globals(seed: int, strategy: str) -> Iterator[None]:
    """Seed ``random`` and ``numpy.random`` (and SciPy's Latin hypercube where ``strategy`` draws one).

    The previous states are restored afterwards.
    """
    py_state, np_state = random.getstate(), np.random.get_state()  # before imports that may draw
    holders: list[Any] = []
    if strategy in LHS_STRATEGIES:  # the searchspace imports the class from qmc when it samples
        from scipy.stats import qmc

        holders.append(qmc)
        original = qmc.LatinHypercube
        if strategy == "bayes_opt":  # binds the class when imported
            import kernel_tuner.strategies.bayes_opt as bayes_opt

            holders.append(bayes_opt)

        def seeded_lhs(d: int, **kwargs: Any) -> Any:
            if kwargs.get("rng") is None and kwargs.get("seed") is None:
                kwargs["rng"] = int(np.random.randint(0, 2**31 - 1))
            return original(d, **kwargs)

    random.seed(seed)
    np.random.seed(seed)  # Kernel Tuner draws from the global generator
    for module in holders:
        module.LatinHypercube = seeded_lhs
    try:
        yield
    finally:
        for module in holders:
            module.LatinHypercube = original
        random.setstate(py_state)
        np.random.set_state(np_state)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
