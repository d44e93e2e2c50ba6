"""Property: a random expression evaluates, element by element, exactly as Python would, or is refused.

The reference below walks the same syntax tree with Python's own operators on
one configuration at a time, with the one documented difference (division,
floor division and modulo by zero, and 0 to a negative power, give 0). It
also evaluates the branches Python would skip (``and``/``or``/``if``), only
to know whether one of them fails or grows huge: the vectorised evaluator
computes every branch, so a refusal caused by such a branch is allowed. Any
other refusal must match a Python error or an integer near the size limit.
"""

from __future__ import annotations

import ast
import math
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bat.core.arithmetic import MAX_BITS
from bat.core.errors import SpaceSpecError
from bat.core.expressions import parse_expression

NAMES = ("a", "b", "c")
EDGES = [0, 1, -1, 2, 2**31, 2**53, 2**53 + 1, -(2**53) - 1, 2**62, 2**63 - 1, -(2**63), 3**39]


class Refused(Exception):
    """Python raised (OverflowError, a complex result) on the path it takes."""


class Reference:
    """Python's value of an expression for one configuration, and whether it went near the limits."""

    def __init__(self, env: dict[str, int | float]) -> None:
        self.env = env
        self.near_limit = False  # an integer close to MAX_BITS, or a failure in a skipped branch

    def value(self, node: ast.AST) -> object:
        v = self._value(node)
        if isinstance(v, int) and v.bit_length() > MAX_BITS - 64:
            self.near_limit = True
            if v.bit_length() > MAX_BITS:
                raise Refused("too many bits")
        return v

    def skipped(self, node: ast.AST) -> None:
        """A branch Python does not evaluate: only note whether evaluating it fails."""
        try:
            self.value(node)
        except Refused:
            self.near_limit = True

    def _value(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.env[node.id]
        if isinstance(node, ast.UnaryOp):
            v = self.value(node.operand)
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}[type(node.op)](v)
        if isinstance(node, ast.BinOp):
            return self._binary(type(node.op), self.value(node.left), self.value(node.right))
        if isinstance(node, ast.BoolOp):
            result = self.value(node.values[0])
            for i, v in enumerate(node.values[1:], 1):
                if bool(result) == isinstance(node.op, ast.Or):  # Python stops here
                    for rest in node.values[i:]:
                        self.skipped(rest)
                    return result
                result = self.value(v)
            return result
        if isinstance(node, ast.Compare):
            ops = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                   ast.Eq: operator.eq, ast.NotEq: operator.ne}
            left = self.value(node.left)
            for i, (op, term) in enumerate(zip(node.ops, node.comparators, strict=True)):
                right = self.value(term)
                if not ops[type(op)](left, right):
                    for rest in node.comparators[i + 1:]:
                        self.skipped(rest)
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.value(node.test)
            taken, other = (node.body, node.orelse) if test else (node.orelse, node.body)
            self.skipped(other)
            return self.value(taken)
        if isinstance(node, ast.Call):
            args = [self.value(a) for a in node.args]
            return {"min": min, "max": max, "abs": abs}[node.func.id](*args)
        raise AssertionError(f"unexpected node {ast.dump(node)}")

    def _binary(self, op: type, x, y) -> object:
        if op is ast.Pow and isinstance(x, int) and isinstance(y, int) and y > 0 and abs(x) > 1 \
                and y * math.log2(abs(x)) > MAX_BITS + 64:
            raise Refused("too many bits")  # do not compute 9**9**9 to find out
        func = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
                ast.Pow: operator.pow}[op]
        try:
            result = func(x, y)
        except ZeroDivisionError:  # the documented rule: 0 of the type Python's result would have
            both_int = isinstance(x, int) and isinstance(y, int)
            return 0 if both_int and op in (ast.FloorDiv, ast.Mod) else 0.0
        except OverflowError as exc:
            raise Refused(str(exc)) from None
        if isinstance(result, complex):
            raise Refused("complex")
        return result


def same(got: object, want: object) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == want and isinstance(got, float) == isinstance(want, float)


