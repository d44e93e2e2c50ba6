"""The array-based FFG + PageRank against a straightforward networkx build, and centrality itself."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from analysis_fixtures import bat2

from bat.analysis.centrality import (
    INVALID_FITNESS,
    build_graph,
    dataset_centrality,
    fitness_array,
    local_minima,
    proportion_of_centrality,
)
from bat.analysis.ffg import FitnessFlowGraph
from bat.analysis.ffg_reference import reference_pagerank
from bat.core.errors import ConvergenceError


def _landscape(shape, seed):
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 5, size=shape).astype(float)  # many ties
    f[rng.random(shape) < 0.25] = INVALID_FITNESS
    f.flat[0] = 0.5  # at least one valid point
    return f


@pytest.mark.parametrize("shape", [(4, 5, 3), (2, 9), (7,), (3, 1, 4)])
@pytest.mark.parametrize("neighbourhood", ["adjacent", "hamming"])
@pytest.mark.parametrize("variant", ["published", "valid"])
def test_pagerank_equals_networkx(shape, neighbourhood, variant):
    f = _landscape(shape, seed=sum(shape))
    ours = build_graph(f, variant, neighbourhood).pagerank()
    if variant == "published":
        ref = reference_pagerank(f, neighbourhood=neighbourhood)
    else:
        ref = reference_pagerank(f, nodes=f < INVALID_FITNESS, neighbourhood=neighbourhood, strict=True)
    assert np.abs(ours - ref).max() < 1e-6
    assert ours.sum() == pytest.approx(1.0)


def test_pagerank_on_shipped_pnpoly_equals_networkx():
    data = bat2("pnpoly", ("RTX_3090",))
    f = fitness_array(next(iter(data.datasets.values())), data.space)
    assert f.size == 4092
    assert np.abs(FitnessFlowGraph(f).pagerank() - reference_pagerank(f)).max() < 1e-6


def _brute_minima(f):
    out = np.zeros(f.shape, bool)
    for p in itertools.product(*(range(s) for s in f.shape)):
        if f[p] >= INVALID_FITNESS:
            continue
        nbs = [(*p[:d], p[d] + s, *p[d + 1:]) for d in range(f.ndim) for s in (-1, 1)
               if 0 <= p[d] + s < f.shape[d]]
        out[p] = not any(f[n] < f[p] for n in nbs)
    return out


def test_local_minima_and_proportion():
    f = _landscape((5, 4, 3), seed=3)
    graph = build_graph(f)
    assert np.array_equal(local_minima(graph), _brute_minima(f))
    c = proportion_of_centrality(f)
    assert len(c.p) == 51 and c.p[-1] == 0.5
    assert np.all(np.diff(c.proportion) >= -1e-15) and c.proportion[-1] <= 1 + 1e-12
    rank = graph.pagerank()
    minima = local_minima(graph)
    best = minima & (f <= f[f < INVALID_FITNESS].min())
    assert c.proportion[0] == pytest.approx(rank[best].sum() / rank[minima].sum())


def test_dataset_centrality_names_variant_and_notes():
    data = bat2("pnpoly", ("RTX_3090",))
    d = next(iter(data.datasets.values()))
    c = dataset_centrality(d, data.space)
    out = c.to_dict()
    assert out["variant"] == "published" and out["neighbourhood"] == "adjacent"
    assert out["n_nodes"] == 4092 and not out["notes"]
    sub = type(d)(d.frame.iloc[::2].reset_index(drop=True), d.meta, d.parameters)
    assert "not in the data" in dataset_centrality(sub, data.space).notes[0]


def test_non_convergence_is_an_error():
    with pytest.raises(ConvergenceError, match="did not converge"):
        FitnessFlowGraph(_landscape((6, 6), 1)).pagerank(tol=1e-30, max_iter=3)
