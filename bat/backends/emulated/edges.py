"""A problem size per configuration that reaches every edge: two blocks, the last one partial.

A kernel tiles a grid dimension when the space file's ``launch.grid`` sets its block count
from a problem-size variable: ``ceil_div(size, tile)`` (the kernel guards a partial last
tile) or ``size // tile`` (it takes whole tiles only). For one configuration, ``edge_size``
keeps the base (emulation) size where it already gives at least two blocks with a partial
last tile in every tiled dimension, and otherwise grows the variable to k * tile + r, where
r is the base size's remainder (half a tile when that is 0) and k >= 1: two blocks, the last
one r elements wide. ``size // tile`` dimensions get two whole tiles; a tile of one element
is never partial; a dimension whose block count the configuration sets (``n_y_blocks``), or
whose grid expression is of another form, keeps its size. Each of these is said in the
result's ``notes``, so ``bat verify`` can say why a configuration's line lacks an edge.
Conditional grids (``a if cond else b``) are resolved for the configuration first.
``EdgeSessions`` verifies each configuration at its own size: one emulated session (inputs,
reference) per distinct size.

Hand-written: this reads the project's own launch expressions (bat.core.expressions).
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bat.backends.emulated.session import EmulatedSession, Verification
from bat.core.benchmark import Benchmark, ProblemSize
from bat.core.expressions import LAUNCH_FUNCTIONS, parse_expression

AXES = ("x", "y", "z")
#: How far past its first guess a size shared by two dimensions is searched for one that suits both.
SEARCH = 100_000


@dataclass(frozen=True)
class EdgeSize:
    """The problem size chosen for one configuration, its blocks per dimension, and what it lacks."""

    size: ProblemSize
    blocks: tuple[int, int, int]
    tiled: tuple[str, ...]  # axes whose block count a problem-size variable sets
    notes: tuple[str, ...]  # why an edge is missing ("" none): one clause per dimension

    @property
    def two_blocks(self) -> bool:
        """At least two blocks in every tiled dimension."""
        return all(self.blocks[AXES.index(a)] >= 2 for a in self.tiled)

    def describe(self) -> str:
        values = ", ".join(f"{k}={v}" for k, v in self.size.values.items())
        grid = " x ".join(str(b) for b in self.blocks)
        return f"at {values} ({grid} blocks)" + (f"; no edge: {'; '.join(self.notes)}" if self.notes else "")


@functools.cache
def _expression(text: str, names: frozenset[str]):
    return parse_expression(text, names, where="launch.grid", functions=LAUNCH_FUNCTIONS)


def _value(node: ast.AST, env: Mapping[str, Any]) -> int:
    return int(_expression(ast.unparse(node), frozenset(env)).evaluate(env))


def _resolve(node: ast.AST, env: Mapping[str, Any]) -> ast.AST:
    """``node`` with its top-level ``a if cond else b`` chosen for this configuration."""
    while isinstance(node, ast.IfExp):
        node = node.body if _value(node.test, env) else node.orelse
    return node


def _tiling(node: ast.AST, sizes: set[str], env: Mapping[str, Any]) -> tuple[str, str | None, int]:
    """(kind, size variable, elements per block): kind ceil, floor, fixed (no size variable) or other."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ceil_div"
            and len(node.args) == 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in sizes):
        return "ceil", node.args[0].id, _value(node.args[1], env)
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and isinstance(node.left, ast.Name)
            and node.left.id in sizes):
        return "floor", node.left.id, _value(node.right, env)
    named = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return ("other" if named & sizes else "fixed"), None, 0


def _suits(value: int, kind: str, tile: int) -> bool:
    if kind == "floor":
        return value % tile == 0 and value // tile >= 2
    return math.ceil(value / tile) >= 2 and (tile == 1 or value % tile != 0)


