"""Library adapters: how each is driven, and what each promises beyond the battery."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bat.core.problem import Budget, Problem
from bat.registry import make_tuner, tuner_entry, tuner_names
from bat.testing.synthetic import FakeBackend, constrained_space
from bat.tuner_adapters.kernel_tuner_tuner import STRATEGIES, KernelTunerStrategy

REQUIRED_KT = ("random_sample", "genetic_algorithm", "simulated_annealing", "dual_annealing", "greedy_ils",
               "bayes_opt", "pso", "firefly_algorithm", "diff_evo", "mls", "brute_force")


def test_registry_names_every_required_tuner() -> None:
    names = set(tuner_names())
    required = {"optuna", "optuna:random", "optuna:gp", "optuna:cmaes", "smac", "smac:bo",
                *(f"kernel_tuner:{s}" for s in REQUIRED_KT),
                *(f"reference:{s}" for s in ("random", "grid", "shrinking_sample", "nelder_mead",
                                             "coordinate", "genetic", "random_forest"))}
    assert required <= names, sorted(required - names)
    for name in names:
        if name.startswith("kernel_tuner:"):
            assert "through our Problem" in tuner_entry(name).summary


def test_kernel_tuner_restores_global_random_state() -> None:
    import kernel_tuner.interface  # noqa: F401 - imported first: importing it may draw from `random`

    random.seed(123)
    np.random.seed(123)
    before = (random.random(), np.random.random())
    random.seed(123)
    np.random.seed(123)
    problem = Problem(space=constrained_space(), backend=FakeBackend(), budget=Budget(max_evals=10))
    make_tuner("kernel_tuner:genetic_algorithm").tune(problem, np.random.default_rng(0))
    assert (random.random(), np.random.random()) == before


def test_kernel_tuner_never_proposes_an_invalid_configuration() -> None:
    """Its search space is built from our valid set: the Problem rejects nothing."""
    for strategy in ("genetic_algorithm", "pso", "simulated_annealing"):
        problem = Problem(space=constrained_space(), backend=FakeBackend(), budget=Budget(max_evals=30))
        make_tuner(f"kernel_tuner:{strategy}").tune(problem, np.random.default_rng(2))
        assert problem.stats.rejected == 0, strategy
        assert problem.stats.evaluated == 30, strategy


def test_kernel_tuner_options_are_validated() -> None:
    with pytest.raises(ValueError, match="strategy must be one of"):
        KernelTunerStrategy(strategy="nope")
    with pytest.raises(ValueError, match="Problem owns the budget"):
        KernelTunerStrategy(strategy="pso", strategy_options={"max_fevals": 3})
    assert set(REQUIRED_KT) <= set(STRATEGIES)


def test_kernel_tuner_seed_changes_the_trace() -> None:
    calls = []
    for seed in (0, 1):
        backend = FakeBackend()
        problem = Problem(space=constrained_space(), backend=backend, budget=Budget(max_evals=10))
        make_tuner("kernel_tuner:random_sample").tune(problem, np.random.default_rng(seed))
        calls.append(backend.calls)
    assert calls[0] != calls[1]


def test_optuna_rejected_proposals_are_counted_not_charged() -> None:
    backend = FakeBackend()
    problem = Problem(space=constrained_space(), backend=backend, budget=Budget(max_evals=20))
    make_tuner("optuna:random").tune(problem, np.random.default_rng(0))
    assert problem.stats.evaluated == len(backend.calls) == 20
    assert problem.stats.rejected > 0  # four in five configurations of this space are invalid


def test_smac_options_are_validated() -> None:
    from bat.tuner_adapters.smac_tuner import SmacTuner

    with pytest.raises(ValueError, match="facade"):
        SmacTuner(facade="nope")
    with pytest.raises(ValueError, match="n_jobs"):
        SmacTuner(n_jobs=0)
