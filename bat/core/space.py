"""SearchSpace: the tunable parameters of a kernel, their constraints, and fast set operations.

Configurations are dicts of values at the edges and rows of value indices
(int64, one column per parameter) inside; a row's flat id is its mixed-radix
number with the last parameter fastest. Counting, sampling and ranking go
through constraint groups (:mod:`bat.core.constraint_groups`), so no operation holds
more than a bounded chunk of the full Cartesian product. pandas is imported by
the conversions that return or read DataFrames, not with the module, so
building and counting a space (``bat space``) loads NumPy only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.core import constraint_groups as cg
from bat.core.errors import SpaceSpecError
from bat.core.expressions import Expression, parse_expression
from bat.core.indexed_config import IndexedConfig
from bat.core.limits import MAX_GROUP_SIZE

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

Value = int | float | str
#: unranking works on batches of this many ranks (memory ~ batch x values of one parameter)
_UNRANK_BATCH = 1 << 16
#: valid_ids() refuses to build arrays longer than this
_MAX_VALID_IDS = 1 << 27


@dataclass(frozen=True)
class Parameter:
    """One tunable parameter and its ordered values."""

    name: str
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Constraint:
    """A boolean expression every valid configuration satisfies, with its reason."""

    expr: str
    why: str = ""
    path: str = ""


def _value_array(values: tuple[Value, ...]) -> np.ndarray:
    """int64 or float64 when that holds every value exactly, else Python objects (exact, slower)."""
    if all(isinstance(v, int) and -(2**63) <= v < 2**63 for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, float) or (isinstance(v, int) and abs(v) <= 2**53) for v in values):
        return np.array(values, dtype=np.float64)
    return np.array(values, dtype=object)


class SearchSpace:
    """Parameters, constraints and constants of one benchmark's search space."""

    def __init__(self, name: str, parameters: Iterable[Parameter],
                 constraints: Iterable[Constraint] = (), *,
                 constants: Mapping[str, Value] | None = None,
                 problem_size: Mapping[str, Value] | None = None,
                 source: str = "<memory>") -> None:
        self.name = name
        self.source = source
        self.parameters = tuple(parameters)
        self.constraints = tuple(constraints)
        self.constants = dict(constants or {})
        self.problem_size = dict(problem_size or {})
        self.names = tuple(p.name for p in self.parameters)
        self.whole: SearchSpace | None = None  # the space this one is a slice of (``sliced``), None for a whole one
        if not self.parameters:
            raise SpaceSpecError(f"{source}: parameters: a space needs at least one parameter")
        self.radices = np.array([len(p.values) for p in self.parameters], dtype=np.int64)
        self.cardinality = math.prod(int(r) for r in self.radices)
        if self.cardinality >= 2**63:
            raise SpaceSpecError(f"{source}: parameters: {self.cardinality} configurations do "
                                 "not fit 64-bit ids")
        self.strides = cg.mixed_radix_strides(self.radices)
        self._values = tuple(_value_array(p.values) for p in self.parameters)
        env_names = {*self.names, *self.problem_size, *self.constants}
        self.expressions: tuple[Expression, ...] = tuple(
            parse_expression(c.expr, env_names,
                             where=f"{source}: {c.path or f'constraints[{i}]'}.expr")
            for i, c in enumerate(self.constraints))
        env: dict[str, object] = {**self.problem_size, **self.constants}
        self._groups = cg.build_groups(self.radices, self.names, self._values,
                                       self.expressions, env)
        for group in self._groups:
            if group.constraints and group.size > MAX_GROUP_SIZE:
                members = ", ".join(group.names)
                raise SpaceSpecError(
                    f"{source}: constraints: the constraints joining {members} span {group.size} combinations, "
                    f"over the {MAX_GROUP_SIZE} the constraint engine enumerates; split the constraints or "
                    "narrow the values")

    def __repr__(self) -> str:
        return (f"SearchSpace({self.name!r}, {len(self.names)} parameters, "
                f"{self.cardinality} configurations, {len(self.constraints)} constraints)")

    @functools.cached_property
    def space_hash(self) -> str:
        """sha256 of the canonical JSON of parameters, constraints and constants."""
        used = set().union(*(e.names for e in self.expressions)) if self.expressions else set()
        canonical = {
            "parameters": [[p.name, list(p.values)] for p in self.parameters],
            "constraints": [e.canonical for e in self.expressions],
            "constants": self.constants,
            "problem_size_used": {k: v for k, v in self.problem_size.items() if k in used},
        }
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def sliced(self, fixed: Mapping[str, Value]) -> SearchSpace:
        """This space with the parameters of ``fixed`` held at that one value each (a slice of it)."""
        for name, value in fixed.items():
            if name not in self.names or value not in self.parameters[self.names.index(name)].values:
                raise SpaceSpecError(f"{self.name}: cannot fix {name}={value!r}: not a parameter value of the space")
        parameters = [Parameter(p.name, (fixed[p.name],)) if p.name in fixed else p for p in self.parameters]
        out = SearchSpace(self.name, parameters, self.constraints, constants=self.constants,
                          problem_size=self.problem_size, source=self.source)
        out.whole = self.whole or self
        return out

    # ---- conversions --------------------------------------------------------------------

    @functools.cached_property
    def _lookup(self) -> tuple[pd.Index, ...]:
        import pandas as pd

        return tuple(pd.Index(p.values) for p in self.parameters)

    def _rows(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        if idx.ndim == 1:
            idx = idx.reshape(1, -1)
        if idx.ndim != 2 or idx.shape[1] != len(self.names):
            raise SpaceSpecError(f"{self.name}: expected index rows of {len(self.names)} "
                                 f"columns, got shape {idx.shape}")
        if len(idx) and ((idx < 0).any() or (idx >= self.radices).any()):
            raise SpaceSpecError(f"{self.name}: value index out of range for this space")
        return idx

    def encode(self, configs: pd.DataFrame | Iterable[Mapping[str, Any]]) -> np.ndarray:
        """Value-index rows (n, d) of configurations given as dicts or a DataFrame."""
        import pandas as pd

        frame = configs if isinstance(configs, pd.DataFrame) else pd.DataFrame(list(configs))
        out = np.empty((len(frame), len(self.names)), dtype=np.int64)
        for j, name in enumerate(self.names):
            if name not in frame.columns:
                raise SpaceSpecError(f"{self.name}: configuration lacks parameter {name!r}")
            column = frame[name].to_numpy()
            # pandas takes any array here; its stubs name only an Index
            out[:, j] = self._lookup[j].get_indexer(column) if len(frame) else 0  # type: ignore[arg-type]
            bad = np.flatnonzero(out[:, j] < 0)
            if len(bad):
                value = column.tolist()[bad[0]]
                raise SpaceSpecError(
                    f"{self.name}: value {value!r} of parameter {name!r} is not one of "
                    f"{list(self.parameters[j].values)}")
        return out

    def decode(self, idx: np.ndarray) -> pd.DataFrame:
        """Values of value-index rows, one column per parameter."""
        import pandas as pd

        idx = self._rows(idx)
        return pd.DataFrame({n: self._values[j][idx[:, j]] for j, n in enumerate(self.names)})

    def config(self, idx_row: np.ndarray | Sequence[int]) -> IndexedConfig:
        """One configuration as a dict of plain Python values (an IndexedConfig: it carries its indices)."""
        row = idx_row.tolist() if isinstance(idx_row, np.ndarray) and idx_row.ndim == 1 else idx_row
        if not (isinstance(row, list | tuple) and len(row) == len(self._radix_list)
                and all(isinstance(i, int) and 0 <= i < r for i, r in zip(row, self._radix_list, strict=True))):
            row = self._rows(np.asarray(idx_row))[0].tolist()  # checked (raises SpaceSpecError), first row
        return IndexedConfig.made(zip(self.names, map(tuple.__getitem__, self._plain_values, row), strict=True), self,
                             tuple(row), sum(map(int.__mul__, row, self._stride_list)), None)

    def configs(self, idx: np.ndarray) -> list[IndexedConfig]:
        """The configurations of value-index rows, their flat ids and validity computed for all rows at once."""
        idx = self._rows(idx)
        names = self.names
        values = zip(*(column[idx[:, j]] for j, column in enumerate(self._object_values)), strict=True)
        made = IndexedConfig.made
        return [made(zip(names, row_values, strict=True), self, tuple(row), flat, ok)
                for row_values, row, flat, ok in zip(values, idx.tolist(), (idx @ self.strides).tolist(),
                                                     self.is_valid(idx).tolist(), strict=True)]

    @functools.cached_property
    def _object_values(self) -> tuple[np.ndarray, ...]:
        """Each parameter's values as an object array of the Python values themselves (decoded in bulk)."""
        out = []
        for p in self.parameters:
            column = np.empty(len(p.values), dtype=object)
            column[:] = p.values
            out.append(column)
        return tuple(out)

    @functools.cached_property
    def _plain_values(self) -> tuple[tuple[Value, ...], ...]:
        return tuple(p.values for p in self.parameters)

    @functools.cached_property
    def _radix_list(self) -> tuple[int, ...]:
        return tuple(self.radices.tolist())

    @functools.cached_property
    def _stride_list(self) -> tuple[int, ...]:
        return tuple(self.strides.tolist())

    def index(self, config: Mapping[str, Any]) -> np.ndarray:
        """Value-index row (d,) of one configuration dict."""
        row: np.ndarray = self.encode([config])[0]
        return row

    def to_ids(self, idx: np.ndarray) -> np.ndarray:
        """Flat mixed-radix ids (last parameter fastest) of value-index rows."""
        ids: np.ndarray = self._rows(idx) @ self.strides
        return ids

    def from_ids(self, ids: np.ndarray) -> np.ndarray:
        """Value-index rows of flat ids."""
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        if len(ids) and (ids.min() < 0 or ids.max() >= self.cardinality):
            raise SpaceSpecError(f"{self.name}: flat id out of range 0..{self.cardinality - 1}")
        return cg.digits(ids, self.radices)

    # ---- validity and counting ------------------------------------------------------------

    def is_valid(self, idx: np.ndarray) -> np.ndarray:
        """(n,) bool: does each value-index row satisfy every constraint?"""
        idx = self._rows(idx)
        ok = np.ones(len(idx), dtype=bool)
        for group in self._groups:
            if group.constraints:
                ok &= group.contains(idx[:, group.members] @ group.strides)
        return ok

    def is_valid_one(self, idx: Sequence[int]) -> bool:
        """Whether one value-index row (in range, as Python ints) satisfies every constraint."""
        for group, members, strides in self._scalar_groups:
            if not group.contains_one(sum(idx[m] * s for m, s in zip(members, strides, strict=True))):
                return False
        return True

    @functools.cached_property
    def _scalar_groups(self) -> tuple[tuple[Any, tuple[int, ...], tuple[int, ...]], ...]:
        return tuple((g, tuple(int(m) for m in g.members), tuple(int(s) for s in g.strides))
                     for g in self._groups if g.constraints)

    def count_valid(self, progress: Callable[[float], None] | None = None) -> int:
        """Number of valid configurations (product of the groups' counts)."""
        total, done = sum(g.size for g in self._groups), 0

        def step(n: int) -> None:
            nonlocal done
            done += n
            if progress is not None:
                progress(done / total)

        return math.prod(len(g.valid(step)) for g in self._groups)

    def valid_mask(self) -> np.ndarray:
        """Bool array of the full product (one axis per parameter): does the point satisfy every constraint?

        Built group by group, each group's validity broadcast over the axes it
        does not name: one byte per configuration, no per-row evaluation.
        """
        shape = tuple(int(r) for r in self.radices)
        out = np.ones(shape, dtype=bool)
        for group in self._groups:
            if not group.constraints:
                continue
            local = np.zeros(group.size, dtype=bool)
            local[group.valid()] = True
            axes = [1] * len(shape)
            for j in group.members:
                axes[j] = shape[j]
            out &= local.reshape(axes)
        return out

    def valid_ids(self) -> np.ndarray:
        """All valid flat ids, sorted (refused for spaces with more than 2^27 valid ones)."""
        count = self.count_valid()
        if count > _MAX_VALID_IDS:
            raise SpaceSpecError(f"{self.name}: {count} valid configurations are too many to "
                                 "list at once; use iter_valid()")
        return cg.valid_flat_ids(self._groups, self.strides)

    def iter_valid(self, chunk: int = 1 << 20) -> Iterator[np.ndarray]:
        """Valid value-index rows in id order, in chunks of at most ``chunk`` rows."""
        count = self.count_valid()
        if 0 < count <= chunk:
            yield cg.valid_rows(self._groups, self.strides)
            return
        for start in range(0, count, chunk):
            yield self.unrank_valid(np.arange(start, min(start + chunk, count)))

    # ---- ranks and sampling ---------------------------------------------------------------

    def rank_valid(self, idx: np.ndarray) -> np.ndarray:
        """Position of each valid row in id order among the valid configurations."""
        idx = self._rows(idx)
        if not self.is_valid(idx).all():
            raise SpaceSpecError(f"{self.name}: rank_valid of a configuration that violates "
                                 "the constraints")
        return cg.rank(self._groups, idx)

    def unrank_valid(self, ranks: ArrayLike) -> np.ndarray:
        """Value-index rows of the valid configurations with these ranks (id order)."""
        ranks = np.atleast_1d(np.asarray(ranks, dtype=np.int64))
        count = self.count_valid()
        if len(ranks) and (ranks.min() < 0 or ranks.max() >= count):
            raise SpaceSpecError(f"{self.name}: rank out of range 0..{count - 1}")
        parts = [cg.unrank(self._groups, ranks[s:s + _UNRANK_BATCH], len(self.names))
                 for s in range(0, len(ranks), _UNRANK_BATCH)]
        return np.concatenate(parts) if parts else np.empty((0, len(self.names)), np.int64)

    def sample_valid(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` distinct valid rows drawn uniformly without replacement."""
        count = self.count_valid()
        if not 0 <= n <= count:
            raise SpaceSpecError(f"{self.name}: cannot sample {n} of {count} valid "
                                 "configurations")
        return self.unrank_valid(rng.choice(count, size=n, replace=False))

    def neighbours(self, idx_row: np.ndarray, kind: str = "adjacent",
                   valid_only: bool = True) -> np.ndarray:
        """Rows that differ from ``idx_row`` in one parameter.

        ``adjacent``: that parameter's value index moves by one (no wrap-around);
        ``hamming``: it takes any other value.
        """
        row = self._rows(idx_row)[0]
        if kind == "adjacent":
            cols = np.repeat(np.arange(len(row)), 2)
            new = row[cols] + np.tile([-1, 1], len(row))
            keep = (new >= 0) & (new < self.radices[cols])
            cols, new = cols[keep], new[keep]
        elif kind == "hamming":
            cols = np.repeat(np.arange(len(row)), self.radices)
            new = np.concatenate([np.arange(r) for r in self.radices])
            keep = new != row[cols]
            cols, new = cols[keep], new[keep]
        else:
            raise SpaceSpecError(f"{self.name}: unknown neighbourhood {kind!r}; "
                                 "valid: adjacent, hamming")
        out = np.tile(row, (len(cols), 1))
        out[np.arange(len(cols)), cols] = new
        return out[self.is_valid(out)] if valid_only else out
