"""The adjacent-value FFG of a full product space as one bit mask per node, and PageRank on it by Gauss-Seidel.

For spaces up to and past 10^8 configurations: memory is the fitness array
(the caller's), an in-edge mask (1 to 8 bytes) and an out-degree byte per
node, and one float64 iterate; no edge list. The loops are in
``bat.analysis.ffg_kernels`` (Numba).

PageRank solves the linear system ``y = 1 + alpha P^T y`` (dangling rows of P
zero; x = y / sum(y) is networkx's PageRank with uniform personalisation and
dangling mass spread uniformly) by block Gauss-Seidel: the leading axis is
cut into blocks of rows, even blocks are swept in parallel and then odd
ones, alternating forward and backward sweeps. The iteration stops when the
L1 residual of the normalised iterate under the real PageRank map, computed
exactly in a separate pass, meets the rule (``bat.analysis.pagerank_rule``).
float64 throughout: at 1.2e8 nodes a float32 vector rounds each value to a
relative 6e-8, an L1 floor near 6e-8 in total, above the 1e-9 the rule asks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numba
import numpy as np

from bat.analysis import ffg_kernels as k
from bat.analysis.pagerank_rule import ALPHA, PageRankRun, StopRule, finish

#: how many leading-axis blocks the Gauss-Seidel sweep uses at most (fixed, so results do not depend on threads)
MAX_BLOCKS = 8
#: over-relaxation factor (1 = Gauss-Seidel); 1.4 took the fewest sweeps on the Hotspot and Dedispersion products
OMEGA = 1.4
#: the exact residual is computed at least this often (sweeps)
CHECK_EVERY = 10
#: products of fewer points run the parallel kernels on the calling thread alone: Numba's OpenMP threads cost
#: more than they share out below it (a 10,240-point PageRank took 1.3 CPU s on two threads of a loaded 2-core
#: machine, 0.01 s on one); results do not depend on the threads (the blocks are fixed)
PARALLEL_FROM = 1 << 20


@contextlib.contextmanager
def threads_for(points: int) -> Iterator[None]:
    """Numba's parallel kernels on one thread while in this block when ``points`` is under ``PARALLEL_FROM``."""
    if points >= PARALLEL_FROM:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def mask_dtype(ndim: int) -> np.dtype:
    """Smallest unsigned integer with two bits per axis."""
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if 2 * ndim <= 8 * np.dtype(dt).itemsize:
            return np.dtype(dt)
    raise ValueError(f"a product FFG supports at most 32 axes, got {ndim}")


def row_blocks(rows: int, n_blocks: int) -> np.ndarray:
    """Bounds (n_blocks + 1,) that cut ``rows`` leading-axis rows into near-equal blocks."""
    n_blocks = max(1, min(rows, n_blocks))
    return np.linspace(0, rows, n_blocks + 1).round().astype(np.int64)


class ProductFFG:
    """Edges x -> y between adjacent-value neighbours with f(y) <= f(x) (``strict``: <).

    Points with f >= ``invalid`` are invalid. ``valid_only``: nodes are the
    valid points (edges join two nodes); otherwise every point is a node.
    Local minima: valid points with no strictly better neighbour (flat ids
    ``minima``, their fitness ``minima_fitness``). The fitness array is not kept.
    """

    def __init__(self, fitness: np.ndarray, *, strict: bool = False, valid_only: bool = False,
                 invalid: float = np.inf) -> None:
        f = np.ascontiguousarray(fitness, dtype=np.float64)
        # parameters with one value add no neighbours; without them the flat order is the same
        self.shape = tuple(s for s in f.shape if s > 1) or (1,)
        self.strides = product_strides(self.shape)
        with threads_for(f.size):
            self.n_threads = numba.get_num_threads()
            slab = build_slab(f.reshape(-1), 0, self.shape, 0, self.shape[0], strict=strict,
                              valid_only=valid_only, invalid=invalid, n_chunks=4 * self.n_threads)
        self.inmask, self.deg, self.node = slab.inmask, slab.deg, slab.node
        self.minima, self.minima_fitness = slab.minima, slab.minima_fitness
        self.n_nodes, self.n_edges = slab.n_nodes, slab.n_edges

    def pagerank(self, rule: StopRule | None = None, max_iter: int = 1000, alpha: float = ALPHA,
                 n_blocks: int = MAX_BLOCKS, omega: float = OMEGA, allow_unconverged: bool = False,
                 progress: Callable[[int], None] | None = None) -> PageRankRun:
        """PageRank (flat, 0 off the nodes) under the ``l1`` rule, by block SOR / Gauss-Seidel."""
        rule = rule or StopRule("l1")
        if rule.name != "l1":
            raise ValueError("ProductFFG solves under the l1 rule; the networkx rule is bat.analysis.ffg's")
        row = int(self.strides[0])
        pad = int(self.strides[1]) if len(self.shape) > 1 else 0  # see bat.analysis.ffg_kernels: layout
        bounds = row_blocks(self.shape[0], n_blocks)
        z = np.zeros(self.deg.size + 2 * pad)
        start_iterate(z[pad:pad + self.deg.size], self.deg, self.node)
        graph = (self.inmask, self.deg, self.node, self.strides, alpha)
        with threads_for(self.deg.size):
            iterations, residual, total, omega_used = solve(
                lambda fw, om: k.sweep_blocks(z, pad, *graph, om, bounds, fw),
                lambda: k.sums_blocks(z, pad, self.deg, self.node, row, bounds),
                lambda scale, tele: k.residual_blocks(z, pad, *graph, bounds, scale, tele),
                self.n_nodes, rule.threshold(self.n_nodes), alpha, omega, max_iter, progress)
            k.normalise(z, pad, self.deg, self.node, 1.0 / total, 4 * self.n_threads)
        out = PageRankRun(z[pad:pad + self.deg.size], rule,
                          f"block SOR on plateaus (omega {omega_used:g}), Gauss-Seidel elsewhere; product FFG",
                          iterations, residual, residual <= rule.threshold(self.n_nodes))
        return finish(out, max_iter, allow_unconverged)


