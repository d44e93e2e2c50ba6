"""Constraint groups: the valid set of a search space as a product of independent parts.

Two parameters are linked when one constraint names both; each connected set
of parameters is a group, and a configuration is valid exactly when each
group's part of it is valid. A group's valid part is found by evaluating its
constraints over the group's own sub-product in bounded chunks and is held as
sorted local ids, so counting, ranking and unranking never touch the full
product. Hand-written: this is the engine's core idea (METHODS.md, "Working
with spaces of 10^8 configurations") and no library offers it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from bat.core.expressions import Expression

#: rows evaluated at once when scanning a group's sub-product (bounded memory)
EVAL_CHUNK = 1 << 20
#: groups whose sub-product is at most this big also keep a boolean lookup mask
MASK_LIMIT = 1 << 22


def mixed_radix_strides(radices: np.ndarray) -> np.ndarray:
    """Strides of a mixed-radix number whose last digit is fastest."""
    strides = np.ones(len(radices), dtype=np.int64)
    for j in range(len(radices) - 2, -1, -1):
        strides[j] = strides[j + 1] * radices[j + 1]
    return strides


def digits(ids: np.ndarray, radices: np.ndarray) -> np.ndarray:
    """Mixed-radix digits (n, len(radices)) of integer ids, last digit fastest.

    Built as (len(radices), n) and returned transposed: one contiguous pass per digit.
    """
    ids = np.asarray(ids, dtype=np.int64)
    out = np.empty((len(radices), len(ids)), dtype=np.int64)
    for j, stride in enumerate(mixed_radix_strides(radices)):
        np.floor_divide(ids, stride, out=out[j])
        np.remainder(out[j], radices[j], out=out[j])
    return out.T


@dataclass
class Group:
    """Parameters linked by constraints (positions ``members``, ascending) and their valid part."""

    members: np.ndarray
    radices: np.ndarray
    constraints: tuple[Expression, ...]
    value_arrays: tuple[np.ndarray, ...]
    names: tuple[str, ...]
    env: dict[str, object]
    strides: np.ndarray = field(init=False)
    size: int = field(init=False)
    _valid: np.ndarray | None = field(default=None, init=False)
    _cols: np.ndarray | None = field(default=None, init=False)
    _mask: np.ndarray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.strides = mixed_radix_strides(self.radices)
        self.size = math.prod(int(r) for r in self.radices)

    def _blocks(self) -> Iterator[tuple[int, tuple[int, ...], np.ndarray]]:
        """(first local id, leading digits, validity of the trailing axes) per block.

        Each parameter enters the expressions as an open-mesh array (its values
        along its own axis), so a constraint is evaluated only over the axes it
        names and broadcast into the block. The leading axes are fixed one
        combination at a time so that no block exceeds EVAL_CHUNK entries.
        """
        shape = tuple(int(r) for r in self.radices)
        split = 0
        while math.prod(shape[split:]) > EVAL_CHUNK:
            split += 1
        trailing = shape[split:]
        env = dict(self.env)
        for k in range(split, len(shape)):
            axis = [1] * len(trailing)
            axis[k - split] = shape[k]
            env[self.names[k]] = self.value_arrays[k].reshape(axis)
        block = math.prod(trailing)
        for n, lead in enumerate(np.ndindex(*shape[:split])):
            for k, digit in enumerate(lead):
                env[self.names[k]] = self.value_arrays[k][digit]
            ok = np.ones(trailing, dtype=bool)
            for expr in self.constraints:
                ok &= np.asarray(expr.evaluate(env), dtype=bool)
            yield n * block, lead, ok

    def _evaluate(self) -> None:
        ids, cols = [], []
        for start, lead, ok in self._blocks():
            ids.append(start + np.flatnonzero(ok))
            digits_ = np.array(np.nonzero(ok), dtype=np.int64).reshape(ok.ndim, -1)
            lead_cols = np.repeat(np.array(lead, dtype=np.int64)[:, None], digits_.shape[1], 1)
            cols.append(np.concatenate([lead_cols, digits_]))
        self._valid = np.concatenate(ids)
        self._cols = np.concatenate(cols, axis=1)

    def valid_cols(self) -> np.ndarray:
        """Digit columns (k, m) of the valid part, in id order (computed once)."""
        if self._cols is None:
            self._evaluate()
        assert self._cols is not None
        return self._cols

    def valid(self, progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Sorted valid local ids (computed once)."""
        if self._valid is None:
            self._evaluate()
        if progress is not None:
            progress(self.size)
        assert self._valid is not None
        return self._valid

    def contains_one(self, local_id: int) -> bool:
        """Membership of one local id in the valid part (no array round trip)."""
        if self.size <= MASK_LIMIT:
            if self._mask is None:
                self.contains(np.zeros(1, dtype=np.int64))  # builds the mask
            assert self._mask is not None
            return bool(self._mask[local_id])
        return bool(self.contains(np.array([local_id], dtype=np.int64))[0])

    def contains(self, local_ids: np.ndarray) -> np.ndarray:
        """Membership of local ids in the valid part."""
        if self.size <= MASK_LIMIT:
            if self._mask is None:
                mask = np.zeros(self.size, dtype=bool)
                mask[self.valid()] = True
                self._mask = mask
            inside: np.ndarray = self._mask[local_ids]
            return inside
        valid = self.valid()
        pos = np.searchsorted(valid, local_ids)
        found: np.ndarray = (pos < len(valid)) & (valid[np.minimum(pos, len(valid) - 1)] == local_ids)
        return found

    def count_in(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Number of valid local ids in [lo, hi) (elementwise)."""
        valid = self.valid()
        return np.searchsorted(valid, hi) - np.searchsorted(valid, lo)


def build_groups(radices: np.ndarray, names: Sequence[str], value_arrays: Sequence[np.ndarray],
                 constraints: Sequence[Expression], env: dict[str, object]) -> list[Group]:
    """Split parameters into connected groups by shared constraints (union-find)."""
    parent = list(range(len(names)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    position = {n: i for i, n in enumerate(names)}
    owners = []
    for expr in constraints:
        used = sorted(position[n] for n in expr.names if n in position) or [0]
        for other in used[1:]:
            parent[root(other)] = root(used[0])
        owners.append(used[0])
    by_root: dict[int, list[int]] = {}
    for i in range(len(names)):
        by_root.setdefault(root(i), []).append(i)
    groups = []
    for members in sorted(by_root.values()):
        idx = np.array(members, dtype=np.int64)
        groups.append(Group(
            members=idx,
            radices=radices[idx],
            constraints=tuple(e for e, o in zip(constraints, owners, strict=True)
                              if root(o) == root(members[0])),
            value_arrays=tuple(value_arrays[i] for i in members),
            names=tuple(names[i] for i in members),
            env=env,
        ))
    return groups


def _others(counts: list[np.ndarray], skip: int, n: int) -> np.ndarray:
    out = np.ones(n, dtype=np.int64)
    for h, c in enumerate(counts):
        if h != skip:
            out *= c
    return out


def _owners(groups: Sequence[Group], d: int) -> list[tuple[int, int]]:
    owner: list[tuple[int, int]] = [(0, 0)] * d
    for g, group in enumerate(groups):
        for q, j in enumerate(group.members):
            owner[int(j)] = (g, q)
    return owner


def in_id_order(groups: Sequence[Group]) -> bool:
    """Do the groups cover the parameters as consecutive blocks (first group first)?

    Then a configuration's flat id orders like the tuple of its groups' local
    ids, so the valid set in id order is the product of the groups' valid sets
    in order, and a rank is a mixed-radix number over the groups' valid counts.
    """
    members = np.concatenate([g.members for g in groups])
    return bool(np.array_equal(members, np.arange(len(members))))


def rank(groups: Sequence[Group], idx: np.ndarray) -> np.ndarray:
    """Number of valid configurations with a smaller flat id than each (valid) row."""
    if in_id_order(groups):
        total = np.zeros(len(idx), dtype=np.int64)
        for group in groups:
            valid = group.valid()
            total = total * len(valid) + np.searchsorted(valid, idx[:, group.members] @ group.strides)
        return total
    return _rank_interleaved(groups, idx)


def unrank(groups: Sequence[Group], ranks: np.ndarray, d: int) -> np.ndarray:
    """Value-index rows of the valid configurations with the given ranks (id order)."""
    if in_id_order(groups):
        out = np.empty((d, len(ranks)), dtype=np.int64)
        rest = np.array(ranks, dtype=np.int64)
        for group in reversed(groups):
            cols = group.valid_cols()
            rest, local = np.divmod(rest, cols.shape[1])
            out[group.members] = cols[:, local]
        return out.T
    return _unrank_interleaved(groups, ranks, d)


def _rank_interleaved(groups: Sequence[Group], idx: np.ndarray) -> np.ndarray:
    """``rank`` for groups whose parameters interleave: one parameter at a time, in id order."""
    n, d = idx.shape
    lo = [np.zeros(n, dtype=np.int64) for _ in groups]
    counts = [np.full(n, len(g.valid()), dtype=np.int64) for g in groups]
    total = np.zeros(n, dtype=np.int64)
    for j, (g, q) in enumerate(_owners(groups, d)):
        group, step = groups[g], groups[g].strides[q]
        start = lo[g] + idx[:, j] * step
        total += group.count_in(lo[g], start) * _others(counts, g, n)
        lo[g] = start
        counts[g] = group.count_in(start, start + step)
    return total


def _unrank_interleaved(groups: Sequence[Group], ranks: np.ndarray, d: int) -> np.ndarray:
    """``unrank`` for groups whose parameters interleave: one parameter at a time, in id order."""
    n = len(ranks)
    rest = np.array(ranks, dtype=np.int64)
    out = np.empty((n, d), dtype=np.int64)
    lo = [np.zeros(n, dtype=np.int64) for _ in groups]
    counts = [np.full(n, len(g.valid()), dtype=np.int64) for g in groups]
    rows = np.arange(n)
    for j, (g, q) in enumerate(_owners(groups, d)):
        group, step = groups[g], groups[g].strides[q]
        bounds = lo[g][:, None] + np.arange(group.radices[q] + 1, dtype=np.int64) * step
        valid = group.valid()
        cum = np.searchsorted(valid, bounds) - np.searchsorted(valid, lo[g])[:, None]
        weighted = cum * _others(counts, g, n)[:, None]
        value = (weighted[:, 1:] <= rest[:, None]).sum(axis=1)
        rest -= weighted[rows, value]
        lo[g] = lo[g] + value * step
        counts[g] = cum[rows, value + 1] - cum[rows, value]
        out[:, j] = value
    return out


def valid_rows(groups: Sequence[Group], strides: np.ndarray) -> np.ndarray:
    """All valid value-index rows in id order: the product of the groups' valid rows.

    Returned as the transpose of a (d, n) array (one contiguous column per parameter).
    """
    counts = [g.valid_cols().shape[1] for g in groups]
    n = math.prod(counts)
    columns = np.empty((len(strides), n), dtype=np.int64)
    inner = n
    for group, count in zip(groups, counts, strict=True):
        inner //= count
        outer = n // (count * inner)
        # each valid group row repeats `inner` times, and that pattern tiles `outer` times
        for member, digits_ in zip(group.members, group.valid_cols(), strict=True):
            columns[member].reshape(outer, count, inner)[...] = digits_[None, :, None]
    if not in_id_order(groups):  # interleaved groups: the product is not in id order
        columns = columns[:, np.argsort(strides @ columns, kind="stable")]
    return columns.T


def valid_flat_ids(groups: Sequence[Group], strides: np.ndarray) -> np.ndarray:
    """All valid flat ids, sorted, built as the outer sum of each group's contributions."""
    ids = np.zeros(1, dtype=np.int64)
    for group in groups:
        contrib = strides[group.members] @ group.valid_cols()
        ids = (ids[:, None] + contrib[None, :]).ravel()
    ids.sort()
    return ids
