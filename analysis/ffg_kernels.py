"""Compiled loops (Numba) over the adjacent-value FFG of a product space: edge masks and Gauss-Seidel sweeps.

Hand-written because no library runs PageRank on a graph that is never
stored, and NumPy's whole-array form (``bat.analysis.ffg``) makes some thirty
passes over memory per iteration, too many at 10^8 nodes. Here the graph is
two small integers per node: ``inmask`` (bit 2d: an edge comes in from
index + 1 along axis d; bit 2d + 1: from index - 1) and ``deg`` (out-degree);
the arrays are flat, last axis fastest, and a node's neighbours are at +- the
axis stride, so a sweep needs no coordinates and no bounds checks.

The iterate is ``z = y / out-degree`` (``y`` itself on dangling nodes) of the
linear system ``y = 1 + alpha * P^T y`` (rows of dangling nodes zero), whose
normalised solution is networkx's PageRank with uniform personalisation and
dangling mass spread uniformly. One sweep updates the nodes of rows
``[lo, hi)`` of the leading axis in place, in index order or its reverse,
reading the newest value of every neighbour (Gauss-Seidel).

Layout: ``inmask``, ``deg`` and ``node`` cover the rows [base, base + n) of
the leading axis (a slab, or the whole array with base 0); ``z`` holds the
same points from position ``zoff`` on, with ``zoff`` entries more on each
side: a neighbour slab's boundary row (Dask), or zeros as wide as the
second axis' stride (one machine), so a node's neighbours along all but
the leading axis are read without bounds checks or branches.
"""

from __future__ import annotations

import numba
import numpy as np

#: flag in ``deg``: the node has an edge to an equal-fitness neighbour (the rest is the out-degree)
TIE = 128
DEGREE = TIE - 1


@numba.njit(cache=True, inline="always")
def _unravel(i, shape, coords):
    for d in range(len(shape) - 1, -1, -1):
        coords[d] = i % shape[d]
        i //= shape[d]


@numba.njit(cache=True, inline="always")
def _edge(fi, fj, node_i, strict, valid_only, invalid):
    """Is there an edge from a node of fitness fi to its neighbour of fitness fj?"""
    if not node_i or (valid_only and fj >= invalid):
        return False
    return fj < fi or (not strict and fj == fi)


@numba.njit(cache=True, nogil=True)
def build_range(f, f_base, shape, strides, base, strict, valid_only, invalid, inmask, deg, minimum, lo, hi):
    """Fill ``inmask``, ``deg``, ``minimum`` at positions [lo, hi) of a slab of rows [base, ...); return the edges.

    ``f`` holds the fitness of rows [f_base, ...) (the slab and its neighbour
    rows). Edges x -> y for f(y) <= f(x) (``strict``: <). Points with
    f >= ``invalid`` are invalid: never minima and, with ``valid_only``, no
    nodes (edges join two nodes). ``inmask`` bit 2d: edge from index + stride
    d into this node; bit 2d + 1: from index - stride d. ``deg``: out-degree,
    plus ``TIE`` where the node has an edge to a neighbour of equal fitness
    (it sits on a plateau, whose edges go both ways). ``minimum``: valid, no
    strictly better neighbour.
    """
    nd, row = len(shape), strides[0]
    shift = (base - f_base) * row
    coords = np.empty(nd, np.int64)
    if lo < hi:
        _unravel(lo + base * row, shape, coords)
    count = 0
    for k in range(lo, hi):
        i = k + shift
        fi = f[i]
        node = (not valid_only) or fi < invalid
        m = 0
        out = 0
        better = False
        tie = False
        for d in range(nd):
            s = strides[d]
            if coords[d] + 1 < shape[d]:
                fj = f[i + s]
                better |= fj < fi
                e = _edge(fi, fj, node, strict, valid_only, invalid)
                out += e
                tie |= e and fj == fi
                if _edge(fj, fi, (not valid_only) or fj < invalid, strict, valid_only, invalid):
                    m |= 1 << (2 * d)
            if coords[d] > 0:
                fj = f[i - s]
                better |= fj < fi
                e = _edge(fi, fj, node, strict, valid_only, invalid)
                out += e
                tie |= e and fj == fi
                if _edge(fj, fi, (not valid_only) or fj < invalid, strict, valid_only, invalid):
                    m |= 1 << (2 * d + 1)
        inmask[k] = m
        deg[k] = out | (TIE if tie else 0)
        minimum[k] = fi < invalid and not better
        count += out
        for d in range(nd - 1, -1, -1):  # odometer: next index
            coords[d] += 1
            if coords[d] < shape[d]:
                break
            coords[d] = 0
    return count


@numba.njit(cache=True, parallel=True)
def build_masks(f, f_base, shape, strides, base, strict, valid_only, invalid, inmask, deg, minimum, n_chunks):
    """``build_range`` over the whole slab, in ``n_chunks`` parallel chunks; return the edge count."""
    n = inmask.size
    per = (n + n_chunks - 1) // n_chunks
    edges = np.zeros(n_chunks, np.int64)
    for c in numba.prange(n_chunks):
        edges[c] = build_range(f, f_base, shape, strides, base, strict, valid_only, invalid, inmask, deg, minimum,
                               c * per, min(n, (c + 1) * per))
    return edges.sum()


@numba.njit(cache=True, inline="always", fastmath=True)
def _inflow(z, m, nd, strides, zk):
    """Sum of z over the in-neighbours (in-mask ``m``) of the node at z position zk.

    The leading axis is read only where an edge is (its neighbours may lie a
    whole row away, past the padding); the others branch-free, multiplied by
    their bit. The last axis (stride 1) comes last: in a Gauss-Seidel sweep
    its value was written one step before, and adding it last keeps that
    dependency short.
    """
    acc = 0.0
    if m & 1:
        acc += z[zk + strides[0]]
    if m & 2:
        acc += z[zk - strides[0]]
    if nd == 1:
        return acc
    m >>= 2
    for d in range(1, nd - 1):
        s = strides[d]
        acc += z[zk + s] * (m & 1) + z[zk - s] * ((m >> 1) & 1)
        m >>= 2
    return acc + (z[zk + 1] * (m & 1) + z[zk - 1] * ((m >> 1) & 1))


