"""Each reference strategy follows its algorithm (METHODS.md), checked on small spaces."""

from __future__ import annotations

import numpy as np
import pytest

from bat.core.problem import Budget, Problem
from bat.core.space import Constraint, Parameter, SearchSpace
from bat.testing.synthetic import FakeBackend, constrained_space
from bat.tuner_adapters.reference.coordinate import CoordinateSearch
from bat.tuner_adapters.reference.genetic import GeneticAlgorithm
from bat.tuner_adapters.reference.grid import GridSearch
from bat.tuner_adapters.reference.nelder_mead import NelderMead, _converged
from bat.tuner_adapters.reference.shrinking_sample import ShrinkingSample, median, sections
from bat.tuner_adapters.reference.steps import NearestValid, iter_product


def _problem(space: SearchSpace, n: int) -> tuple[Problem, FakeBackend]:
    backend = FakeBackend()
    return Problem(space=space, backend=backend, budget=Budget(max_evals=n)), backend


def _grid_space() -> SearchSpace:
    return SearchSpace("g", [Parameter("x", tuple(range(9))), Parameter("y", tuple(range(7)))])


class _Bowl:
    """Backend whose time is a bowl centred on (cx, cy) in value space; records calls."""

    name = "bowl"

    def __init__(self, cx: float, cy: float) -> None:
        self.c = (cx, cy)
        self.inner = FakeBackend()

    def describe(self) -> str:
        return "bowl"

    def evaluate(self, config):
        from bat.core.dataset import Status
        from bat.core.problem import EvalResult

        self.inner.calls.append(dict(config))
        ms = 1.0 + (config["x"] - self.c[0]) ** 2 + (config["y"] - self.c[1]) ** 2
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=ms, cost_s=0.1)

    def close(self) -> None:
        pass


def test_grid_order_is_flat_id_order() -> None:
    space = constrained_space()
    problem, backend = _problem(space, 40)
    GridSearch().tune(problem, np.random.default_rng(0))
    ids = space.to_ids(space.encode(backend.calls))
    assert list(ids) == sorted(ids)
    assert list(ids) == list(space.valid_ids()[:40])


def test_sections_and_medians() -> None:
    assert sections(range(9), 3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert [median(s) for s in sections(range(8), 3)] == [1, 4, 6]
    assert sections(range(2), 3) == [[0], [1]]


def test_shrinking_sample_first_round_is_grid_of_section_medians() -> None:
    space = _grid_space()
    backend = _Bowl(7, 1)
    problem = Problem(space=space, backend=backend, budget=Budget(max_evals=60))
    tuner = ShrinkingSample(k=3, v_th=1)
    tuner.tune(problem, np.random.default_rng(0))
    first = [(c["x"], c["y"]) for c in backend.inner.calls[:9]]
    assert first == [(x, y) for x in (1, 4, 7) for y in (1, 3, 5)]
    assert tuner.rounds[0] == [[1, 4, 7], [1, 3, 5]]
    # the second round splits the kept sections (x in 6..8, y in 0..2), which hold the best (7, 1)
    assert tuner.rounds[1] == [[6, 7, 8], [0, 1, 2]]


def test_shrinking_sample_skips_invalid_medians() -> None:
    space = constrained_space()
    problem, backend = _problem(space, 30)
    ShrinkingSample(k=2, v_th=1).tune(problem, np.random.default_rng(0))
    assert space.is_valid(space.encode(backend.calls)).all()


def test_coordinate_search_shrinks_only_after_a_round_without_improvement() -> None:
    space = _grid_space()
    problem = Problem(space=space, backend=_Bowl(8, 6), budget=Budget(max_evals=63))
    tuner = CoordinateSearch(initial_step=4.0, shrink=0.75, min_step=1.0)
    tuner.tune(problem, np.random.default_rng(3))
    assert tuner.rounds, "no round was recorded"
    for (step, improved), (next_step, _) in zip(tuner.rounds, tuner.rounds[1:], strict=False):
        if improved:
            assert next_step == step or next_step == 4.0  # same step, or a restart
        elif step > 1.0:
            assert next_step == pytest.approx(max(1.0, step * 0.75))
    # the search stops after two unsuccessful rounds at the minimum step (then restarts at 4.0)
    at_min = [i for i, (s, imp) in enumerate(tuner.rounds) if s == 1.0 and not imp]
    assert len(at_min) >= 2


def test_nelder_mead_rounds_to_nearest_valid() -> None:
    space = SearchSpace("nm", [Parameter("a", tuple(range(6))), Parameter("b", tuple(range(6)))],
                        [Constraint("a + b <= 5")])
    rounder = NearestValid(space, np.random.default_rng(0))
    assert list(rounder(np.array([1.2, 2.6]))) == [1, 3]
    nearest = rounder(np.array([4.6, 4.4]))  # rounds to (5, 4): invalid; nearest valid is (3, 2)
    assert space.is_valid(nearest[None, :])[0]
    assert list(nearest) == [3, 2]


def test_nelder_mead_converges_on_duplicate_vertex_and_restarts() -> None:
    assert _converged([np.array([1, 2]), np.array([1, 2]), np.array([0, 0])])
    assert not _converged([np.array([1, 2]), np.array([2, 2]), np.array([0, 0])])
    space = _grid_space()
    problem = Problem(space=space, backend=_Bowl(3, 3), budget=Budget(max_evals=40))
    tuner = NelderMead()
    tuner.tune(problem, np.random.default_rng(0))
    assert problem.stats.evaluated == 40
    assert tuner.restarts >= 1
    assert problem.best.config == {"x": 3, "y": 3}


def test_genetic_offspring_are_valid_and_new() -> None:
    space = constrained_space()
    problem, backend = _problem(space, 120)
    tuner = GeneticAlgorithm(population=10, mutation_rate=0.2)
    tuner.tune(problem, np.random.default_rng(5))
    assert space.is_valid(space.encode(backend.calls)).all()
    assert problem.stats.rejected == 0
    assert problem.stats.evaluated == 120


def test_iter_product_last_parameter_fastest() -> None:
    rows = np.concatenate(list(iter_product([[0, 2], [1, 3, 5]], chunk=4)))
    assert rows.tolist() == [[0, 1], [0, 3], [0, 5], [2, 1], [2, 3], [2, 5]]


@pytest.mark.parametrize("cls, kwargs", [
    (ShrinkingSample, {"k": 1}), (CoordinateSearch, {"shrink": 1.0}), (NelderMead, {"gamma": 0.5}),
    (GeneticAlgorithm, {"elite": 50}), (GridSearch, {"chunk": 0}),
])
def test_hyper_parameters_are_validated(cls, kwargs) -> None:
    with pytest.raises(ValueError):
        cls(**kwargs)
