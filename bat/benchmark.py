"""Benchmarks: a space file with its directory, and the registry of shipped benchmarks.

A benchmark is named by its directory under the ``benchmarks`` package
(``benchmarks/<name>/space.json``); any other space file can be loaded by path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bat.errors import SpaceSpecError, UnknownNameError
from bat.expressions import LAUNCH_FUNCTIONS, Expression, parse_expression
from bat.space import SearchSpace
from bat.spacefile import read_space_json, space_from_dict

Dim3 = tuple[int, int, int]


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
    _launch: dict[str, tuple[Expression, ...]] = field(repr=False, default_factory=dict)

    def geometry(self, config: dict[str, Any], size: dict[str, Any] | None = None
                 ) -> tuple[Dim3, Dim3]:
        """(grid, block) of a configuration at the published or the given problem size."""
        if not self._launch:
            raise SpaceSpecError(f"{self.path}: launch: this benchmark defines no launch geometry")
        env = {**self.problem_size, **(size or {}), **self.constants, **config}
        grid, block = (self._dims(key, env) for key in ("grid", "block"))
        return grid, block

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
        return (*dims, *[1] * (3 - len(dims)))  # type: ignore[return-value]


def _benchmarks_dir() -> Path:
    # the package's own path list rather than importlib.resources: an editable install
    # made before benchmarks/ had an __init__.py still presents it as a namespace package
    import benchmarks

    dirs = [Path(p) for p in benchmarks.__path__ if Path(p).is_dir()]
    if not dirs:
        raise SpaceSpecError("benchmarks package has no directory on disk")
    return dirs[0]


def benchmark_names() -> list[str]:
    """Names of the shipped benchmarks (directories of the benchmarks package with a space.json)."""
    return sorted(p.parent.name for p in _benchmarks_dir().glob("*/space.json"))


def _parse_launch(raw: dict[str, Any], space: SearchSpace, source: str
                  ) -> dict[str, tuple[Expression, ...]]:
    names = {*space.names, *space.problem_size, *space.constants}
    return {key: tuple(parse_expression(str(dim), names, where=f"{source}: launch.{key}[{k}]",
                                        functions=LAUNCH_FUNCTIONS)
                       for k, dim in enumerate(raw["launch"][key]))
            for key in ("grid", "block")} if "launch" in raw else {}


def load_benchmark(name_or_path: str | Path) -> Benchmark:
    """A shipped benchmark by name, or any space file (or directory holding space.json) by path."""
    candidate = Path(name_or_path)
    if candidate.is_dir():
        candidate = candidate / "space.json"
    if candidate.is_file():
        path = candidate
    elif str(name_or_path) in benchmark_names():
        path = _benchmarks_dir() / str(name_or_path) / "space.json"
    elif candidate.suffix == ".json" or len(candidate.parts) > 1:
        raise SpaceSpecError(f"{candidate}: no such space file")
    else:
        raise UnknownNameError("benchmark", str(name_or_path), benchmark_names())
    raw = read_space_json(path)
    space = space_from_dict(raw, str(path))
    bench = Benchmark(
        name=raw["name"], directory=path.parent, path=path, space=space,
        problem_size=dict(raw["problem_size"]),
        small_problem_size=dict(raw.get("small_problem_size", {})),
        constants=dict(raw.get("constants", {})), launch=dict(raw.get("launch", {})),
        kernel=dict(raw.get("kernel", {})), command=dict(raw.get("command", {})),
        published=dict(raw.get("published", {})), raw=raw,
        _launch=_parse_launch(raw, space, str(path)),
    )
    if bench.command:
        from bat.commandspec import command_spec  # a command section is checked when loaded

        command_spec(bench)
    return bench
