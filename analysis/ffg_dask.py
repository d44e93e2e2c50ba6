"""PageRank of a product FFG on a Dask cluster: the space cut into slabs of leading-axis rows, one per task.

For products larger than one machine's memory. Each slab lives on a worker
as the compiled solver's state (``bat.analysis.ffg_product.Slab`` and its
iterate, with one ghost row each side); the fitness of a slab is computed
there by ``fitness_rows(lo, hi)`` (rows lo..hi-1 of the full array), so the
whole fitness array never exists anywhere. One sweep is two rounds of tasks:
even slabs with their neighbours' boundary rows, then odd slabs with the
even slabs' new ones (backwards: odd first). That is exactly the block order
of ``ProductFFG.pagerank`` when the slabs are its blocks, so with the same
bounds the iterates agree to the last bit; only the sums (for the residual
and the normalisation) are added in another order. The stopping rule and
its checks are ``bat.analysis.ffg_product.solve``.

Dask (``distributed``) does the scheduling and data movement; only the
halo exchange and the order of the rounds are written here. A slab's state
is updated in place by its tasks (copying 10^8 values per sweep would cost
more than the sweep), so a worker lost mid-run means running it again.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.analysis import ffg_kernels as k
from bat.analysis.ffg_product import OMEGA, Slab, build_slab, product_strides, row_blocks, solve, start_iterate
from bat.analysis.pagerank_rule import ALPHA, PageRankRun, StopRule, finish

if TYPE_CHECKING:
    from distributed import Client, Future

FitnessRows = Callable[[int, int], np.ndarray]


@dataclass
class _State:
    """One slab on a worker: its graph and its iterate z (rows lo - 1 .. hi, ghost rows included)."""

    slab: Slab
    z: np.ndarray
    strides: np.ndarray
    f_opt: float


def _build(fitness_rows: FitnessRows, shape: tuple[int, ...], lo: int, hi: int, strict: bool, valid_only: bool,
           invalid: float) -> _State:
    f_lo, f_hi = max(lo - 1, 0), min(hi + 1, shape[0])
    f = np.ascontiguousarray(fitness_rows(f_lo, f_hi), dtype=np.float64).reshape(-1)
    slab = build_slab(f, f_lo, shape, lo, hi, strict=strict, valid_only=valid_only, invalid=invalid)
    strides = product_strides(shape)
    row = int(strides[0])
    z = np.zeros(slab.deg.size + 2 * row)
    start_iterate(z[row:row + slab.deg.size], slab.deg, slab.node)
    f_opt = float(slab.minima_fitness.min()) if slab.minima.size else np.inf
    return _State(slab, z, strides, f_opt)


def _counts(state: _State) -> tuple[int, int, float]:
    return state.slab.n_nodes, state.slab.n_edges, state.f_opt


def _edges(state: _State) -> tuple[np.ndarray, np.ndarray]:
    """z of the slab's first and last row (its neighbours' ghost rows)."""
    row = int(state.strides[0])
    return state.z[row:2 * row].copy(), state.z[-2 * row:-row].copy()


def _set_ghosts(state: _State, below: tuple[np.ndarray, np.ndarray] | None,
                above: tuple[np.ndarray, np.ndarray] | None) -> None:
    row = int(state.strides[0])
    if below is not None:
        state.z[:row] = below[1]
    if above is not None:
        state.z[-row:] = above[0]


def _sweep(state: _State, below: Any, above: Any, alpha: float, omega: float, forward: bool) -> tuple[_State, float]:
    _set_ghosts(state, below, above)
    s = state.slab
    change = k.sweep_rows(state.z, int(state.strides[0]), s.inmask, s.deg, s.node, state.strides, alpha, omega, s.lo,
                          s.lo, s.hi, forward)
    return state, change


def _sums(state: _State) -> tuple[float, float]:
    s = state.slab
    row = int(state.strides[0])
    return k.sums_rows(state.z, row, s.deg, s.node, row, s.lo, s.lo, s.hi)


def _residual(state: _State, below: Any, above: Any, alpha: float, scale: float, teleport: float) -> float:
    _set_ghosts(state, below, above)
    s = state.slab
    return k.residual_rows(state.z, int(state.strides[0]), s.inmask, s.deg, s.node, state.strides, alpha, s.lo,
                           s.lo, s.hi, scale, teleport)


def _minima(state: _State, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(flat ids, fitness, PageRank) of the slab's local minima."""
    s, row = state.slab, int(state.strides[0])
    local = s.minima - s.lo * row
    y = state.z[row + local] * np.maximum(s.deg[local] & k.DEGREE, 1)
    return s.minima, s.minima_fitness, y * scale


