"""CatBoost permutation feature importance, the reduced space and its sizes, surrogate landscapes."""

from __future__ import annotations

import numpy as np
import pytest
from analysis_fixtures import bat2

from bat.analysis.centrality import INVALID_FITNESS
from bat.analysis.importance import permutation_importance, reduced_parameters
from bat.analysis.model import ModelSettings
from bat.analysis.sizes import projected_count, size_row
from bat.analysis.surrogate import surrogate_fitness

SMALL = ModelSettings(iterations=40, depth=4, thread_count=2, folds=3)


@pytest.fixture(scope="module")
def pnpoly():
    return bat2("pnpoly", ("RTX_3090", "RTX_Titan"))


@pytest.fixture(scope="module")
def importances(pnpoly):
    return {g: permutation_importance(d, pnpoly.space, np.random.default_rng(0), repeats=2,
                                      settings=SMALL, max_rows=1200)
            for g, d in pnpoly.datasets.items()}


def test_pfi_on_pnpoly(importances):
    for imp in importances.values():
        assert imp.cv_r2 > 0.8 and imp.n_rows == 1200
        assert imp.repeats.shape == (4, 2)
        pfi = dict(zip(imp.parameters, imp.mean, strict=True))
        # the tile size matters far more than use_method on this kernel
        assert pfi["tile_size"] > 0.5 > 0.05 > pfi["use_method"]
        assert np.all(imp.half_width >= 0)
        assert "retraining" in imp.to_dict()["method"]


def test_reduced_space_and_sizes(pnpoly, importances):
    reduced = reduced_parameters(importances)
    assert "tile_size" in reduced and "use_method" not in reduced
    row = size_row(pnpoly.space, pnpoly.datasets, reduced)
    assert row.cardinality == row.constrained == 4092
    assert row.valid == {g: len(d.ok) for g, d in pnpoly.datasets.items()}
    assert row.reduced == int(np.prod([pnpoly.space.radices[pnpoly.space.names.index(p)]
                                       for p in reduced]))
    assert row.reduced_constrained == row.reduced  # pnpoly has no constraints


def test_projected_count_matches_enumeration():
    space = bat2("convolution", ("RTX_3090",)).space
    valid = space.decode(space.from_ids(space.valid_ids()))
    keep = ["block_size_x", "tile_size_x", "tile_size_y"]
    assert projected_count(space, keep) == len(valid[keep].drop_duplicates())
    assert projected_count(space, keep) < int(np.prod(space.radices[[0, 5, 6]]))


def test_surrogate_fills_unmeasured_points(pnpoly):
    d = pnpoly.datasets[next(iter(pnpoly.datasets))]
    sample = type(d)(d.frame.sample(1500, random_state=0).reset_index(drop=True), d.meta, d.parameters)
    s = surrogate_fitness(sample, pnpoly.space, np.random.default_rng(0), settings=SMALL)
    assert s.n_predicted == 4092 - 1500
    assert "model estimate" in s.describe() and "R^2" in s.describe()
    ok = sample.ok
    ids = pnpoly.space.to_ids(pnpoly.space.encode(ok[list(d.parameters)]))
    assert np.array_equal(s.fitness.ravel()[ids], ok["objective_ms"].to_numpy())
    failed = sample.frame[sample.frame["status"] != "ok"]
    fids = pnpoly.space.to_ids(pnpoly.space.encode(failed[list(d.parameters)]))
    assert np.all(s.fitness.ravel()[fids] == INVALID_FITNESS)
    assert np.isfinite(s.fitness).all() and (s.fitness >= 0).all()
