"""The straightforward FFG: a networkx DiGraph built node by node, and nx.pagerank on it.

The reference that ``bat.analysis.ffg`` is tested and benchmarked against; it
loops in Python over nodes and neighbours, so keep it to small spaces.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import networkx as nx


def reference_graph(fitness: np.ndarray, *, nodes: np.ndarray | None = None,
                    neighbourhood: str = "adjacent", strict: bool = False) -> nx.DiGraph:
    """The FFG of ``fitness`` as a networkx DiGraph (nodes: index tuples), built by Python loops."""
    import networkx as nx

    f = np.asarray(fitness, dtype=float)
    shape = f.shape
    is_node = np.ones(shape, bool) if nodes is None else np.asarray(nodes, bool)
    graph: nx.DiGraph[tuple[int, ...]] = nx.DiGraph()
    for point in itertools.product(*(range(s) for s in shape)):
        if not is_node[point]:
            continue
        graph.add_node(point)
        for axis, size in enumerate(shape):
            if neighbourhood == "adjacent":
                others = [v for v in (point[axis] - 1, point[axis] + 1) if 0 <= v < size]
            else:
                others = [v for v in range(size) if v != point[axis]]
            for v in others:
                nb = (*point[:axis], v, *point[axis + 1:])
                if not is_node[nb]:
                    continue
                if f[nb] < f[point] or (not strict and f[nb] == f[point]):
                    graph.add_edge(point, nb)
    return graph


def reference_pagerank(fitness: np.ndarray, *, nodes: np.ndarray | None = None,
                       neighbourhood: str = "adjacent", strict: bool = False, l1_change: float | None = None,
                       max_iter: int = 100) -> np.ndarray:
    """networkx PageRank of the FFG of ``fitness`` (0 off the nodes).

    networkx's own rule (L1 change < N * 1e-6), or with ``l1_change`` an L1
    change below that total (tol = l1_change / N).
    """
    import networkx as nx

    graph = reference_graph(fitness, nodes=nodes, neighbourhood=neighbourhood, strict=strict)
    tol = 1e-6 if l1_change is None else l1_change / graph.number_of_nodes()
    ranks = nx.pagerank(graph, alpha=0.85, tol=tol, max_iter=max_iter)
    out = np.zeros(np.shape(fitness))
    for point, value in ranks.items():
        out[point] = value
    return out
