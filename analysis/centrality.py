"""Proportion of centrality (Schoonhoven et al., TEVC 2022) on a dataset's search space.

Variants (named in every result):

- ``published`` (default): nodes are every point of the full Cartesian
  product (parameters with one value add no neighbours, so dropping them
  changes nothing); a point that violates a constraint, failed, or is not in
  the data has fitness 1e10; edges x -> y for f(y) <= f(x).
- ``valid``: nodes are the configurations measured ok only; edges need
  f(y) < f(x).

Neighbourhood "adjacent" (bounded: one index moves by 1) or "hamming".
PageRank: alpha 0.85, uniform personalisation, dangling mass uniform
(networkx), stopped by a named rule (``bat.analysis.pagerank_rule``): ``l1``
(L1 residual <= 1e-9 in total, the default) or ``networkx`` (the paper's,
which reproduces its small-space values); every result states the rule,
the iterations, the final residual and a bound on the proportion's error.
``dataset_centrality`` uses the paper's rule where the paper gives a value
(``bat.analysis.published.CENTRALITY``), ``l1`` elsewhere. Local minima: valid
points with no strictly better neighbour. Proportion for p: PageRank on
minima with f <= (1 + p) f_opt over PageRank on all minima, p = 0, 0.01,
..., 0.5. Adjacent neighbourhood under ``l1``: ``bat.analysis.ffg_product``
(compiled, any size); otherwise ``bat.analysis.ffg`` (NumPy power iteration).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bat.analysis import published
from bat.analysis.ffg import FitnessFlowGraph
from bat.analysis.pagerank_rule import RULES, PageRankRun, StopRule
from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError, UnknownNameError
from bat.core.space import SearchSpace

if TYPE_CHECKING:
    from distributed import Client

    from bat.analysis.ffg_product import ProductFFG

INVALID_FITNESS = 1e10
RULE_CHOICES = ("auto", *RULES)
VARIANTS = {
    "published": "full Cartesian product, failed/invalid/missing = 1e10, edges f(y) <= f(x)",
    "valid": "valid (measured ok) configurations only, edges f(y) < f(x)",
}
P_GRID = np.round(np.arange(0, 51) * 0.01, 2)


def fitness_array(dataset: Dataset, space: SearchSpace) -> np.ndarray:
    """Objective of every point of the full product (axes = parameters), 1e10 where not ok."""
    if tuple(space.names) != dataset.parameters:
        raise DatasetError(f"dataset {dataset.name}: parameters differ from space {space.name}")
    ok = dataset.ok
    ids = space.to_ids(space.encode(ok[list(space.names)]))
    f = np.full(space.cardinality, INVALID_FITNESS)
    f[ids] = ok["objective_ms"].to_numpy(dtype=float)
    return f.reshape(tuple(int(r) for r in space.radices))


@dataclass
class Centrality:
    """PageRank-based proportion of centrality of one landscape, with how its PageRank stopped."""

    variant: str
    neighbourhood: str
    p: np.ndarray
    proportion: np.ndarray
    n_nodes: int
    n_edges: int
    n_minima: int
    f_opt: float
    pagerank: PageRankRun
    mass_on_minima: float
    notes: list[str] = field(default_factory=list)

    @property
    def rule(self) -> StopRule:
        return self.pagerank.rule

    def proportion_error_bound(self) -> float:
        """Upper bound on |proportion - exact proportion| for every p.

        With E the L1 distance of the PageRank vector from the exact one and
        M the computed mass on all minima, a ratio of a sum over a subset of
        the minima to the sum over all of them moves by at most E / M.
        """
        return self.pagerank.error_bound() / self.mass_on_minima

    def to_dict(self) -> dict[str, object]:
        return {"variant": self.variant, "variant_text": VARIANTS[self.variant],
                "neighbourhood": self.neighbourhood, "p": self.p.tolist(),
                "proportion": self.proportion.tolist(), "n_nodes": self.n_nodes,
                "n_edges": self.n_edges, "n_local_minima": self.n_minima, "f_opt_ms": self.f_opt,
                "pagerank": "alpha 0.85, uniform personalisation, dangling uniform (networkx)",
                "stopping": {**self.pagerank.to_dict(), "mass_on_minima": self.mass_on_minima,
                             "proportion_error_bound": self.proportion_error_bound()},
                "notes": self.notes}


def build_graph(fitness: np.ndarray, variant: str = "published",
                neighbourhood: str = "adjacent") -> FitnessFlowGraph:
    """The FFG of a fitness array under a named variant (NumPy form, any neighbourhood)."""
    if variant == "published":
        return FitnessFlowGraph(fitness, neighbourhood=neighbourhood)
    if variant == "valid":
        return FitnessFlowGraph(fitness, nodes=fitness < INVALID_FITNESS,
                                neighbourhood=neighbourhood, strict=True)
    raise UnknownNameError("centrality variant", variant, list(VARIANTS))


def build_product_graph(fitness: np.ndarray, variant: str = "published") -> ProductFFG:
    """The adjacent-value FFG of a fitness array under a named variant (compiled form)."""
    if variant not in VARIANTS:
        raise UnknownNameError("centrality variant", variant, list(VARIANTS))
    from bat.analysis.ffg_product import ProductFFG  # Numba loads with the compiled graph, not with this module

    valid = variant == "valid"
    return ProductFFG(fitness, strict=valid, valid_only=valid, invalid=INVALID_FITNESS)


def local_minima(graph: FitnessFlowGraph) -> np.ndarray:
    """Valid points (f < 1e10) with no strictly better neighbour."""
    return (graph.fitness < INVALID_FITNESS) & ~graph.has_better_neighbour()


def proportion_of_centrality(fitness: np.ndarray, variant: str = "published",
                             neighbourhood: str = "adjacent", p_grid: np.ndarray = P_GRID,
                             rule: StopRule | None = None, max_iter: int | None = None,
                             allow_unconverged: bool = False,
                             progress: Callable[[int], None] | None = None) -> Centrality:
    """Proportion of centrality of a fitness array for every p in ``p_grid``.

    ``rule``: the PageRank stopping rule, ``l1`` by default. A PageRank that
    reaches ``max_iter`` (networkx rule: 100 power steps, as networkx; l1:
    1000 steps or sweeps) before its rule holds
    raises ConvergenceError unless ``allow_unconverged``; then the result's
    notes say so.
    """
    fitness = np.asarray(fitness, dtype=np.float64)
    valid = fitness < INVALID_FITNESS
    if not valid.any():
        raise DatasetError("proportion of centrality needs at least one valid configuration")
    rule = rule or StopRule("l1")
    f_opt = float(fitness[valid].min())
    del valid
    if neighbourhood == "adjacent" and rule.name == "l1":
        product = build_product_graph(fitness, variant)
        run = product.pagerank(rule, max_iter=max_iter or 1000, allow_unconverged=allow_unconverged,
                               progress=progress)
        f_min, r_min = product.minima_fitness, run.rank[product.minima]
        n_nodes, n_edges = product.n_nodes, product.n_edges
    else:
        graph = build_graph(fitness, variant, neighbourhood)
        run = graph.pagerank(rule, max_iter=max_iter or (100 if rule.name == "networkx" else 1000),
                             allow_unconverged=allow_unconverged,
                             progress=progress)
        minima = local_minima(graph)
        f_min, r_min = fitness[minima], run.rank[minima]
        n_nodes, n_edges = graph.n_nodes, graph.n_edges
    return _centrality(variant, neighbourhood, p_grid, f_min, r_min, f_opt, n_nodes, n_edges, run)


def proportion_of_centrality_dask(client: Client, fitness_rows: Callable[[int, int], np.ndarray],
                                  shape: tuple[int, ...], variant: str = "published",
                                  p_grid: np.ndarray = P_GRID, rule: StopRule | None = None, n_slabs: int = 8,
                                  max_iter: int = 1000, allow_unconverged: bool = False) -> Centrality:
    """``proportion_of_centrality`` (adjacent neighbourhood) of a product too large for one machine, on Dask.

    ``fitness_rows(lo, hi)``: the fitness of leading-axis rows lo..hi-1 of
    the full array (1e10 where invalid), called on the workers; the product
    is cut into ``n_slabs`` slabs of rows (``bat.analysis.ffg_dask``).
    """
    from bat.analysis.ffg_dask import dask_pagerank

    if variant not in VARIANTS:
        raise UnknownNameError("centrality variant", variant, list(VARIANTS))
    valid = variant == "valid"
    out = dask_pagerank(client, fitness_rows, shape, strict=valid, valid_only=valid, invalid=INVALID_FITNESS,
                        n_slabs=n_slabs, rule=rule, max_iter=max_iter, allow_unconverged=allow_unconverged)
    if not np.isfinite(out.f_opt):
        raise DatasetError("proportion of centrality needs at least one valid configuration")
    return _centrality(variant, "adjacent", p_grid, out.minima_fitness, out.run.rank, out.f_opt, out.n_nodes,
                       out.n_edges, out.run)


def _centrality(variant: str, neighbourhood: str, p_grid: np.ndarray, f_min: np.ndarray, r_min: np.ndarray,
                f_opt: float, n_nodes: int, n_edges: int, run: PageRankRun) -> Centrality:
    """The proportions from the minima's fitness and PageRank, with notes on how PageRank stopped."""
    rule = run.rule
    total = float(r_min.sum())
    prop = np.array([r_min[f_min <= (1 + p) * f_opt].sum() / total for p in p_grid])
    result = Centrality(variant, neighbourhood, np.asarray(p_grid, dtype=float), prop,
                        n_nodes, n_edges, len(f_min), f_opt, run, total)
    if not run.converged:
        result.notes.append(f"PageRank stopped at its iteration limit ({run.iterations}) before its rule "
                            f"held (residual {run.residual:.3g}): not converged")
    if rule.name == "networkx" and rule.threshold(n_nodes) >= 2.0:
        result.notes.append(f"networkx's stopping rule (L1 change < N * tol = {rule.threshold(n_nodes):.3g}) "
                            "stops PageRank after one step at this size; use the l1 rule")
    return result