def _first_guess(base: int, kind: str, tile: int) -> int:
    if kind == "floor":
        return max(2, base // tile) * tile
    if tile == 1:
        return max(base, 2)
    rest = base % tile or max(1, tile // 2)
    return max(1, base // tile) * tile + rest


def edge_size(bench: Benchmark, config: Mapping[str, Any], base: ProblemSize) -> EdgeSize:
    """The problem size for ``config`` (see the module docstring), from ``base``'s values."""
    sizes = {k for k, v in base.values.items() if isinstance(v, int)}
    env = {**bench.problem_size, **base.values, **bench.constants, **config}
    values = dict(base.values)
    wants: dict[str, list[tuple[str, int, str]]] = {}
    notes: list[str] = []
    tiled: list[str] = []
    fixed: dict[str, str] = {}
    for axis, text in zip(AXES, bench.launch.get("grid", []), strict=False):
        tree = ast.parse(str(text), mode="eval").body
        mentions = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & sizes
        resolved = _resolve(tree, env)
        kind, variable, tile = _tiling(resolved, sizes, env)
        if not mentions:
            continue  # the problem size never sets this dimension (a z of 1)
        tiled.append(axis)
        if kind == "fixed":
            fixed[axis] = ast.unparse(resolved)  # the configuration sets the block count
            continue
        if kind == "other" or variable is None:  # a ceil or floor tiling names its size variable
            notes.append(f"grid {axis} {text!r} is neither ceil_div(size, tile) nor size // tile: size kept")
            continue
        wants.setdefault(variable, []).append((kind, tile, axis))
        if kind == "floor":
            notes.append(f"{axis}: the kernel takes whole tiles only (grid {text}): no partial tile")
        elif tile == 1:
            notes.append(f"{axis}: one element per block, so no tile is partial")
    for variable, needs in wants.items():
        value = _first_guess(int(values[variable]), needs[0][0], needs[0][1])
        for candidate in range(value, value + SEARCH):
            if all(_suits(candidate, kind, tile) for kind, tile, _ in needs):
                values[variable] = candidate
                break
        else:
            axes = " and ".join(axis for _, _, axis in needs)
            notes.append(f"{axes}: no {variable} near {value} gives two blocks with a partial tile in each")
    size = ProblemSize(base.name if values == dict(base.values) else f"{base.name} edge", values)
    grid, _ = bench.geometry(dict(config), dict(values))
    for axis, text in fixed.items():
        if grid[AXES.index(axis)] < 2:
            notes.append(f"{axis}: one block ({text} = {grid[AXES.index(axis)]}), set by the configuration, "
                         "not the problem size")
    return EdgeSize(size, grid, tuple(tiled), tuple(notes))


class EdgeSessions:
    """One benchmark emulated configuration by configuration, each at its edge size (``edge_size``)."""

    def __init__(self, bench: Benchmark, base: ProblemSize, *, grow: bool = True, **options: Any) -> None:
        self.bench, self.base, self.grow, self.options = bench, base, grow, options
        self._sessions: dict[tuple, EmulatedSession] = {}
        self.first = self.session(base)

    def session(self, size: ProblemSize) -> EmulatedSession:
        """The emulated session at ``size`` (made on first use, then kept)."""
        key = tuple(sorted(size.values.items()))
        if key not in self._sessions:
            self._sessions[key] = EmulatedSession(self.bench, size, **self.options)
        return self._sessions[key]

    def size_for(self, config: Mapping[str, Any]) -> EdgeSize:
        """``config``'s edge size; the base size itself when this was made with ``grow`` False."""
        if self.grow:
            return edge_size(self.bench, config, self.base)
        grid, _ = self.bench.geometry(dict(config), dict(self.base.values))
        return EdgeSize(self.base, grid, (), ())

    def gpu_accepts(self, config: Mapping[str, Any]) -> bool:
        """Would a GPU run ``config`` at its edge size (NVRTC for sm_90 and the launch limits)?"""
        return self.session(self.size_for(config).size).gpu_accepts(config)

    def verify(self, config: Mapping[str, Any], **options: Any) -> tuple[EdgeSize, Verification]:
        """(the edge size, the Verification of ``config`` at it); options as EmulatedSession.verify."""
        edge = self.size_for(config)
        return edge, self.session(edge.size).verify(config, **options)

    def check_source(self, text: str, name: str) -> bool:
        """As EmulatedSession.check_source: True for a HIP source the layer serves."""
        return self.first.check_source(text, name)

    def describe(self) -> str:
        if not self.grow:
            return self.first.describe()
        return (f"{self.first.describe()}; each configuration at a problem size grown from this one to two "
                "blocks with a partial last tile in every dimension the kernel tiles (said on its line)")

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()
