"""SearchSpace: encodings, validity, ranks and sampling, checked against brute force."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bat.core.errors import SpaceSpecError
from bat.core.space import Constraint, Parameter, SearchSpace

# constraint templates over two parameters x, y: expression text and the same rule in Python
TEMPLATES = [
    ("{x} + {y} <= 6", lambda x, y: x + y <= 6),
    ("{x} % max({y}, 1) == 0", lambda x, y: x % max(y, 1) == 0),
    ("{x} * {y} >= 2 or {x} == 0", lambda x, y: x * y >= 2 or x == 0),
    ("{x} != {y}", lambda x, y: x != y),
    ("{x} < 3 if {y} > 1 else {x} >= 1", lambda x, y: x < 3 if y > 1 else x >= 1),
]


@st.composite
def spaces(draw, max_params=5, max_radix=5):
    """A small random space plus a Python predicate deciding validity of a value tuple."""
    d = draw(st.integers(1, max_params))
    params = []
    for j in range(d):
        values = draw(st.lists(st.integers(0, 6), min_size=1, max_size=max_radix, unique=True))
        params.append(Parameter(f"p{j}", tuple(values)))
    rules, constraints = [], []
    for _ in range(draw(st.integers(0, 3)) if d > 1 else 0):
        i, j = draw(st.lists(st.integers(0, d - 1), min_size=2, max_size=2, unique=True))
        text, rule = draw(st.sampled_from(TEMPLATES))
        constraints.append(Constraint(text.format(x=f"p{i}", y=f"p{j}")))
        rules.append((i, j, rule))
    space = SearchSpace("random", params, constraints)
    return space, lambda vals: all(rule(vals[i], vals[j]) for i, j, rule in rules)


def brute_valid_ids(space, predicate):
    """Flat ids of valid configurations by plain Python enumeration (id order)."""
    ids = []
    for flat, combo in enumerate(itertools.product(*(p.values for p in space.parameters))):
        if predicate(combo):
            ids.append(flat)
    return np.array(ids, dtype=np.int64)


@settings(max_examples=60, deadline=None)
@given(spaces())
def test_groups_agree_with_brute_force(case):
    space, predicate = case
    want = brute_valid_ids(space, predicate)
    assert space.count_valid() == len(want)
    np.testing.assert_array_equal(space.valid_ids(), want)
    all_rows = space.from_ids(np.arange(space.cardinality))
    np.testing.assert_array_equal(np.flatnonzero(space.is_valid(all_rows)), want)
    mask = space.valid_mask()
    assert mask.shape == tuple(len(p.values) for p in space.parameters)
    np.testing.assert_array_equal(np.flatnonzero(mask), want)
    chunks = list(space.iter_valid(chunk=7))
    assert all(len(c) <= 7 for c in chunks)
    rows = np.concatenate(chunks) if chunks else np.empty((0, len(space.names)), np.int64)
    np.testing.assert_array_equal(space.to_ids(rows), want)
    np.testing.assert_array_equal(space.rank_valid(rows), np.arange(len(want)))
    np.testing.assert_array_equal(space.unrank_valid(np.arange(len(want))), rows)


@settings(max_examples=60, deadline=None)
@given(spaces(), st.integers(0, 2**32 - 1))
def test_round_trips(case, seed):
    space, _ = case
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, space.cardinality, size=20)
    idx = space.from_ids(ids)
    np.testing.assert_array_equal(space.to_ids(idx), ids)
    np.testing.assert_array_equal(space.encode(space.decode(idx)), idx)
    for row in idx[:3]:
        np.testing.assert_array_equal(space.index(space.config(row)), row)


@settings(max_examples=60, deadline=None)
@given(spaces(), st.integers(0, 2**32 - 1), st.floats(0, 1))
def test_sample_valid_distinct_exact_reproducible(case, seed, fraction):
    space, predicate = case
    count = space.count_valid()
    n = round(fraction * count)
    rows = space.sample_valid(n, np.random.default_rng(seed))
    assert rows.shape == (n, len(space.names))
    assert len(np.unique(space.to_ids(rows))) == n
    assert space.is_valid(rows).all()
    assert all(predicate(tuple(space.config(r).values())) for r in rows)
    np.testing.assert_array_equal(rows, space.sample_valid(n, np.random.default_rng(seed)))
    with pytest.raises(SpaceSpecError, match="cannot sample"):
        space.sample_valid(count + 1, np.random.default_rng(seed))


@settings(max_examples=60, deadline=None)
@given(spaces(), st.integers(0, 2**32 - 1), st.sampled_from(["adjacent", "hamming"]),
       st.booleans())
def test_neighbours_differ_in_one_parameter(case, seed, kind, valid_only):
    space, _ = case
    row = space.from_ids(np.random.default_rng(seed).integers(space.cardinality, size=1))[0]
    found = space.neighbours(row, kind=kind, valid_only=valid_only)
    diff = found != row
    assert (diff.sum(axis=1) == 1).all()
    if kind == "adjacent":
        assert (np.abs(found - row).sum(axis=1) == 1).all()
    if valid_only:
        assert space.is_valid(found).all()
    # every candidate is found: compare with enumerating all rows
    rows = space.from_ids(np.arange(space.cardinality))
    steps = np.abs(rows - row)
    one = (steps != 0).sum(axis=1) == 1
    if kind == "adjacent":
        one &= steps.sum(axis=1) == 1
    if valid_only:
        one &= space.is_valid(rows)
    assert sorted(space.to_ids(found).tolist()) == np.flatnonzero(one).tolist()


def test_interleaved_groups_rank_in_id_order():
    space = SearchSpace("t", [Parameter(n, (1, 2, 3)) for n in "abcd"],
                        [Constraint("a < c"), Constraint("b != d")])
    assert len(space._groups) == 2
    rows = np.concatenate(list(space.iter_valid()))
    assert (np.diff(space.to_ids(rows)) > 0).all()
    assert space.count_valid() == 3 * 6


def test_encode_rejects_unknown_values_and_missing_columns():
    space = SearchSpace("t", [Parameter("a", (1, 2)), Parameter("s", ("x", "y"))])
    np.testing.assert_array_equal(space.encode(pd.DataFrame({"a": [2, 1], "s": ["x", "y"]})),
                                  [[1, 0], [0, 1]])
    with pytest.raises(SpaceSpecError, match="value 3 of parameter 'a'"):
        space.encode([{"a": 3, "s": "x"}])
    with pytest.raises(SpaceSpecError, match="lacks parameter 's'"):
        space.encode([{"a": 1}])
    assert space.decode(np.array([[1, 1]])).to_dict("records") == [{"a": 2, "s": "y"}]


def test_hash_changes_with_values_constraints_and_constants():
    params = [Parameter("a", (1, 2, 3)), Parameter("b", (1, 2))]
    base = SearchSpace("t", params, [Constraint("a * b <= k")], constants={"k": 4})
    same = SearchSpace("t", params, [Constraint("a*b<=k", why="other text")], constants={"k": 4})
    assert base.space_hash == same.space_hash
    others = [
        SearchSpace("t", [Parameter("a", (1, 2, 4)), params[1]], [Constraint("a * b <= k")],
                    constants={"k": 4}),
        SearchSpace("t", params, [Constraint("a * b < k")], constants={"k": 4}),
        SearchSpace("t", params, [Constraint("a * b <= k")], constants={"k": 5}),
    ]
    assert len({base.space_hash, *(o.space_hash for o in others)}) == 4


def test_out_of_range_inputs():
    space = SearchSpace("t", [Parameter("a", (1, 2))], [Constraint("a > 1")])
    with pytest.raises(SpaceSpecError, match="out of range"):
        space.from_ids(np.array([2]))
    with pytest.raises(SpaceSpecError, match="out of range"):
        space.is_valid(np.array([[5]]))
    with pytest.raises(SpaceSpecError, match="violates"):
        space.rank_valid(np.array([[0]]))
    with pytest.raises(SpaceSpecError, match="unknown neighbourhood"):
        space.neighbours(np.array([0]), kind="diagonal")


def test_a_slice_holds_the_whole_space_s_valid_configurations_of_its_fixed_values():
    whole = SearchSpace("t", [Parameter("a", (1, 2, 4)), Parameter("b", (0, 1)), Parameter("c", (3, 5))],
                        [Constraint("a * c < 12 or b == 1", "toy")])
    part = whole.sliced({"b": 0})
    assert part.whole is whole and part.sliced({"a": 1}).whole is whole
    expected = [cfg for cfg in itertools.product((1, 2, 4), (0, 1), (3, 5)) if cfg[1] == 0 and cfg[0] * cfg[2] < 12]
    assert part.count_valid() == len(expected) == 4
    assert sorted(tuple(int(v) for v in r) for r in part.decode(part.from_ids(part.valid_ids())).to_numpy()) == \
        sorted(expected)
    with pytest.raises(SpaceSpecError, match="cannot fix b=2"):
        whole.sliced({"b": 2})