# -- random expressions ----------------------------------------------------------
integers = st.one_of(st.integers(-12, 12), st.sampled_from(EDGES), st.integers(-(2**63), 2**63 - 1))
literals = st.one_of(integers.map(str), st.integers(-(2**80), 2**80).map(str),
                     st.sampled_from(["0.5", "2.5", "1e300", "-3.0", "0.0"]))
leaves = st.one_of(st.sampled_from(NAMES), literals)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==",
                                                  "!=", ">", ">=", "and", "or"]), children)
    return st.one_of(
        binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["-", "+", "not "]), children).map(lambda t: f"({t[0]}{t[1]})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3))
        .map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        children.map(lambda c: f"abs({c})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} < {t[1]} <= {t[2]})"),
    )


expressions = st.recursive(leaves, _extend, max_leaves=10)
columns = st.lists(st.tuples(integers, integers, st.sampled_from([0.5, -2.0, 3.0, 0.0, 1e300])),
                   min_size=1, max_size=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=expressions, rows=columns)
def test_random_expression_is_exact_or_refused(text: str, rows: list[tuple[int, int, float]]) -> None:
    expr = parse_expression(text, NAMES, where="t.json: constraints[0].expr")
    env = {"a": np.array([r[0] for r in rows], dtype=np.int64), "b": np.array([r[1] for r in rows], dtype=np.int64),
           "c": np.array([r[2] for r in rows], dtype=np.float64)}
    tree = ast.parse(text, mode="eval").body
    wanted, allowed_refusal = [], False
    for a, b, c in rows:
        ref = Reference({"a": a, "b": b, "c": c})
        try:
            wanted.append(ref.value(tree))
        except Refused:
            wanted.append(Refused)
        allowed_refusal |= ref.near_limit or wanted[-1] is Refused
    try:
        got = expr.evaluate(env)
    except SpaceSpecError as exc:
        assert allowed_refusal, f"{text!r} refused ({exc}) where Python gives {wanted}"
        assert "t.json: constraints[0].expr" in str(exc)
        return
    assert Refused not in wanted, f"{text!r} gave {got!r} where Python refuses"
    values = np.broadcast_to(np.asarray(got, dtype=object), (len(rows),))
    for row, g, w in zip(rows, values.tolist(), wanted, strict=True):
        assert same(g, w), f"{text!r} with a, b, c = {row}: got {g!r}, Python gives {w!r}"


@pytest.mark.parametrize(("text", "want"), [
    ("10**400 > a", [True, True]),
    ("a**7 > 2**62", [False, True]),
    ("a * a * a * a * a * a * a == 1024**7", [False, True]),
    ("(a > 1) + (a > 2) == 2", [False, True]),
    ("(2 and a) * 5 == a * 5", [True, True]),
])
def test_values_beyond_int64_compare_exactly(text: str, want: list[bool]) -> None:
    got = parse_expression(text, ["a"], where="w").evaluate({"a": np.array([1, 1024])})
    assert np.broadcast_to(got, (2,)).tolist() == want


@pytest.mark.parametrize(("text", "says"), [
    ("2**2**64 > a", "more than 4096 bits"),
    ("9**9**9 > a", "more than 4096 bits"),
    ("2.0 ** 10000 > a", "OverflowError"),
    ("(-8.0) ** 0.5 > a", "fractional power"),
    ("a < 'x'", "cannot order int"),
    ("10**400 * 1.5 > a", "too large"),
])
def test_what_python_refuses_or_bat_will_not_compute_is_an_error(text: str, says: str) -> None:
    with pytest.raises(SpaceSpecError, match=r"t\.json: c") as info:
        parse_expression(text, ["a"], where="t.json: c").evaluate({"a": np.array([1, 2])})
    assert says in str(info.value) and repr(text) in str(info.value)


def test_a_hundred_thousand_terms_is_a_clear_error() -> None:
    text = " + ".join(["a"] * 100_000)
    with pytest.raises(SpaceSpecError, match="nested too deeply"):
        parse_expression(text, ["a"], where="w")