def product_strides(shape: tuple[int, ...]) -> np.ndarray:
    """Flat-index strides of an array of ``shape`` (last axis fastest)."""
    return np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))], np.int64)


@dataclass
class Slab:
    """The FFG of leading-axis rows [lo, hi) of a product: in-masks, out-degrees, nodes and local minima."""

    lo: int
    hi: int
    inmask: np.ndarray
    deg: np.ndarray
    node: np.ndarray
    minima: np.ndarray
    minima_fitness: np.ndarray
    n_nodes: int
    n_edges: int


def build_slab(f: np.ndarray, f_base: int, shape: tuple[int, ...], lo: int, hi: int, *, strict: bool,
               valid_only: bool, invalid: float, n_chunks: int = 0) -> Slab:
    """The slab of rows [lo, hi); ``f`` (flat) holds the fitness of rows [f_base, ...), one row beyond each side.

    ``n_chunks`` > 0: built by that many Numba threads' chunks; 0: in this
    thread only (Numba's default thread pool must not be entered from two
    threads at once, as Dask's worker threads would).
    """
    strides = product_strides(shape)
    row = int(strides[0])
    n = (hi - lo) * row
    inmask = np.empty(n, mask_dtype(len(shape)))
    deg = np.empty(n, np.uint8)
    minimum = np.empty(n, np.bool_)
    args = (f, f_base, np.array(shape, np.int64), strides, lo, strict, valid_only, invalid, inmask, deg, minimum)
    n_edges = int(k.build_masks(*args, n_chunks) if n_chunks else k.build_range(*args, 0, n))
    minima = np.flatnonzero(minimum)
    del minimum
    own = f[(lo - f_base) * row:(hi - f_base) * row]
    node = own < invalid if valid_only else np.empty(0, np.bool_)
    return Slab(lo, hi, inmask, deg, node, minima + lo * row, own[minima],
                int(node.sum()) if valid_only else n, n_edges)


def start_iterate(z: np.ndarray, deg: np.ndarray, node: np.ndarray) -> None:
    """y = 1 on every node (z = y / out-degree), 0 elsewhere."""
    out = deg & k.DEGREE
    np.divide(1.0, out, out=z, where=out > 0)
    z[out == 0] = 1.0
    if node.size:
        z[~node] = 0.0


def solve(sweep: Callable[[bool, float], float], sums: Callable[[], tuple[float, float]],
          residual: Callable[[float, float], float], n_nodes: int, tol: float, alpha: float, omega: float,
          max_iter: int, progress: Callable[[int], None] | None = None) -> tuple[int, float, float, float]:
    """Sweep (alternating direction) until the exact residual is <= tol: (sweeps, residual, sum of y, omega).

    The residual pass costs about a sweep, so it runs every ``CHECK_EVERY``
    sweeps, after a sweep that changed nothing, and whenever the sweep's own change, scaled by the
    residual-to-change ratio of the last check, says the rule may hold. A
    residual that grew since the last check turns over-relaxation off (omega
    1: Gauss-Seidel, which converges on this system in any order: its matrix
    is a column diagonally dominant M-matrix).
    """
    ratio, last_res, res, total = 0.0, np.inf, np.inf, np.nan
    for it in range(1, max_iter + 1):
        change = sweep(it % 2 == 1, omega)
        if progress is not None:
            progress(it)
        if (it % CHECK_EVERY == 0 or it == max_iter or change == 0.0
                or (ratio and change / total * ratio <= tol)):
            total, dangling = sums()
            res = residual(1.0 / total, (alpha * dangling / total + 1.0 - alpha) / n_nodes)
            if res <= tol:
                return it, res, total, omega
            if res > last_res:
                omega = 1.0
            ratio, last_res = res / max(change / total, 1e-300), res
    return max_iter, res, total, omega