def paper_rule_applies(benchmark: str, variant: str, neighbourhood: str) -> bool:
    """Does the paper give a proportion of centrality for this benchmark and definition?"""
    return benchmark in published.CENTRALITY and variant == "published" and neighbourhood == "adjacent"


def default_rule(benchmark: str, variant: str, neighbourhood: str) -> StopRule:
    """The paper's rule where the paper gives a value (so it is reproduced), ``l1`` elsewhere."""
    return StopRule("networkx" if paper_rule_applies(benchmark, variant, neighbourhood) else "l1")


def dataset_centrality(dataset: Dataset, space: SearchSpace, variant: str = "published",
                       neighbourhood: str = "adjacent", rule: StopRule | None = None,
                       progress: Callable[[int], None] | None = None) -> Centrality:
    """Proportion of centrality of a measured dataset (missing points count as invalid).

    ``rule`` None: ``default_rule`` of the space's benchmark.
    """
    rule = rule or default_rule(space.name, variant, neighbourhood)
    result = proportion_of_centrality(fitness_array(dataset, space), variant, neighbourhood,
                                      rule=rule, progress=progress)
    n_missing = missing_count(dataset, space)
    if n_missing > 0:
        result.notes.append(f"{n_missing} valid configurations are not in the data; "
                            "they count as invalid (fitness 1e10)")
    return result


def missing_count(dataset: Dataset, space: SearchSpace) -> int:
    """Valid configurations of ``space`` that the dataset has no row for."""
    recorded = dataset.frame["status"] != Status.CONSTRAINT_VIOLATION.value
    return space.count_valid() - int(recorded.sum())
