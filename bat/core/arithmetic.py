"""Python's arithmetic over NumPy arrays, exactly: the operations of the expression evaluator.

The evaluator (bat.core.expressions) applies one operation to millions of
configurations at once. Each function here gives, for every element, what
Python's own operator gives, or raises ArithmeticRefused:

- integers: an operation first bounds its result from its operands' least
  and greatest values; when the bound fits int64, NumPy computes it (it
  cannot overflow); otherwise the elements become Python integers (dtype
  object) and the operation is exact. A result that fits int64 again goes
  back to int64. Integers of more than MAX_BITS bits are refused rather than
  computed (``9**9**9`` would take minutes and gigabytes).
- booleans are 0 and 1 in arithmetic; ``and``/``or`` return one of their
  operands; ``min``, ``max`` and ``if`` keep each element's own type.
- floats follow IEEE-754 as Python's do; where Python raises (a float power
  that overflows, an integer too large for a float) this refuses, and a
  negative number to a fractional power (complex in Python) is refused.
- integers and floats compare exactly, as in Python, beyond 2**53 too.
- ``x / 0``, ``x // 0``, ``x % 0`` and ``0 ** -n`` give 0 (of the type
  Python's result would have) instead of raising, so one configuration
  cannot stop a whole space; guard such terms with ``and``/``or``.
- arithmetic on strings, and ordering a string against a number, are refused.

Hand-written because NumPy wraps around silently on int64 overflow and has
no checked mode, while Python's integers are exact but one at a time; this
module picks, per operation, the fast path when it is provably exact.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np

#: Integers with more bits than this are refused.
MAX_BITS = 4096
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Integers up to this magnitude convert to float64 exactly.
EXACT_IN_FLOAT = 2**53


class ArithmeticRefused(ArithmeticError):
    """An operation whose exact result BAT will not compute or that Python would refuse."""


# -- kinds and conversions ---------------------------------------------------------
def _kind(x: Any) -> str:
    """'b' bool, 'i' int64-sized int, 'f' float, 's' string, 'o' anything else (Python objects)."""
    if isinstance(x, np.ndarray | np.generic):
        k = x.dtype.kind
        return {"b": "b", "i": "i", "u": "i", "f": "f", "U": "s", "S": "s"}.get(k, "o")
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i" if INT64_MIN <= x <= INT64_MAX else "o"
    return "f" if isinstance(x, float) else "s" if isinstance(x, str) else "o"


def _numeric(x: Any) -> Any:
    """Booleans as integers (Python's arithmetic); strings refused."""
    k = _kind(x)
    if k == "b":
        return np.asarray(x, dtype=np.int64) if isinstance(x, np.ndarray | np.generic) else int(x)
    if k == "s":
        raise ArithmeticRefused(f"arithmetic on the string {_show(x)}")
    return x


def _extremes(x: Any) -> tuple[int, int]:
    """Least and greatest value of an int64-kind operand, as Python integers."""
    a = np.asarray(x)
    if a.size == 0:
        return 0, 0
    return int(a.min()), int(a.max())


def _fits(lo: int, hi: int) -> bool:
    return lo >= INT64_MIN and hi <= INT64_MAX


def _objects(x: Any) -> Any:
    """Elements as Python objects (an object array, or a Python scalar)."""
    if isinstance(x, np.ndarray):
        return x.astype(object)
    return x.item() if isinstance(x, np.generic) else x


def _shrink(r: Any) -> Any:
    """An object array of Python ints or floats back to int64 / float64 when nothing is lost."""
    if not isinstance(r, np.ndarray) or r.dtype != object or r.size == 0:
        return r
    types = {type(v) for v in r.flat}
    if types == {int} and min(r.flat) >= INT64_MIN and max(r.flat) <= INT64_MAX:
        return r.astype(np.int64)
    if types == {float}:
        return r.astype(np.float64)
    if types == {bool}:
        return r.astype(bool)
    return r


def _elementwise(func: Callable[..., Any], *args: Any) -> Any:
    """``func`` on Python objects, element by element (broadcast), the result shrunk if it can be."""
    if all(np.ndim(a) == 0 for a in args):
        return func(*(a.item() if isinstance(a, np.ndarray | np.generic) else a for a in args))
    return _shrink(np.frompyfunc(func, len(args), 1)(*(_objects(a) for a in args)))


def _show(x: Any) -> str:
    text = repr(x.tolist() if isinstance(x, np.ndarray) else x)
    return text if len(text) <= 60 else text[:57] + "..."


# -- Python scalars ------------------------------------------------------------------
def _py_number(v: Any) -> int | float:
    if isinstance(v, int | float):  # bool is an int
        return v
    raise ArithmeticRefused(f"arithmetic on {type(v).__name__} {v!r}")


def _py_checked(v: Any) -> Any:
    if isinstance(v, int) and v.bit_length() > MAX_BITS:
        raise ArithmeticRefused(f"an integer of more than {MAX_BITS} bits")
    return v


def _py_binary(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def run(a: Any, b: Any) -> Any:
        try:
            return _py_checked(op(_py_number(a), _py_number(b)))
        except OverflowError as exc:
            raise ArithmeticRefused(f"{exc} (Python raises OverflowError)") from None
    return run


def _py_mul(a: int | float, b: int | float) -> int | float:
    if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_BITS + 1:
        raise ArithmeticRefused(f"a product of more than {MAX_BITS} bits")
    return a * b


def _py_truediv(a: int | float, b: int | float) -> float:
    return 0.0 if b == 0 else a / b


def _py_floordiv(a: int | float, b: int | float) -> int | float:
    return (0 if isinstance(a, int) and isinstance(b, int) else 0.0) if b == 0 else a // b


def _py_mod(a: int | float, b: int | float) -> int | float:
    return (0 if isinstance(a, int) and isinstance(b, int) else 0.0) if b == 0 else a % b


def _py_pow(a: int | float, b: int | float) -> int | float:
    if a == 0 and b < 0:
        return 0.0
    whole = isinstance(a, int) and isinstance(b, int) and b >= 0
    if whole and abs(a) > 1 and b * math.log2(abs(a)) > MAX_BITS:
        raise ArithmeticRefused(f"({a})**({b}) has more than {MAX_BITS} bits")
    result = a**b
    if isinstance(result, complex):
        raise ArithmeticRefused(f"({a})**({b}): a negative number to a fractional power (complex in Python)")
    return result


PY_ADD, PY_SUB = _py_binary(operator.add), _py_binary(operator.sub)
PY_MUL, PY_TRUEDIV = _py_binary(_py_mul), _py_binary(_py_truediv)
PY_FLOORDIV, PY_MOD, PY_POW = _py_binary(_py_floordiv), _py_binary(_py_mod), _py_binary(_py_pow)


# -- arithmetic ----------------------------------------------------------------------
def _integer_op(a: Any, b: Any, bound: Callable[[tuple[int, int], tuple[int, int]], tuple[int, int]],
                fast: Callable[[Any, Any], Any], exact: Callable[[Any, Any], Any]) -> Any:
    """``fast`` (NumPy) when both operands are int64 and the result provably fits, else ``exact``."""
    a, b = _numeric(a), _numeric(b)
    ka, kb = _kind(a), _kind(b)
    if ka == kb == "i":
        if _fits(*bound(_extremes(a), _extremes(b))):
            return fast(a, b)
        return _elementwise(exact, a, b)
    if "o" in (ka, kb):
        return _elementwise(exact, a, b)
    return None  # a float is involved: the caller decides


def add(a: Any, b: Any) -> Any:
    r = _integer_op(a, b, lambda x, y: (x[0] + y[0], x[1] + y[1]), np.add, PY_ADD)
    return np.add(_numeric(a), _numeric(b)) if r is None else r


def subtract(a: Any, b: Any) -> Any:
    r = _integer_op(a, b, lambda x, y: (x[0] - y[1], x[1] - y[0]), np.subtract, PY_SUB)
    return np.subtract(_numeric(a), _numeric(b)) if r is None else r


def _product_bound(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    products = [p * q for p in x for q in y]
    return min(products), max(products)


def multiply(a: Any, b: Any) -> Any:
    r = _integer_op(a, b, _product_bound, np.multiply, PY_MUL)
    return np.multiply(_numeric(a), _numeric(b)) if r is None else r


def _magnitude_bound(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    m = max(abs(x[0]), abs(x[1]))
    return -m, m


def _zero_is_zero(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``op`` with 0 wherever the divisor is 0 (NumPy would give inf, nan or a warning)."""
    def run(a: Any, b: Any) -> Any:
        zero = np.asarray(b) == 0
        if not zero.any():
            return op(a, b)
        result = op(a, np.where(zero, 1, b))
        return np.where(zero, np.zeros((), dtype=np.result_type(result)), result)
    return run


_floor_divide, _mod = _zero_is_zero(np.floor_divide), _zero_is_zero(np.mod)


def floor_divide(a: Any, b: Any) -> Any:
    r = _integer_op(a, b, _magnitude_bound, _floor_divide, PY_FLOORDIV)
    return _floor_divide(_numeric(a), _numeric(b)) if r is None else r


def mod(a: Any, b: Any) -> Any:
    r = _integer_op(a, b, lambda x, y: (0, 0), _mod, PY_MOD)
    return _mod(_numeric(a), _numeric(b)) if r is None else r


def _float_true_divide(a: Any, b: Any) -> Any:
    return _zero_is_zero(np.true_divide)(np.asarray(a, dtype=np.float64), b)


def true_divide(a: Any, b: Any) -> Any:
    a, b = _numeric(a), _numeric(b)
    ka, kb = _kind(a), _kind(b)
    if "o" in (ka, kb) or (ka == kb == "i" and not (_small(a) and _small(b))):
        return _elementwise(PY_TRUEDIV, a, b)  # Python rounds int / int correctly at any size
    return _float_true_divide(a, b)


def _small(x: Any) -> bool:
    """An int64 operand that float64 holds exactly."""
    lo, hi = _extremes(x)
    return lo >= -EXACT_IN_FLOAT and hi <= EXACT_IN_FLOAT


def power(a: Any, b: Any) -> Any:
    a, b = _numeric(a), _numeric(b)
    ka, kb = _kind(a), _kind(b)
    if ka == kb == "i":
        (alo, ahi), (blo, bhi) = _extremes(a), _extremes(b)
        bits = max(abs(alo), abs(ahi)).bit_length()
        if blo >= 0 and (bits <= 1 or bits * bhi <= 63):
            return np.power(a, b)
        return _elementwise(PY_POW, a, b)
    if "o" in (ka, kb):
        return _elementwise(PY_POW, a, b)
    base, exponent = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    zero_negative = (base == 0) & (exponent < 0)
    with np.errstate(all="ignore"):
        result = np.power(base, np.where(zero_negative, 1.0, exponent))
    bad = ~np.isfinite(result) & np.isfinite(base) & np.isfinite(exponent)
    if bad.any():
        i = np.unravel_index(np.flatnonzero(bad)[0], bad.shape) if bad.ndim else ()
        x, y = np.broadcast_to(base, bad.shape)[i], np.broadcast_to(exponent, bad.shape)[i]
        problem = ("a negative number to a fractional power (complex in Python)" if x < 0
                   else "a float too large (Python raises OverflowError)")
        raise ArithmeticRefused(f"({float(x)!r})**({float(y)!r}): {problem}")
    return np.where(zero_negative, 0.0, result)


def negative(a: Any) -> Any:
    return subtract(0, a)


def positive(a: Any) -> Any:
    return _numeric(a)


def absolute(a: Any) -> Any:
    a = _numeric(a)
    k = _kind(a)
    if k == "i":
        lo, _ = _extremes(a)
        return np.abs(a) if lo > INT64_MIN else _elementwise(abs, a)
    if k == "o":
        return _elementwise(lambda v: abs(_py_number(v)), a)
    return np.abs(a)


# -- comparisons, truth and choice ---------------------------------------------------
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge,
}


def compare(op: str, a: Any, b: Any) -> Any:
    """``a op b`` element by element, exact between integers and floats, as Python compares."""
    func = COMPARISONS[op]
    ka, kb = _kind(a), _kind(b)
    if {ka, kb} <= {"b", "i", "f"}:
        if "f" not in (ka, kb) or all(k != "i" or _small(x) for k, x in ((ka, a), (kb, b))):
            return func(a, b)  # NumPy compares these exactly (ints within 2**53 of a float)
    elif ka == kb == "s":
        return func(a, b)

    def python(x: Any, y: Any) -> bool:
        try:
            return bool(func(x, y))
        except TypeError:
            raise ArithmeticRefused(f"cannot order {type(x).__name__} {x!r} against "
                                    f"{type(y).__name__} {y!r}") from None

    return _elementwise(python, a, b)


def truth(a: Any) -> Any:
    """Python's truth value of every element, as booleans."""
    k = _kind(a)
    if k == "s":
        return np.asarray(a) != ""
    if k == "o":
        return np.asarray(_elementwise(bool, a), dtype=bool)
    return np.asarray(a, dtype=bool)  # no copy for booleans


def choose(condition: Any, yes: Any, no: Any) -> Any:
    """``yes if condition else no`` per element, each element keeping its own type."""
    if _kind(yes) == _kind(no) and "o" not in (_kind(yes), _kind(no)):
        return np.where(condition, yes, no)
    return _shrink(np.where(condition, _objects(np.asarray(yes)), _objects(np.asarray(no))))


def logical_and(*values: Any) -> Any:
    """``a and b and ...``: the first falsy operand, else the last (as Python)."""
    if all(_kind(v) == "b" for v in values):
        return reduce(np.logical_and, values)
    return reduce(lambda r, v: choose(truth(r), v, r), values)


def logical_or(*values: Any) -> Any:
    """``a or b or ...``: the first truthy operand, else the last (as Python)."""
    if all(_kind(v) == "b" for v in values):
        return reduce(np.logical_or, values)
    return reduce(lambda r, v: choose(truth(r), r, v), values)


def logical_not(a: Any) -> Any:
    return np.logical_not(truth(a))


def minimum(*values: Any) -> Any:
    """Python's ``min``: the first of the least values (a later one replaces it only if smaller)."""
    return reduce(lambda m, v: choose(truth(compare("<", v, m)), v, m), values)


def maximum(*values: Any) -> Any:
    """Python's ``max``: the first of the greatest values."""
    return reduce(lambda m, v: choose(truth(compare(">", v, m)), v, m), values)


def ceil_divide(a: Any, b: Any) -> Any:
    """``-(-a // b)``: a division rounded up."""
    return negative(floor_divide(negative(a), b))
