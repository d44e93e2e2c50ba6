"""The fitness flow graph (FFG) held implicitly in an n-d fitness array, and PageRank on it.

Hand-written because no library runs PageRank on a graph that is never
stored: with one array axis per parameter (values in order), the neighbours
of every node along axis d at offset s are the array shifted by s along d.
Edges, out-degrees, local minima and one power-iteration step are then a
few whole-array operations per (axis, offset); memory grows with the nodes,
not the edges, and no Python loop runs per node.

PageRank follows ``networkx.pagerank`` exactly: x <- alpha * (x P + (dangling
mass) * p) + (1 - alpha) * p with P the out-degree-normalised adjacency,
uniform personalisation p over the nodes, dangling mass spread as p, from
x = p, at most ``max_iter`` steps; it stops under a named rule
(``bat.analysis.pagerank_rule``): networkx's own (L1 change below N * tol) or
``l1`` (L1 change, the residual of the previous iterate, at most tol).
For the adjacent neighbourhood of large spaces ``bat.analysis.ffg_product`` is
faster and smaller; this module also does the Hamming neighbourhood.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from bat.analysis.pagerank_rule import ALPHA, PageRankRun, StopRule, finish
from bat.core.errors import UnknownNameError

NEIGHBOURHOODS = ("adjacent", "hamming")


@dataclass(frozen=True)
class _Pair:
    """All node pairs (a, b) that sit ``offset`` apart along ``axis``: a = lower index."""

    axis: int
    offset: int
    up: np.ndarray    # edge a -> b (b is the higher index)
    down: np.ndarray  # edge b -> a

    def lo(self, arr: np.ndarray) -> np.ndarray:
        return _take(arr, self.axis, slice(0, arr.shape[self.axis] - self.offset))

    def hi(self, arr: np.ndarray) -> np.ndarray:
        return _take(arr, self.axis, slice(self.offset, None))


def _take(arr: np.ndarray, axis: int, sl: slice) -> np.ndarray:
    index = [slice(None)] * arr.ndim
    index[axis] = sl
    return arr[tuple(index)]


class FitnessFlowGraph:
    """Edges x -> y between neighbours with f(y) <= f(x) (``strict``: f(y) < f(x)).

    ``nodes`` (bool array like ``fitness``) restricts the graph to some points;
    without it every point of the array is a node. ``neighbourhood``:
    "adjacent" (one parameter's index moves by 1, no wrap-around) or
    "hamming" (one parameter takes any other value).
    """

    def __init__(self, fitness: np.ndarray, *, nodes: np.ndarray | None = None,
                 neighbourhood: str = "adjacent", strict: bool = False) -> None:
        if neighbourhood not in NEIGHBOURHOODS:
            raise UnknownNameError("neighbourhood", neighbourhood, NEIGHBOURHOODS)
        self.fitness = np.asarray(fitness, dtype=np.float64)
        self.nodes = None if nodes is None else np.asarray(nodes, dtype=bool)
        self.n_nodes = self.fitness.size if self.nodes is None else int(self.nodes.sum())
        self.neighbourhood = neighbourhood
        self.strict = strict
        self.pairs = list(self._pairs())
        self.out_degree = np.zeros(self.fitness.shape, dtype=np.int32)
        for pr in self.pairs:
            pr.lo(self.out_degree)[...] += pr.up
            pr.hi(self.out_degree)[...] += pr.down

    def _pairs(self) -> Iterator[_Pair]:
        f = self.fitness
        better = np.less if self.strict else np.less_equal
        for axis, size in enumerate(f.shape):
            offsets = [1] if self.neighbourhood == "adjacent" else range(1, size)
            for s in offsets:
                if s >= size:
                    continue
                lo = _take(f, axis, slice(0, size - s))
                hi = _take(f, axis, slice(s, None))
                up, down = better(hi, lo), better(lo, hi)
                if self.nodes is not None:
                    both = _take(self.nodes, axis, slice(0, size - s)) & _take(self.nodes, axis, slice(s, None))
                    up &= both
                    down &= both
                yield _Pair(axis, s, up, down)

    @property
    def n_edges(self) -> int:
        return int(sum(int(p.up.sum()) + int(p.down.sum()) for p in self.pairs))

    def has_better_neighbour(self) -> np.ndarray:
        """Bool array: does the point have a neighbour (in this graph's neighbourhood) with strictly lower f?"""
        f = self.fitness
        out = np.zeros(f.shape, dtype=bool)
        for pr in self.pairs:
            lo, hi = pr.lo(f), pr.hi(f)
            if self.nodes is None:
                pr.lo(out)[...] |= hi < lo
                pr.hi(out)[...] |= lo < hi
            else:
                both = pr.lo(self.nodes) & pr.hi(self.nodes)
                pr.lo(out)[...] |= (hi < lo) & both
                pr.hi(out)[...] |= (lo < hi) & both
        return out

    def pagerank(self, rule: StopRule | None = None, max_iter: int = 100, alpha: float = ALPHA,
                 allow_unconverged: bool = False,
                 progress: Callable[[int], None] | None = None) -> PageRankRun:
        """PageRank of every node (0 off the nodes) by networkx's power iteration, stopped by ``rule``.

        The default rule is networkx's (``StopRule("networkx")``, tol 1e-6).
        """
        rule = rule or StopRule("networkx")
        shape, n = self.fitness.shape, self.n_nodes
        threshold = rule.threshold(n)
        p = np.full(shape, 1.0 / n)
        if self.nodes is not None:
            p[~self.nodes] = 0.0
        dangling = self.out_degree == 0
        if self.nodes is not None:
            dangling &= self.nodes
        inv_deg = np.zeros(shape)
        np.divide(1.0, self.out_degree, out=inv_deg, where=~dangling & (self.out_degree > 0))
        x, y, new, tmp = p.copy(), np.empty(shape), np.empty(shape), np.empty(shape)
        err = np.inf
        for it in range(max_iter):
            np.multiply(x, inv_deg, out=y)
            new.fill(0.0)
            for pr in self.pairs:
                t = pr.lo(tmp)
                np.multiply(pr.lo(y), pr.up, out=t)
                pr.hi(new)[...] += t
                np.multiply(pr.hi(y), pr.down, out=t)
                pr.lo(new)[...] += t
            spill = float(x[dangling].sum())
            new *= alpha
            new += (alpha * spill + (1.0 - alpha)) * p
            np.subtract(new, x, out=tmp)
            err = float(np.abs(tmp).sum())
            x, new = new, x
            if progress is not None:
                progress(it + 1)
            if err < threshold or (rule.name == "l1" and err <= threshold):
                return PageRankRun(x, rule, "power iteration (networkx)", it + 1, err, True)
        return finish(PageRankRun(x, rule, "power iteration (networkx)", max_iter, err, False),
                      max_iter, allow_unconverged)
