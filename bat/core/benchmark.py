"""Benchmarks: a space file with its directory, problem sizes and launch geometry (the registry: catalogue.py).

A registered benchmark is a package holding ``space.json``, declared under the
entry-point group ``bat.benchmarks`` (ours: ``benchmarks/<name>/``); any other
space file can be loaded by path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.core.catalogue import benchmark_names as benchmark_names  # re-exported: where importers find them
from bat.core.catalogue import benchmark_path
from bat.core.commandspec import CommandSpec, parse_command_section
from bat.core.errors import SpaceSpecError, UnknownNameError
from bat.core.expressions import LAUNCH_FUNCTIONS, Expression, parse_expression
from bat.core.space import SearchSpace
from bat.core.spacefile import check_size_value, read_space_json, space_from_dict

if TYPE_CHECKING:
    import pandas as pd

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class ProblemSize:
    """A named problem size: ``published``, ``small``, ``emulation`` or ``custom``, with its values."""

    name: str
    values: Mapping[str, int | float]

    def describe(self) -> str:
        return f"{self.name} size ({', '.join(f'{k}={v}' for k, v in self.values.items())})"

    @cached_property
    def extents(self) -> dict[str, int]:
        """The values as a kernel runner takes them (``extents``)."""
        return extents(self.values)


def extents(values: Mapping[str, int | float]) -> dict[str, int]:
    """Problem-size values as a kernel runner takes them, counts of elements: each a whole number, else a
    SpaceSpecError."""
    out: dict[str, int] = {}
    for name, value in values.items():
        if value != int(value):
            raise SpaceSpecError(f"problem size {name} = {value!r}: a kernel's sizes are whole numbers")
        out[name] = int(value)
    return out


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its search space plus the sections of its space file."""

    name: str
    directory: Path
    path: Path
    space: SearchSpace
    problem_size: dict[str, int | float]
    small_problem_size: dict[str, int | float]
    constants: dict[str, int | float]
    launch: dict[str, Any]
    kernel: dict[str, Any]
    command: dict[str, Any]
    published: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)
    command_spec: CommandSpec | None = field(repr=False, default=None)
    _launch: dict[str, tuple[Expression, ...]] = field(repr=False, default_factory=dict)

    def geometry(self, config: dict[str, Any], size: dict[str, Any] | None = None
                 ) -> tuple[Dim3, Dim3]:
        """(grid, block) of a configuration at the published or the given problem size."""
        if not self._launch:
            raise SpaceSpecError(f"{self.path}: launch: this benchmark defines no launch geometry")
        env = {**self.problem_size, **(size or {}), **self.constants, **config}
        grid, block = (self._dims(key, env) for key in ("grid", "block"))
        return grid, block

    def threads(self, values: pd.DataFrame, size: Mapping[str, int | float] | None = None) -> np.ndarray:
        """Threads each configuration launches (grid x block), vectorised over a frame of parameter values."""
        if not self._launch:
            raise SpaceSpecError(f"{self.path}: launch: this benchmark defines no launch geometry")
        env = {**self.problem_size, **(size or {}), **self.constants,
               **{c: values[c].to_numpy() for c in values.columns}}
        total = np.ones(len(values))
        for key in ("grid", "block"):
            for expr in self._launch[key]:
                total = total * np.broadcast_to(np.asarray(expr.evaluate(env), dtype=float), total.shape)
        return total

    def size(self, which: str | Mapping[str, int | float] | ProblemSize | None = None) -> ProblemSize:
        """Resolve a size given at the edge: None/"published", "small", "emulation", a mapping, or as is.

        A named size other than the published one overrides the published values it names; a
        mapping is a ``custom`` size over the published one.
        """
        if isinstance(which, ProblemSize):
            return which
        if which is None or which == "published":
            return ProblemSize("published", dict(self.problem_size))
        if isinstance(which, str):
            sections = {"small": self.small_problem_size, "emulation": self.raw.get("emulation_problem_size", {})}
            if which not in sections:
                raise SpaceSpecError(f"unknown problem size {which!r}; valid: published, {', '.join(sections)}")
            if not sections[which]:
                raise SpaceSpecError(f"{self.path}: {which}_problem_size: this benchmark has none")
            return ProblemSize(which, {**self.problem_size, **sections[which]})
        unknown = sorted(set(which) - set(self.problem_size))
        if unknown:
            raise SpaceSpecError(f"{self.path}: problem size keys {unknown} unknown; "
                                 f"valid: {sorted(self.problem_size)}")
        custom = {}
        for key, value in which.items():
            check_size_value(value, f"problem size {key}")
            custom[key] = _like_published(key, value, self.problem_size[key])
        return ProblemSize("custom", {**self.problem_size, **custom})

    def _dims(self, key: str, env: dict[str, Any]) -> Dim3:
        dims = []
        for k, expr in enumerate(self._launch[key]):
            value = np.asarray(expr.evaluate(env)).item()
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or value < 1:
                raise SpaceSpecError(f"{self.path}: launch.{key}[{k}]: {expr.text!r} gives "
                                     f"{value!r}, not a positive integer")
            dims.append(value)
        padded = [*dims, 1, 1, 1]
        return padded[0], padded[1], padded[2]


