"""Configurations the space makes carry their integers (bat.core.indexed_config), and every path agrees with values.

The Problem keys, checks and forwards an IndexedConfig by its flat id, and
the replay backend finds its recorded row by it; these tests show that each
answer is the one the same configuration given as a plain dict gets, that an
edited configuration is checked like any dict, and that a run's data check
is made once per dataset and space in a process.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from test_problem import SPACE, CountingBackend, _dataset

from bat.core.errors import TunerError
from bat.core.indexed_config import IndexedConfig
from bat.core.problem import Budget, Problem
from bat.core.spacefile import space_from_dict
from bat.run import driver
from bat.run.driver import run_tuner
from bat.run.targets import replay_target
from bat.testing.synthetic import constrained_space


@pytest.fixture
def space():
    return space_from_dict(SPACE, source="test")


def test_configs_carry_their_row_flat_id_and_validity() -> None:
    space = constrained_space()
    rows = space.from_ids(np.arange(space.cardinality))
    made = space.configs(rows)
    assert [c.flat for c in made] == list(range(space.cardinality))
    assert [c.valid for c in made] == space.is_valid(rows).tolist()
    assert [c.row for c in made] == [tuple(r) for r in rows.tolist()]
    assert [dict(c) for c in made] == [dict(space.config(r)) for r in rows]
    one = [space.config(r) for r in rows[:50]]
    assert [c.flat for c in one] == list(range(50)) and {c.valid for c in one} == {None}  # not checked yet


def test_an_edited_config_forgets_its_indices_and_is_checked_like_a_dict(space) -> None:
    config = space.config(np.array([1, 1]))
    config["x"] = 8
    assert config.flat == -1
    other = space.config(np.array([0, 0]))
    other.update(x="no")
    problem = Problem(space=space, backend=CountingBackend(_dataset(space)), budget=Budget(max_evals=5))
    assert problem.evaluate(config).config == {"x": 8, "y": 2}
    with pytest.raises(TunerError, match="not in the space"):
        problem.evaluate(other)


def test_a_config_of_another_space_is_checked_by_its_values(space) -> None:
    twin = space_from_dict(SPACE, source="twin")
    problem = Problem(space=space, backend=CountingBackend(_dataset(space)), budget=Budget(max_evals=20))
    for row in space.iter_valid():
        for r in row:
            mine, theirs = problem.answer(space.config(r)), problem.answer(twin.config(r))
            assert (mine.kind, theirs.kind) == ("evaluated", "repeat")
            assert theirs.result == mine.result


def test_made_and_copied_configs_equal_constructed_ones(space) -> None:
    config = space.config(np.array([2, 1]))
    built = IndexedConfig(config, space, config.row, config.flat, True)
    for other in (IndexedConfig.made(config, space, config.row, config.flat, True), built.copy()):
        assert type(other) is IndexedConfig and other == built and other is not built
        assert (other.space, other.row, other.flat, other.valid) == (space, config.row, config.flat, True)
    copy = built.copy()
    copy["x"] = 8
    assert built["x"] == 4 and built.flat == config.flat and copy.flat == -1  # the copy is its own dict


def test_evaluated_ids_are_the_evaluated_configurations(space) -> None:
    problem = Problem(space=space, backend=CountingBackend(_dataset(space)), budget=Budget(max_evals=5))
    config = next(c for c in space.configs(space.from_ids(np.arange(space.cardinality))) if c.valid)
    assert not problem.is_evaluated_id(config.flat)
    problem.evaluate(dict(config))  # a plain dict: found by its values, keyed by its flat id all the same
    assert problem.is_evaluated_id(config.flat) and problem.is_evaluated(config)
    assert not any(problem.is_evaluated_id(f) for f in range(space.cardinality) if f != config.flat)


def test_an_indexed_config_pickles_as_a_plain_dict(space) -> None:
    config = space.config(np.array([2, 1]))
    back = pickle.loads(pickle.dumps(config))
    assert type(back) is dict and back == {"x": 4, "y": 2}


def test_rows_found_by_flat_id_equal_rows_found_by_value(space) -> None:
    data = _dataset(space, drop={(2, 2)})
    for config in space.configs(space.from_ids(np.arange(space.cardinality))):
        assert data.row_of(config) == data.row_of(dict(config))
    assert data.row_of(space.config(np.array([1, 1]))) is None  # (2, 2) was not recorded


def test_answers_are_the_same_for_indexed_and_plain_configs(space) -> None:
    class Forwarded(CountingBackend):
        def evaluate(self, config):
            assert type(config) is IndexedConfig and config.indexed_in(space)  # the backend gets the integers
            return super().evaluate(config)

    def answers(plain: bool) -> list:
        problem = Problem(space=space, backend=Forwarded(_dataset(space)), budget=Budget(max_evals=16))
        out = []
        for config in space.configs(space.from_ids(np.arange(space.cardinality))):
            answer = problem.answer(dict(config) if plain else config)
            out.append((answer.kind, answer.charged, answer.result))
        return out

    assert answers(True) == answers(False)


def test_a_run_checks_its_data_once_per_dataset_and_space(monkeypatch) -> None:
    from bat.data import checks

    calls = []
    real = checks.check_dataset
    monkeypatch.setattr(checks, "check_dataset", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(driver, "_checked", {})
    target = replay_target("gemm", "RTX_3090")
    first = run_tuner("reference:random", target, budget=Budget(max_evals=3), seed=1)
    second = run_tuner("reference:random", target, budget=Budget(max_evals=3), seed=2)
    assert len(calls) == 1
    assert first.data_check == second.data_check and first.data_check is not second.data_check
    run_tuner("reference:random", replay_target("gemm", "RTX_3090"), budget=Budget(max_evals=3), seed=1)
    assert len(calls) == 2  # another dataset object: checked again