def _rank(state: _State, scale: float) -> np.ndarray:
    s, row = state.slab, int(state.strides[0])
    y = state.z[row:row + s.deg.size] * np.maximum(s.deg & k.DEGREE, 1)
    if s.node.size:
        y[~s.node] = 0.0
    return y * scale


@dataclass
class DaskPageRank:
    """PageRank of a product FFG computed on a cluster, kept there; what centrality needs comes back."""

    run: PageRankRun  # rank: the PageRank of the local minima, in the order of ``minima``
    minima: np.ndarray
    minima_fitness: np.ndarray
    f_opt: float
    n_nodes: int
    n_edges: int
    full_rank: np.ndarray | None


def dask_pagerank(client: Client, fitness_rows: FitnessRows, shape: tuple[int, ...], *, strict: bool = False,
                  valid_only: bool = False, invalid: float = np.inf, n_slabs: int = 8,
                  rule: StopRule | None = None, max_iter: int = 1000, alpha: float = ALPHA,
                  omega: float = OMEGA, allow_unconverged: bool = False, gather_rank: bool = False) -> DaskPageRank:
    """PageRank of the adjacent-value FFG of a product of ``shape`` under the ``l1`` rule, on ``client``'s cluster.

    The product is cut into ``n_slabs`` slabs of leading-axis rows
    (``row_blocks``: the same cut ``ProductFFG.pagerank(n_blocks=n_slabs)``
    uses). ``gather_rank`` also brings the whole PageRank back (small products).
    """
    from distributed import wait

    rule = rule or StopRule("l1")
    if rule.name != "l1":
        raise ValueError("the Dask solver uses the l1 rule")
    shape = tuple(int(s) for s in shape)
    bounds = row_blocks(shape[0], n_slabs)
    n = len(bounds) - 1
    states: list[Future] = [client.submit(_build, fitness_rows, shape, int(bounds[b]), int(bounds[b + 1]), strict,
                                          valid_only, invalid, pure=False) for b in range(n)]
    counts = client.gather([client.submit(_counts, st, pure=False) for st in states])
    n_nodes = sum(c[0] for c in counts)
    n_edges = sum(c[1] for c in counts)

    def neighbours(b: int, edges: Sequence[Future | None]) -> tuple[Future | None, Future | None]:
        return (edges[b - 1] if b > 0 else None), (edges[b + 1] if b + 1 < n else None)

    def sweep(forward: bool, om: float) -> float:
        changes = []
        for colour in ((0, 1) if forward else (1, 0)):
            # boundary rows of the other colour, which no task of this round changes
            edges = [client.submit(_edges, st, pure=False) if b % 2 != colour else None
                     for b, st in enumerate(states)]
            for b in range(colour, n, 2):
                done = client.submit(_sweep, states[b], *neighbours(b, edges), alpha, om, forward, pure=False)
                states[b] = client.submit(operator.itemgetter(0), done, pure=False)
                changes.append(client.submit(operator.itemgetter(1), done, pure=False))
            wait(states)  # the next round reads this round's new boundary rows
        return float(sum(client.gather(changes)))

    def sums() -> tuple[float, float]:
        parts = client.gather([client.submit(_sums, st, pure=False) for st in states])
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    def residual(scale: float, teleport: float) -> float:
        edges = [client.submit(_edges, st, pure=False) for st in states]
        parts = [client.submit(_residual, states[b], *neighbours(b, edges), alpha, scale, teleport, pure=False)
                 for b in range(n)]
        return float(sum(client.gather(parts)))

    iterations, res, total, omega_used = solve(sweep, sums, residual, n_nodes, rule.threshold(n_nodes), alpha,
                                               omega, max_iter)
    parts = client.gather([client.submit(_minima, st, 1.0 / total, pure=False) for st in states])
    minima = np.concatenate([p[0] for p in parts])
    minima_fitness = np.concatenate([p[1] for p in parts])
    rank = np.concatenate([p[2] for p in parts])
    full = (np.concatenate(client.gather([client.submit(_rank, st, 1.0 / total, pure=False) for st in states]))
            if gather_rank else None)
    run = PageRankRun(rank, rule, f"block SOR on plateaus (omega {omega_used:g}) over {n} Dask slabs",
                      iterations, res, res <= rule.threshold(n_nodes))
    finish(run, max_iter, allow_unconverged)
    f_opt = min(c[2] for c in counts)
    return DaskPageRank(run, minima, minima_fitness, f_opt, n_nodes, n_edges, full)