#: a problem size given in place of an integer one (a count of elements: kernels index them with 32-bit ints)
MAX_INTEGER_SIZE = 2**31 - 1


def _like_published(key: str, value: int | float, published: Any) -> int | float:
    """A custom size of the kind its published value has: an integer one stays a whole number within
    ``MAX_INTEGER_SIZE`` (``1e30`` points reached NumPy's shape as a float: an internal error)."""
    if isinstance(published, bool) or not isinstance(published, int):
        return value
    if isinstance(value, float) and not value.is_integer():
        raise SpaceSpecError(f"problem size {key}: {value} is not a whole number (the published size is {published})")
    if value > MAX_INTEGER_SIZE:
        raise SpaceSpecError(f"problem size {key}: {value:g} is over the limit of {MAX_INTEGER_SIZE} (2^31 - 1)")
    return int(value)


def _parse_launch(raw: dict[str, Any], space: SearchSpace, source: str
                  ) -> dict[str, tuple[Expression, ...]]:
    names = {*space.names, *space.problem_size, *space.constants}
    return {key: tuple(parse_expression(str(dim), names, where=f"{source}: launch.{key}[{k}]",
                                        functions=LAUNCH_FUNCTIONS)
                       for k, dim in enumerate(raw["launch"][key]))
            for key in ("grid", "block")} if "launch" in raw else {}


def load_benchmark(name_or_path: str | Path) -> Benchmark:
    """A registered benchmark by name, or any space file (ours or T1, or a directory holding space.json)
    by path. A path is used as written, even when a registered benchmark has the same name."""
    candidate = Path(name_or_path)
    if candidate.is_dir():
        candidate = candidate / "space.json"
    if candidate.exists():
        path = candidate  # a FIFO or a device is refused by the reader, by its kind
    elif str(name_or_path) in benchmark_names():
        path = benchmark_path(str(name_or_path))
    elif candidate.suffix == ".json" or len(candidate.parts) > 1:
        raise SpaceSpecError(f"{candidate}: no such space file")
    else:
        raise UnknownNameError("benchmark", str(name_or_path), benchmark_names())
    return benchmark_from_dict(read_space_json(path), path)


def benchmark_from_dict(raw: dict[str, Any], path: Path) -> Benchmark:
    """A Benchmark from a parsed space file (validated here); ``path`` is where it came from."""
    space = space_from_dict(raw, str(path))
    return Benchmark(
        name=raw["name"], directory=path.parent, path=path, space=space,
        problem_size=dict(raw["problem_size"]),
        small_problem_size=dict(raw.get("small_problem_size", {})),
        constants=dict(raw.get("constants", {})), launch=dict(raw.get("launch", {})),
        kernel=dict(raw.get("kernel", {})), command=dict(raw.get("command", {})),
        published=dict(raw.get("published", {})), raw=raw,
        command_spec=_parse_command(raw, space, str(path)),
        _launch=_parse_launch(raw, space, str(path)),
    )


def is_registered(bench: Benchmark) -> bool:
    """True when ``bench`` is a registered benchmark's own space file (not a copy elsewhere)."""
    return bench.name in benchmark_names() and bench.path.resolve() == benchmark_path(bench.name).resolve()


def _parse_command(raw: dict[str, Any], space: SearchSpace, source: str) -> CommandSpec | None:
    """The command section, checked when the benchmark is loaded (None without one)."""
    if not raw.get("command"):
        return None
    known = {*space.names, *raw["problem_size"], *raw.get("constants", {})}
    values: dict[str, list[Any]] = {p.name: list(p.values) for p in space.parameters}
    for key in ("problem_size", "small_problem_size", "emulation_problem_size", "constants"):
        for name, value in raw.get(key, {}).items():
            values.setdefault(name, []).append(value)
    return parse_command_section(raw["command"], known, source, values)
