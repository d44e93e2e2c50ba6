"""Proportion of centrality (Schoonhoven et al., TEVC 2022) on a dataset's search space.

Variants (named in every result):

- ``published`` (default): nodes are every point of the full Cartesian
  product (parameters with one value add no neighbours, so dropping them
  changes nothing); a point that violates a constraint, failed, or is not in
  the data has fitness 1e10; edges x -> y for f(y) <= f(x).
- ``valid``: nodes are the configurations measured ok only; edges need
  f(y) < f(x).

Neighbourhood "adjacent" (bounded: one index moves by 1) or "hamming".
PageRank: alpha 0.85, uniform personalisation, dangling mass uniform,
tol 1e-6 (networkx defaults). Local minima: valid points with no strictly
better neighbour. Proportion for p: PageRank on minima with
f <= (1 + p) f_opt over PageRank on all minima, p = 0, 0.01, ..., 0.5.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bat.analysis.ffg import FitnessFlowGraph
from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError, UnknownNameError
from bat.core.space import SearchSpace

INVALID_FITNESS = 1e10
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
    """PageRank-based proportion of centrality of one landscape."""

    variant: str
    neighbourhood: str
    p: np.ndarray
    proportion: np.ndarray
    n_nodes: int
    n_edges: int
    n_minima: int
    f_opt: float
    tol: float = 1e-6
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"variant": self.variant, "variant_text": VARIANTS[self.variant],
                "neighbourhood": self.neighbourhood, "p": self.p.tolist(),
                "proportion": self.proportion.tolist(), "n_nodes": self.n_nodes,
                "n_edges": self.n_edges, "n_local_minima": self.n_minima, "f_opt_ms": self.f_opt, "tol": self.tol,
                "pagerank": "alpha 0.85, uniform personalisation, dangling uniform (networkx)",
                "notes": self.notes}


def build_graph(fitness: np.ndarray, variant: str = "published",
                neighbourhood: str = "adjacent") -> FitnessFlowGraph:
    """The FFG of a fitness array under a named variant."""
    if variant == "published":
        return FitnessFlowGraph(fitness, neighbourhood=neighbourhood)
    if variant == "valid":
        return FitnessFlowGraph(fitness, nodes=fitness < INVALID_FITNESS,
                                neighbourhood=neighbourhood, strict=True)
    raise UnknownNameError("centrality variant", variant, list(VARIANTS))


def local_minima(graph: FitnessFlowGraph) -> np.ndarray:
    """Valid points (f < 1e10) with no strictly better neighbour."""
    return (graph.fitness < INVALID_FITNESS) & ~graph.has_better_neighbour()


def proportion_of_centrality(fitness: np.ndarray, variant: str = "published",
                             neighbourhood: str = "adjacent", p_grid: np.ndarray = P_GRID,
                             tol: float = 1e-6, max_iter: int = 100,
                             progress: Callable[[int], None] | None = None) -> Centrality:
    """Proportion of centrality of a fitness array for every p in ``p_grid``.

    ``tol`` follows networkx (stop when the L1 change < N * tol); at N >= 2e6
    that rule stops after one step, which the result's notes say.
    """
    fitness = np.asarray(fitness, dtype=np.float64)
    valid = fitness < INVALID_FITNESS
    if not valid.any():
        raise DatasetError("proportion of centrality needs at least one valid configuration")
    graph = build_graph(fitness, variant, neighbourhood)
    rank = graph.pagerank(tol=tol, max_iter=max_iter, progress=progress)
    minima = local_minima(graph)
    f_min, r_min = fitness[minima], rank[minima]
    f_opt = float(fitness[valid].min())
    total = r_min.sum()
    prop = np.array([r_min[f_min <= (1 + p) * f_opt].sum() / total for p in p_grid])
    result = Centrality(variant, neighbourhood, np.asarray(p_grid, dtype=float), prop,
                        graph.n_nodes, graph.n_edges, int(minima.sum()), f_opt, tol)
    if graph.n_nodes * tol >= 2.0:
        result.notes.append(f"networkx's stopping rule (L1 change < N * tol = {graph.n_nodes * tol:.3g}) "
                            "stops PageRank after one step at this size; pass a smaller tol")
    return result


def dataset_centrality(dataset: Dataset, space: SearchSpace, variant: str = "published",
                       neighbourhood: str = "adjacent",
                       progress: Callable[[int], None] | None = None) -> Centrality:
    """Proportion of centrality of a measured dataset (missing points count as invalid)."""
    result = proportion_of_centrality(fitness_array(dataset, space), variant, neighbourhood,
                                      progress=progress)
    n_missing = missing_count(dataset, space)
    if n_missing > 0:
        result.notes.append(f"{n_missing} valid configurations are not in the data; "
                            "they count as invalid (fitness 1e10)")
    return result


def missing_count(dataset: Dataset, space: SearchSpace) -> int:
    """Valid configurations of ``space`` that the dataset has no row for."""
    recorded = dataset.frame["status"] != Status.CONSTRAINT_VIOLATION.value
    return space.count_valid() - int(recorded.sum())
