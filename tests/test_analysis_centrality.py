"""The array-based and compiled FFG + PageRank against a straightforward networkx build, and centrality itself."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from analysis_fixtures import bat2

from bat.analysis.centrality import (
    INVALID_FITNESS,
    build_graph,
    build_product_graph,
    dataset_centrality,
    default_rule,
    fitness_array,
    local_minima,
    proportion_of_centrality,
)
from bat.analysis.ffg import FitnessFlowGraph
from bat.analysis.ffg_reference import reference_graph, reference_pagerank
from bat.analysis.pagerank_rule import StopRule
from bat.analysis.report_md import centrality_lines
from bat.core.benchmark import load_benchmark
from bat.core.errors import ConvergenceError, UnknownNameError


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
    ours = build_graph(f, variant, neighbourhood).pagerank().rank
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
    run = FitnessFlowGraph(f).pagerank()
    assert run.rule.name == "networkx" and run.converged
    assert np.abs(run.rank - reference_pagerank(f)).max() < 1e-6


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
    c = proportion_of_centrality(f, rule=StopRule("networkx"))
    assert len(c.p) == 51 and c.p[-1] == 0.5
    assert np.all(np.diff(c.proportion) >= -1e-15) and c.proportion[-1] <= 1 + 1e-12
    rank = graph.pagerank().rank
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
    # the paper gives pnpoly's value: its rule, and exactly networkx's numbers
    assert out["stopping"]["rule"] == "networkx" and out["stopping"]["converged"]
    assert c.proportion[0] == proportion_of_centrality(fitness_array(d, data.space),
                                                       rule=StopRule("networkx")).proportion[0]
    sub = type(d)(d.frame.iloc[::2].reset_index(drop=True), d.meta, d.parameters)
    assert "not in the data" in dataset_centrality(sub, data.space).notes[0]


def test_non_convergence_is_an_error():
    f = _landscape((6, 6), 1)
    with pytest.raises(ConvergenceError, match="did not converge"):
        FitnessFlowGraph(f).pagerank(StopRule("networkx", 1e-30), max_iter=3)
    with pytest.raises(ConvergenceError, match="rule l1"):
        build_product_graph(f).pagerank(StopRule("l1", 1e-30), max_iter=3)
    with pytest.raises(ConvergenceError):
        proportion_of_centrality(f, rule=StopRule("l1", 1e-30), max_iter=3)
    c = proportion_of_centrality(f, rule=StopRule("l1", 1e-30), max_iter=3, allow_unconverged=True)
    assert not c.pagerank.converged and c.pagerank.iterations == 3 and "not converged" in c.notes[0]
    assert c.to_dict()["stopping"]["converged"] is False


@functools.cache
def _box(benchmark: str, size: int = 3000):
    """A box of the space around its best point (<= ``size`` points): measured fitness where the
    repository has data, else a seeded integer fitness (many ties) on the valid points. Without data the
    box is placed around the space's first valid point and fitness drawn inside it only (drawn over the
    whole space, dedispersion's 124 million points cost seconds and gigabytes for a box of 3000)."""
    space = load_benchmark(benchmark).space
    widths = [min(int(r), 5) for r in space.radices]
    while np.prod(widths) > size:
        widths[int(np.argmax(widths))] -= 1

    def around(point):
        starts = [max(0, min(int(b) - w // 2, int(r) - w)) for b, w, r in zip(point, widths, space.radices,
                                                                              strict=True)]
        return tuple(slice(a, a + w) for a, w in zip(starts, widths, strict=True))

    if benchmark in ("gemm", "convolution", "pnpoly"):
        data = bat2(benchmark, ("RTX_3090",))
        full = fitness_array(next(iter(data.datasets.values())), data.space)
        return full[around(np.unravel_index(np.argmin(full), full.shape))]
    valid = space.valid_mask()
    box = around(np.unravel_index(np.argmax(valid), valid.shape))
    rng = np.random.default_rng(len(benchmark))
    return np.where(valid[box], rng.integers(1, 6, size=valid[box].shape).astype(float), INVALID_FITNESS)


def _sub_box(benchmark: str):
    """``_box``'s fitness, a copy of its own (both variants of a benchmark share the box)."""
    return _box(benchmark).copy()


BENCHMARKS = ("convolution", "coulomb", "dedispersion", "expdist", "gemm", "hotspot", "matmul_c", "nbody", "pnpoly")


@pytest.mark.parametrize("benchmark", BENCHMARKS)
@pytest.mark.parametrize("variant", ["published", "valid"])
def test_product_pagerank_equals_networkx_converged(benchmark, variant):
    """On a sub-box of every shipped space, the compiled solver under a tight l1 rule equals networkx
    run to an L1 change of 1e-15: at most 1e-9 relative difference on every node."""
    f = _sub_box(benchmark)
    assert (f < INVALID_FITNESS).any()
    run = build_product_graph(f, variant).pagerank(StopRule("l1", 1e-14))
    strict = variant == "valid"
    nodes = f < INVALID_FITNESS if strict else None
    ref = reference_pagerank(f, nodes=nodes, strict=strict, l1_change=1e-15, max_iter=5000)
    ours = run.rank.reshape(f.shape)
    assert run.converged and run.residual <= 1e-14
    on = ref > 0
    assert np.array_equal(ours > 0, on)
    assert np.max(np.abs(ours[on] - ref[on]) / ref[on]) <= 1e-9


@pytest.mark.parametrize("shape", [(1, 6, 1, 5), (9,), (2, 1), (1,)])
def test_product_pagerank_with_single_value_and_single_axis_parameters(shape):
    f = _landscape(shape, seed=int(np.prod(shape)))
    graph = build_product_graph(f)
    run = graph.pagerank(StopRule("l1", 1e-14))
    ref = reference_pagerank(f, l1_change=1e-15, max_iter=5000)
    assert graph.shape == tuple(s for s in shape if s > 1) or graph.shape == (1,)
    assert np.max(np.abs(run.rank.reshape(shape) - ref) / ref) <= 1e-9


def test_numba_threads_give_the_one_thread_pagerank(monkeypatch):
    """Small products run the kernels on the calling thread alone (ffg_product.PARALLEL_FROM); on all of
    Numba's threads the same fixed blocks give the same PageRank, bit for bit."""
    import numba

    from bat.analysis import ffg_product

    f = _landscape((6, 5, 4), seed=13)
    one = build_product_graph(f).pagerank(StopRule("l1", 1e-12))
    monkeypatch.setattr(ffg_product, "PARALLEL_FROM", 0)
    graph = build_product_graph(f)
    assert graph.n_threads == numba.get_num_threads()
    many = graph.pagerank(StopRule("l1", 1e-12))
    assert many.iterations == one.iterations and np.array_equal(many.rank, one.rank)


def test_l1_residual_is_the_real_one():
    """The residual a result states is ||G(x) - x||_1 with G networkx's own Google matrix."""
    import networkx as nx

    f = _landscape((5, 6, 4), seed=7)
    run = build_product_graph(f).pagerank(StopRule("l1", 1e-6))
    graph = reference_graph(f)
    order = list(graph.nodes)
    x = np.array([run.rank.reshape(f.shape)[p] for p in order])
    google = nx.google_matrix(graph, alpha=0.85, nodelist=order)
    residual = np.abs(x @ google - x).sum()
    assert residual == pytest.approx(run.residual, rel=1e-6, abs=1e-15)
    assert run.residual <= 1e-6 < float(np.abs(np.full(len(x), 1 / len(x)) @ google - 1 / len(x)).sum())


def test_rules_and_their_defaults():
    assert StopRule().name == "l1" and StopRule().tol == 1e-9
    assert StopRule("networkx").tol == 1e-6 and StopRule("networkx").threshold(1000) == pytest.approx(1e-3)
    with pytest.raises(UnknownNameError):
        StopRule("nope")
    assert default_rule("pnpoly", "published", "adjacent").name == "networkx"
    assert default_rule("pnpoly", "valid", "adjacent").name == "l1"
    assert default_rule("hotspot", "published", "adjacent").name == "l1"
    assert default_rule("coulomb", "published", "adjacent").name == "l1"
    f = _landscape((4, 5, 3), seed=3)
    assert proportion_of_centrality(f).rule.name == "l1"


@pytest.mark.parametrize("variant", ["published", "valid"])
@pytest.mark.parametrize("neighbourhood", ["adjacent", "hamming"])
def test_l1_rule_gives_the_same_centrality_on_both_engines(variant, neighbourhood):
    """Adjacent: compiled solver; Hamming: NumPy power iteration; both to the l1 rule agree with networkx."""
    f = _landscape((4, 5, 3), seed=11)
    c = proportion_of_centrality(f, variant, neighbourhood, rule=StopRule("l1", 1e-12))
    graph = build_graph(f, variant, neighbourhood)
    ref = reference_pagerank(f, nodes=graph.nodes, neighbourhood=neighbourhood, strict=variant == "valid",
                             l1_change=1e-14, max_iter=2000)
    minima = local_minima(graph)
    best = minima & (f <= f[f < INVALID_FITNESS].min())
    assert c.proportion[0] == pytest.approx(ref[best].sum() / ref[minima].sum(), rel=1e-9)
    assert c.pagerank.residual <= 1e-12 and c.proportion_error_bound() < 1e-9


def test_result_states_rule_iterations_and_residual():
    data = bat2("pnpoly", ("RTX_3090",))
    d = next(iter(data.datasets.values()))
    c = dataset_centrality(d, data.space, rule=StopRule("l1"))
    out = c.to_dict()["stopping"]
    assert out["rule"] == "l1" and out["tol"] == 1e-9 and out["converged"]
    assert out["iterations"] == c.pagerank.iterations > 0 and 0 < out["residual"] <= 1e-9
    assert out["proportion_error_bound"] == pytest.approx(out["residual"] / 0.15 / out["mass_on_minima"])
    (line,) = centrality_lines({"g": {"measured": c.to_dict()}}, {"g": ""})
    assert f"rule l1 (tol 1e-09), {c.pagerank.iterations} iterations, residual" in line


@pytest.mark.slow
def test_dask_centrality_equals_single_machine():
    """The slabs on a LocalCluster give the single-machine PageRank and centrality (same blocks, same order)."""
    from distributed import Client, LocalCluster

    from bat.analysis.centrality import proportion_of_centrality_dask
    from bat.analysis.ffg_dask import dask_pagerank

    rng = np.random.default_rng(5)
    f = rng.random((7, 4, 5, 3)).round(2) + 1.0  # some ties
    f[rng.random(f.shape) < 0.2] = INVALID_FITNESS
    with (LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
          Client(cluster) as client):
        # a loose rule (61 sweeps of the published graph, not 143 at the default 1e-9): each sweep is a round
        # trip to the cluster, and both engines run the same sweeps in the same order whatever the tolerance
        rule = StopRule("l1", 1e-5)
        for variant in ("published", "valid"):
            valid = variant == "valid"
            single = build_product_graph(f, variant).pagerank(rule, n_blocks=4)
            dask = dask_pagerank(client, lambda lo, hi: f[lo:hi], f.shape, strict=valid, valid_only=valid,
                                 invalid=INVALID_FITNESS, n_slabs=4, rule=rule, gather_rank=True)
            assert dask.run.converged and dask.run.iterations == single.iterations
            assert np.allclose(dask.full_rank, single.rank, rtol=1e-12, atol=0)
            assert dask.run.residual == pytest.approx(single.residual, rel=1e-9)
            ours = proportion_of_centrality(f, variant, rule=rule)
            theirs = proportion_of_centrality_dask(client, lambda lo, hi: f[lo:hi], f.shape, variant, rule=rule,
                                                   n_slabs=4)
            assert np.allclose(theirs.proportion, ours.proportion, rtol=0, atol=ours.proportion_error_bound())
            assert (theirs.n_nodes, theirs.n_edges, theirs.n_minima, theirs.f_opt) == (
                ours.n_nodes, ours.n_edges, ours.n_minima, ours.f_opt)
            assert theirs.to_dict()["stopping"]["rule"] == "l1"