@numba.njit(cache=True, nogil=True, fastmath=True)
def sweep_rows(z, zoff, inmask, deg, node, strides, alpha, omega, base, lo, hi, forward):
    """One Gauss-Seidel pass over the nodes of leading-axis rows [lo, hi); returns sum |change of y|.

    Nodes on a plateau (``TIE``) are over-relaxed by ``omega`` (SOR): plateau
    edges go both ways, where plain Gauss-Seidel mixes slowly; elsewhere the
    graph is acyclic and over-relaxation would only overshoot. ``node``
    empty means every point is a node.
    """
    nd, row = len(strides), strides[0]
    all_nodes = node.size == 0
    first, last = (lo - base) * row, (hi - base) * row
    # per deg byte: the out-degree (1 for a dangling node, z = y there), its inverse, the relaxation
    times = np.empty(256)
    inverse = np.empty(256)
    relax = np.empty(256)
    for b in range(256):
        times[b] = max(b & DEGREE, 1)
        inverse[b] = 1.0 / times[b]
        relax[b] = omega if b & TIE else 1.0
    change = 0.0
    for t in range(last - first):
        k = first + t if forward else last - 1 - t
        if all_nodes or node[k]:
            y = 1.0 + alpha * _inflow(z, inmask[k], nd, strides, k + zoff)
            b = deg[k]
            old = z[k + zoff] * times[b]
            y = old + relax[b] * (y - old)
            change += abs(y - old)
            z[k + zoff] = y * inverse[b]
    return change


@numba.njit(cache=True, nogil=True)
def sums_rows(z, zoff, deg, node, row, base, lo, hi):
    """(sum of y, sum of y over dangling nodes) over leading-axis rows [lo, hi)."""
    total = dangling = 0.0
    all_nodes = node.size == 0
    for k in range((lo - base) * row, (hi - base) * row):
        if all_nodes or node[k]:
            dk = deg[k] & DEGREE
            if dk:
                total += z[k + zoff] * dk
            else:
                total += z[k + zoff]
                dangling += z[k + zoff]
    return total, dangling


@numba.njit(cache=True, nogil=True)
def residual_rows(z, zoff, inmask, deg, node, strides, alpha, base, lo, hi, scale, teleport):
    """sum |G(x)_i - x_i| over the nodes of rows [lo, hi), x = y * scale, G the networkx PageRank map.

    ``teleport`` = (alpha * dangling mass + 1 - alpha) / number of nodes.
    """
    nd, row = len(strides), strides[0]
    all_nodes = node.size == 0
    out = 0.0
    for k in range((lo - base) * row, (hi - base) * row):
        if all_nodes or node[k]:
            g = alpha * scale * _inflow(z, inmask[k], nd, strides, k + zoff) + teleport
            dk = deg[k] & DEGREE
            x = (z[k + zoff] * dk if dk else z[k + zoff]) * scale
            out += abs(g - x)
    return out


@numba.njit(cache=True, parallel=True)
def sweep_blocks(z, zoff, inmask, deg, node, strides, alpha, omega, bounds, forward):
    """One sweep over every block of rows (block b = rows bounds[b]..bounds[b+1]) of the whole array.

    Even blocks first, in parallel, then odd ones (reverse colour order when
    sweeping backwards), so the result does not depend on the thread count.
    """
    nb = len(bounds) - 1
    change = np.zeros(nb)
    for colour in (0, 1) if forward else (1, 0):
        for h in numba.prange((nb - colour + 1) // 2):
            b = 2 * h + colour
            change[b] = sweep_rows(z, zoff, inmask, deg, node, strides, alpha, omega, 0, bounds[b], bounds[b + 1],
                                   forward)
    return change.sum()


@numba.njit(cache=True, parallel=True)
def sums_blocks(z, zoff, deg, node, row, bounds):
    """(sum of y, sum of y over dangling nodes) of the whole array."""
    nb = len(bounds) - 1
    tot = np.zeros(nb)
    dang = np.zeros(nb)
    for b in numba.prange(nb):
        tot[b], dang[b] = sums_rows(z, zoff, deg, node, row, 0, bounds[b], bounds[b + 1])
    return tot.sum(), dang.sum()


@numba.njit(cache=True, parallel=True)
def residual_blocks(z, zoff, inmask, deg, node, strides, alpha, bounds, scale, teleport):
    """L1 residual of the normalised iterate over the whole array."""
    nb = len(bounds) - 1
    res = np.zeros(nb)
    for b in numba.prange(nb):
        res[b] = residual_rows(z, zoff, inmask, deg, node, strides, alpha, 0, bounds[b], bounds[b + 1], scale,
                               teleport)
    return res.sum()


@numba.njit(cache=True, parallel=True)
def normalise(z, zoff, deg, node, scale, n_chunks):
    """In place: z (padding aside) -> PageRank (y * scale on nodes, 0 elsewhere)."""
    n = deg.size
    per = (n + n_chunks - 1) // n_chunks
    all_nodes = node.size == 0
    for c in numba.prange(n_chunks):
        for k in range(c * per, min(n, (c + 1) * per)):
            if all_nodes or node[k]:
                dk = deg[k] & DEGREE
                z[k + zoff] = (z[k + zoff] * dk if dk else z[k + zoff]) * scale
            else:
                z[k + zoff] = 0.0
