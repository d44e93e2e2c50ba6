"""The seven shipped spaces: golden cardinalities, published key sets, our constrained counts."""

from pathlib import Path

import numpy as np
import pytest

from bat.core.benchmark import benchmark_names, load_benchmark
from bat.core.dataset import Dataset
from bat.core.errors import UnknownNameError

DATA = Path(__file__).resolve().parents[1] / "results" / "bat2-kerneltuner"  # the published caches, imported
CARDINALITY = {"pnpoly": 4092, "nbody": 9408, "convolution": 16896, "gemm": 82944,
               "expdist": 9732096, "hotspot": 22200000, "dedispersion": 123863040}
# where published data defines the set, the count must match it exactly
PUBLISHED_SETS = {"gemm": 17956, "convolution": 6768, "pnpoly": 4092}
# where it does not, the count our justified constraints give (see each space.json's note)
OUR_COUNTS = {"nbody": 3136, "hotspot": 410523, "expdist": 287280, "dedispersion": 16851135}


def test_registry_lists_the_seven():
    assert set(CARDINALITY) <= set(benchmark_names())
    with pytest.raises(UnknownNameError, match=r"unknown benchmark 'gemmm'; did you mean 'gemm'\?; valid: convolution"):
        load_benchmark("gemmm")


@pytest.mark.parametrize("name", sorted(CARDINALITY))
def test_cardinality_and_count(name):
    space = load_benchmark(name).space
    assert space.cardinality == CARDINALITY[name]
    want = PUBLISHED_SETS.get(name) or OUR_COUNTS[name]
    assert space.count_valid() == want
    published = load_benchmark(name).published
    assert f"{want:,}" in published["note"]
    rows = space.sample_valid(500, np.random.default_rng(7))
    assert space.is_valid(rows).all()
    np.testing.assert_array_equal(space.unrank_valid(space.rank_valid(rows)), rows)


def test_published_counts_that_differ_are_explained_and_reproducible():
    """Hotspot and dedispersion publish the complement of a valid count: the excluded configurations."""
    from bat.core.spacefile import variant_space

    hotspot = load_benchmark("hotspot")
    kernel_tuner = variant_space(hotspot.raw, "kernel_tuner", str(hotspot.path))
    count = kernel_tuner.count_valid()
    assert count == 349_853 == hotspot.published["variants"]["kernel_tuner"]["constrained"]
    assert hotspot.space.cardinality - count == hotspot.published["constrained"]
    assert "349,853" in hotspot.published["note"] and "blocks_per_sm" in hotspot.published["note"]
    dedispersion = load_benchmark("dedispersion")
    assert dedispersion.space.cardinality - OUR_COUNTS["dedispersion"] == dedispersion.published["constrained"]
    assert "exclude" in dedispersion.published["note"]


def published_keys(name: str) -> tuple[list[str], set[str]]:
    """Parameter order and the configurations of the published cache, as its comma-joined keys."""
    ds = Dataset.load(DATA / f"{name}_RTX_3090.parquet")
    keys = {",".join(str(v) for v in row) for row in ds.configs().itertuples(index=False)}
    assert len(keys) == len(ds.frame)
    return list(ds.parameters), keys


@pytest.mark.parametrize("name", sorted(PUBLISHED_SETS))
def test_valid_set_equals_published_keys(name):
    order, keys = published_keys(name)
    space = load_benchmark(name).space
    assert list(space.names) == order
    values = space.decode(space.from_ids(space.valid_ids()))
    ours = {",".join(str(v) for v in row) for row in values.itertuples(index=False)}
    assert ours == keys


@pytest.mark.parametrize("name", ["gemm", "nbody", "convolution"])
def test_groups_agree_with_full_product_evaluation(name):
    space = load_benchmark(name).space
    rows = space.from_ids(np.arange(space.cardinality))
    env = {**space.problem_size, **space.constants, **space.decode(rows).to_dict("series")}
    ok = np.ones(len(rows), dtype=bool)
    for expr in space.expressions:
        ok &= np.asarray(expr.evaluate({k: np.asarray(v) for k, v in env.items()}), dtype=bool)
    np.testing.assert_array_equal(space.valid_ids(), np.flatnonzero(ok))


def test_large_spaces_stay_grouped():
    space = load_benchmark("dedispersion").space
    assert max(g.size for g in space._groups) <= 2048
    first = next(space.iter_valid(chunk=1000))
    assert len(first) == 1000 and (np.diff(space.to_ids(first)) > 0).all()
    np.testing.assert_array_equal(space.rank_valid(first), np.arange(1000))
