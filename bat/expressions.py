"""Whitelisted arithmetic expressions (constraints, launch geometry), evaluated over NumPy arrays.

Hand-written because no maintained library does this job safely: the text is
parsed with :mod:`ast`, every node is checked against a small whitelist, and
the tree is turned into nested Python closures that call NumPy ufuncs. The text
is never given to ``eval``, ``exec`` or ``compile``. Each name evaluates to a
scalar or a 1-D array, so one call checks millions of configurations at once:
``and``/``or``/``not`` become logical ufuncs, ``a if c else b`` becomes
``np.where`` and ``min``/``max`` become ``np.minimum``/``np.maximum``.
Integer division or modulo by zero yields 0 (NumPy's rule, warnings silenced);
guard such terms with ``and``/``or`` when that matters.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from bat.errors import SpaceSpecError

Evaluator = Callable[[Mapping[str, Any]], Any]


def _ceil_div(a: Any, b: Any) -> Any:
    return -np.floor_divide(np.negative(a), b)


def _power(a: Any, b: Any) -> Any:
    if np.issubdtype(np.result_type(a, b), np.integer) and np.any(np.asarray(b) < 0):
        return np.float_power(a, b)
    return np.power(a, b)


def _as_bool(value: Any) -> Any:
    return np.asarray(value).astype(bool)


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.Pow: _power,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: np.negative,
    ast.UAdd: np.positive,
    ast.Not: lambda v: np.logical_not(_as_bool(v)),
}
#: functions allowed in constraints: name -> (implementation, min args, max args)
CONSTRAINT_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "min": (lambda *a: reduce(np.minimum, a), 2, None),
    "max": (lambda *a: reduce(np.maximum, a), 2, None),
    "abs": (np.abs, 1, 1),
}
#: launch expressions may also round a division up
LAUNCH_FUNCTIONS = {**CONSTRAINT_FUNCTIONS, "ceil_div": (_ceil_div, 2, 2)}
FUNCTION_NAMES = frozenset(LAUNCH_FUNCTIONS)


@dataclass(frozen=True)
class Expression:
    """A parsed, checked expression: ``names`` it reads, ``evaluate(env)`` computes it."""

    text: str
    names: frozenset[str]
    _run: Evaluator

    @property
    def canonical(self) -> str:
        """The text re-printed from its syntax tree (spacing and redundant brackets removed)."""
        return ast.unparse(ast.parse(self.text.strip(), mode="eval"))

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Value of the expression with each name taken from ``env`` (scalars or arrays)."""
        with np.errstate(all="ignore"):
            return self._run(env)


class _Compiler:
    """Checks one parsed expression against the whitelist and builds its closures."""

    def __init__(self, text: str, names: frozenset[str], functions: Mapping[str, Any],
                 where: str) -> None:
        self.text, self.names, self.functions, self.where = text, names, functions, where
        self.used: set[str] = set()

    def fail(self, node: ast.AST, problem: str) -> SpaceSpecError:
        token = ast.get_source_segment(self.text, node) or type(node).__name__
        return SpaceSpecError(f"{self.where}: {problem} `{token}` in expression {self.text!r}")

    def build(self, node: ast.AST) -> Evaluator:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"forbidden {_describe(node)}")
        return method(node)

    def _Constant(self, node: ast.Constant) -> Evaluator:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.fail(node, "forbidden literal")
        return lambda env: value

    def _Name(self, node: ast.Name) -> Evaluator:
        name = node.id
        if name not in self.names:
            raise self.fail(node, "unknown name")
        self.used.add(name)
        return lambda env: env[name]

    def _BinOp(self, node: ast.BinOp) -> Evaluator:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise self.fail(node, "forbidden operator")
        left, right = self.build(node.left), self.build(node.right)
        return lambda env: op(left(env), right(env))

    def _UnaryOp(self, node: ast.UnaryOp) -> Evaluator:
        op = _UNARY.get(type(node.op))
        if op is None:
            raise self.fail(node, "forbidden operator")
        operand = self.build(node.operand)
        return lambda env: op(operand(env))

    def _BoolOp(self, node: ast.BoolOp) -> Evaluator:
        combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        parts = [self.build(v) for v in node.values]
        return lambda env: reduce(combine, (_as_bool(p(env)) for p in parts))

    def _Compare(self, node: ast.Compare) -> Evaluator:
        ops = []
        for op in node.ops:
            func = _COMPARE.get(type(op))
            if func is None:
                raise self.fail(node, "forbidden comparison")
            ops.append(func)
        terms = [self.build(node.left), *(self.build(c) for c in node.comparators)]

        def run(env: Mapping[str, Any]) -> Any:
            values = [t(env) for t in terms]
            checks = (f(values[i], values[i + 1]) for i, f in enumerate(ops))
            return reduce(np.logical_and, checks)

        return run

    def _IfExp(self, node: ast.IfExp) -> Evaluator:
        test, body, orelse = self.build(node.test), self.build(node.body), self.build(node.orelse)
        return lambda env: np.where(_as_bool(test(env)), body(env), orelse(env))

    def _Call(self, node: ast.Call) -> Evaluator:
        if not isinstance(node.func, ast.Name) or node.func.id not in self.functions:
            raise self.fail(node.func, "forbidden call of")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail(node, "only positional arguments are allowed in")
        func, lo, hi = self.functions[node.func.id]
        if len(node.args) < lo or (hi is not None and len(node.args) > hi):
            raise self.fail(node, "wrong number of arguments in")
        args = [self.build(a) for a in node.args]
        return lambda env: func(*(a(env) for a in args))


def _describe(node: ast.AST) -> str:
    kinds = {
        ast.Attribute: "attribute access", ast.Subscript: "subscript", ast.Lambda: "lambda",
        ast.NamedExpr: "assignment", ast.ListComp: "comprehension",
        ast.GeneratorExp: "comprehension", ast.List: "list", ast.Tuple: "tuple",
        ast.Dict: "dict", ast.Set: "set", ast.JoinedStr: "f-string", ast.Starred: "starred",
    }
    return kinds.get(type(node), f"construct {type(node).__name__}")


def parse_expression(text: str, names: Iterable[str], *, where: str,
                     functions: Mapping[str, Any] = CONSTRAINT_FUNCTIONS) -> Expression:
    """Parse and check ``text``; ``where`` ("file: json.path") prefixes every error message.

    Raises :class:`SpaceSpecError` naming the offending token for anything outside
    the whitelist: unknown names, attribute access, subscripts, other calls, ...
    """
    if not isinstance(text, str) or not text.strip():
        raise SpaceSpecError(f"{where}: expected a non-empty expression string, got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise SpaceSpecError(
            f"{where}: syntax error at column {exc.offset} `{exc.text or text}` "
            f"in expression {text!r}") from None
    compiler = _Compiler(text.strip(), frozenset(names), functions, where)
    run = compiler.build(tree.body)
    return Expression(text, frozenset(compiler.used), run)
