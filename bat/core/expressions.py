"""Whitelisted arithmetic expressions (constraints, launch geometry), evaluated over NumPy arrays.

Hand-written because no maintained library does this job safely: the text is
parsed with :mod:`ast`, every node is checked against a small whitelist, and
the tree is turned into nested Python closures that call the operations of
:mod:`bat.core.arithmetic`. The text is never given to ``eval``, ``exec`` or
``compile``. Each name evaluates to a scalar or an array, so one call checks
millions of configurations at once, and every element gets the value Python
would compute for it (exact integers of any size up to 4096 bits, no silent
int64 overflow), or the evaluation raises SpaceSpecError naming the file,
the expression and the operation. Division, floor division or modulo by zero
(and 0 to a negative power) yield 0; guard such terms with ``and``/``or``.
Parsing is bounded: every expression BAT reads (constraints, launch geometry, T1
values and conditions) goes through :func:`parse_syntax`, which refuses a tree
deeper than ``MAX_DEPTH`` levels (a chain of 200 operations, 200 brackets) and
turns the parser's own depth failures (RecursionError, MemoryError, "too many
nested parentheses") into the same one-line SpaceSpecError, before any
recursive step (the compiler, ``ast.unparse``) sees the tree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bat.core import arithmetic as ar
from bat.core.errors import SpaceSpecError

Evaluator = Callable[[Mapping[str, Any]], Any]

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: ar.add,
    ast.Sub: ar.subtract,
    ast.Mult: ar.multiply,
    ast.Div: ar.true_divide,
    ast.FloorDiv: ar.floor_divide,
    ast.Mod: ar.mod,
    ast.Pow: ar.power,
}
_COMPARE: dict[type[ast.cmpop], str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: ar.negative,
    ast.UAdd: ar.positive,
    ast.Not: ar.logical_not,
}
#: functions allowed in constraints: name -> (implementation, min args, max args)
CONSTRAINT_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "min": (ar.minimum, 2, None),
    "max": (ar.maximum, 2, None),
    "abs": (ar.absolute, 1, 1),
}
#: launch expressions may also round a division up
LAUNCH_FUNCTIONS = {**CONSTRAINT_FUNCTIONS, "ceil_div": (ar.ceil_divide, 2, 2)}
FUNCTION_NAMES = frozenset(LAUNCH_FUNCTIONS)
#: levels of one expression's syntax tree (every recursive step after parsing stays far below Python's limit)
MAX_DEPTH = 200


def parse_syntax(text: str, where: str) -> ast.expr:
    """The syntax tree of the expression ``text``, at most ``MAX_DEPTH`` levels deep.

    Raises SpaceSpecError prefixed by ``where`` for a syntax error or a tree too deep, whether the
    parser itself gives up or the tree it builds is past the limit (measured without recursion).
    """
    try:
        body: ast.expr | None = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        if "too many nested" not in str(exc.msg):
            raise SpaceSpecError(f"{where}: syntax error at column {exc.offset} `{exc.text or text}` "
                                 f"in expression {_short(text)}") from None
        body = None
    except (RecursionError, MemoryError):  # the parser's own depth guards, not a lack of memory
        body = None
    if body is None or _deeper_than(body, MAX_DEPTH):
        raise SpaceSpecError(f"{where}: expression {_short(text)} is nested too deeply (over {MAX_DEPTH} levels); "
                             "write it as several shorter ones")
    return body


def _deeper_than(tree: ast.AST, limit: int) -> bool:
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


@dataclass(frozen=True)
class Expression:
    """A parsed, checked expression: ``names`` it reads, ``evaluate(env)`` computes it."""

    text: str
    names: frozenset[str]
    _run: Evaluator
    where: str = "<expression>"

    @property
    def canonical(self) -> str:
        """The text re-printed from its syntax tree (spacing and redundant brackets removed)."""
        return ast.unparse(ast.parse(self.text.strip(), mode="eval"))

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Value of the expression with each name taken from ``env`` (scalars or arrays).

        Raises SpaceSpecError (naming ``where`` and the expression) for an
        operation Python would refuse or BAT will not compute exactly.
        """
        try:
            with np.errstate(all="ignore"):  # float overflow to inf is Python's result too
                return self._run(env)
        except ar.ArithmeticRefused as exc:
            raise SpaceSpecError(f"{self.where}: {exc} in expression {self.text!r}") from None
        except RecursionError:
            raise SpaceSpecError(f"{self.where}: expression {_short(self.text)} is nested too deeply "
                                 "to evaluate") from None


class _Compiler:
    """Checks one parsed expression against the whitelist and builds its closures."""

    def __init__(self, text: str, names: frozenset[str], functions: Mapping[str, Any],
                 where: str) -> None:
        self.text, self.names, self.functions, self.where = text, names, functions, where
        self.used: set[str] = set()

    def fail(self, node: ast.AST, problem: str) -> SpaceSpecError:
        token = ast.get_source_segment(self.text, node) or type(node).__name__
        return SpaceSpecError(f"{self.where}: {problem} `{token[:80]}` in expression {_short(self.text)}")

    def build(self, node: ast.AST) -> Evaluator:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"forbidden {_describe(node)}")
        evaluator: Evaluator = method(node)
        return evaluator

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
        combine = ar.logical_and if isinstance(node.op, ast.And) else ar.logical_or
        parts = [self.build(v) for v in node.values]
        return lambda env: combine(*(p(env) for p in parts))

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
            return ar.logical_and(*(ar.compare(op, values[i], values[i + 1]) for i, op in enumerate(ops)))

        return run

    def _IfExp(self, node: ast.IfExp) -> Evaluator:
        test, body, orelse = self.build(node.test), self.build(node.body), self.build(node.orelse)
        return lambda env: ar.choose(ar.truth(test(env)), body(env), orelse(env))

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
    compiler = _Compiler(text.strip(), frozenset(names), functions, where)
    run = compiler.build(parse_syntax(text, where))
    return Expression(text, frozenset(compiler.used), run, where)


def _short(text: str) -> str:
    return repr(text) if len(text) <= 200 else repr(text[:100]) + f"... ({len(text)} characters)"
