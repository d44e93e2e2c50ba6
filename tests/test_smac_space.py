"""The SearchSpace -> ConfigSpace translation for SMAC: forbidden clauses are exactly the constraints."""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np
import pytest

from bat.core.space import Constraint, Parameter, SearchSpace
from bat.testing.synthetic import constrained_space, tiny_space
from bat.tuner_adapters.smac_space import MAX_CLAUSES_PER_PARAMETER, configuration_space

#: found, not imported: ConfigSpace (and SciPy under it) loads in the tests, not when pytest collects this file
pytestmark = pytest.mark.skipif(find_spec("ConfigSpace") is None,
                                reason="the smac tuners need ConfigSpace (installed with smac)")


def _forbidden(cs, space: SearchSpace, rows: np.ndarray) -> np.ndarray:
    """Is each value-index row forbidden by some clause of ``cs``?"""
    configs = [dict(zip(space.names, map(int, row), strict=True)) for row in rows]
    return np.array([any(f.is_forbidden_value(c) for f in cs.forbidden_clauses) for c in configs])


@pytest.mark.parametrize("make", [constrained_space, tiny_space])
def test_clauses_forbid_exactly_the_invalid_configurations(make) -> None:
    space = make()
    cs, unexpressed = configuration_space(space, seed=0)
    rows = space.from_ids(np.arange(space.cardinality))
    assert unexpressed == []
    np.testing.assert_array_equal(_forbidden(cs, space, rows), ~space.is_valid(rows))


def test_sampling_proposes_only_valid_configurations() -> None:
    space = constrained_space()
    cs, _ = configuration_space(space, seed=3)
    rows = np.array([[c[n] for n in space.names] for c in cs.sample_configuration(500)])
    assert space.is_valid(rows).all()
    assert len({tuple(r) for r in rows}) > 200  # spread over the 456 valid ones, not stuck


def test_a_large_constraint_is_left_to_rejection() -> None:
    space = SearchSpace("wide", [Parameter(n, tuple(range(8))) for n in "abcd"],
                        [Constraint("a + b + c + d < 20"), Constraint("a != b")])
    cs, unexpressed = configuration_space(space, seed=0, max_product=100)
    assert unexpressed == ["a + b + c + d < 20"]
    rows = space.from_ids(np.arange(space.cardinality))
    np.testing.assert_array_equal(_forbidden(cs, space, rows), rows[:, 0] == rows[:, 1])


def test_constants_and_problem_size_enter_the_clauses() -> None:
    space = SearchSpace("sized", [Parameter("x", (1, 2, 4, 8)), Parameter("one", (3,))],
                        [Constraint("x * one <= n")], problem_size={"n": 12})
    cs, _ = configuration_space(space, seed=0)
    rows = space.from_ids(np.arange(space.cardinality))
    np.testing.assert_array_equal(_forbidden(cs, space, rows), ~space.is_valid(rows))
    assert (~space.is_valid(rows)).sum() == 1


def test_many_clauses_are_grouped_on_the_most_compact_parameter() -> None:
    # grouped on the last parameter, ``flag``, this constraint takes one clause per violating (x, y): 216,
    # far over MAX_CLAUSES_PER_PARAMETER times 3 hyper-parameters; grouped on x or y it takes at most 16
    space = SearchSpace("stairs", [Parameter("x", tuple(range(1, 17))), Parameter("y", tuple(range(1, 17))),
                                   Parameter("flag", (0, 1))], [Constraint("flag == 0 or x * y < 40")])
    cs, _ = configuration_space(space, seed=0)
    rows = space.from_ids(np.arange(space.cardinality))
    assert (~space.is_valid(rows)).sum() > MAX_CLAUSES_PER_PARAMETER * 3
    assert len(cs.forbidden_clauses) <= 16
    np.testing.assert_array_equal(_forbidden(cs, space, rows), ~space.is_valid(rows))


def test_few_clauses_keep_the_grouping_on_the_last_parameter() -> None:
    # grouped on x this constraint would take 1 clause (y == 4, x in all); on the last parameter, y, 3 (one per
    # x): kept, under the bound
    space = SearchSpace("few", [Parameter("x", (1, 2, 3)), Parameter("y", (1, 2, 3, 4))],
                        [Constraint("x >= 1 and y < 4")])
    cs, _ = configuration_space(space, seed=0)
    assert len(cs.forbidden_clauses) == 3
    rows = space.from_ids(np.arange(space.cardinality))
    np.testing.assert_array_equal(_forbidden(cs, space, rows), ~space.is_valid(rows))
