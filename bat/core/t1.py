"""The community's T1 search-space format (JSON) to space-file dicts and back.

A T1 file describes a tuning problem: ``ConfigurationSpace.TuningParameters``
(Name, Type, Values), ``ConfigurationSpace.Conditions`` (Python-like boolean
expressions over the parameters), ``KernelSpecification`` (kernel name and
file, language, problem size, launch sizes, arguments) and optional
``General``, ``BenchmarkConfig``, ``Search``, ``Budget`` sections. A
parameter's ``Default`` (a value or a one-element list) becomes the space's
``default`` configuration when every parameter has one among its values.

Reading. In files found in the wild, ``Values`` is a string holding a Python
expression that builds the list (``"[16, 32, 64]"``, ``"[1, 2] +
list(range(32, 1025, 32))"``, ``"[2**i for i in range(6)]"``). It is read
here without running it as code: a small whitelist (list literals, ``+`` of
lists, ``range``, ``list``, one-level comprehensions whose element and filter
are expressions of bat.core.expressions) builds the values. Conditions are
translated into bat.core.expressions' language (``x in [a, b]`` becomes ``x == a or
x == b``, booleans become 1/0) and anything it cannot express is an error
naming the condition and the token. Kernel Tuner adds an implicit limit on
``block_size_x * block_size_y * block_size_z`` (the device's threads per
block); it is added here as an explicit constraint (1024) when the values
could exceed it. The file's kernel sections are kept under ``kernel.t1`` so
an export gives them back. Problem sizes are the numeric entries of
``KernelSpecification.ProblemSize`` (``problem_size_x``, ``_y``, ``_z``).

Writing. ``space_to_t1`` writes parameters as list literals, constraints as
Python expressions with constants and problem sizes replaced by their values
(T1 conditions see only parameters), problem sizes and constants by name in
``BenchmarkConfig``, and the launch geometry as ``GlobalSize``/``LocalSize``.

Hand-written: no library reads T1 without evaluating its strings as Python.
"""

from __future__ import annotations

import ast
import copy
import json
import keyword
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bat.core.atomic import write_text
from bat.core.errors import SpaceSpecError
from bat.core.expressions import FUNCTION_NAMES, Expression, parse_expression, parse_syntax
from bat.core.limits import MAX_VALUES

#: Kernel Tuner's default names of the thread-block dimensions and the limit it puts on their product.
BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
MAX_THREADS_PER_BLOCK = 1024
PROBLEM_SIZE_NAMES = ("problem_size_x", "problem_size_y", "problem_size_z")
_TYPES = {"int": int, "uint": int, "float": float, "string": str, "bool": int}


def is_t1(raw: object) -> bool:
    """True for a parsed T1 document (it has a ``ConfigurationSpace`` object)."""
    return isinstance(raw, dict) and isinstance(raw.get("ConfigurationSpace"), dict)


def name_from_file(path: str | Path) -> str:
    """A space name from a file name: the part before the first dot, made a valid identifier."""
    stem = Path(path).name.split(".")[0]
    name = re.sub(r"\W", "_", stem) or "space"
    if name[0].isdigit() or keyword.iskeyword(name) or name in FUNCTION_NAMES:
        name = f"space_{name}"
    return name


# -- reading --------------------------------------------------------------------------------
class _ValueList:
    """Builds one parameter's value list from its ``Values`` string, through a whitelist."""

    def __init__(self, text: str, where: str) -> None:
        self.text, self.where = text, where

    def fail(self, node: ast.AST, problem: str) -> SpaceSpecError:
        token = ast.get_source_segment(self.text, node) or type(node).__name__
        return SpaceSpecError(f"{self.where}: {problem} `{token}` in {self.text!r} (allowed: list literals, +, "
                              "range, list and [expression for name in ...])")

    def build(self, node: ast.AST) -> list[Any]:
        if isinstance(node, ast.List | ast.Tuple):
            return [self.scalar(e) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.build(node.left) + self.build(node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id == "list" and len(node.args) == 1:
                return self.build(node.args[0])
            if node.func.id == "range" and 1 <= len(node.args) <= 3:
                bounds = [self.integer(a) for a in node.args]
                r = range(*bounds)
                if len(r) > MAX_VALUES:
                    raise self.fail(node, f"more than {MAX_VALUES} values from")
                return list(r)
        if isinstance(node, ast.ListComp):
            return self.comprehension(node)
        raise self.fail(node, "cannot build a value list from")

    def comprehension(self, node: ast.ListComp) -> list[Any]:
        gen = node.generators[0]
        if len(node.generators) != 1 or not isinstance(gen.target, ast.Name):
            raise self.fail(node, "only one `for NAME in ...` is allowed in")
        var = gen.target.id
        items = np.asarray(self.build(gen.iter))
        for cond in gen.ifs:
            items = items[np.asarray(self.expression(cond, {var}).evaluate({var: items}), dtype=bool)]
        out = self.expression(node.elt, {var}).evaluate({var: items})
        values: list[Any] = np.broadcast_to(np.asarray(out), items.shape).tolist()
        return values

    def expression(self, node: ast.AST, names: set[str]) -> Expression:
        return parse_expression(ast.unparse(node), names, where=f"{self.where} ({self.text!r})")

    def scalar(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float | str):
            return node.value
        value = np.asarray(self.expression(node, set()).evaluate({}))
        if value.ndim:
            raise self.fail(node, "expected a number, not")
        return value.item()

    def integer(self, node: ast.AST) -> int:
        value = self.scalar(node)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(node, "expected an integer, not")
        return value


def t1_values(raw: Any, kind: str, where: str) -> list[Any]:
    """The values of one T1 parameter: its ``Values`` string (or list) evaluated and typed."""
    if kind not in _TYPES:
        raise SpaceSpecError(f"{where}.Type: {kind!r} unknown; valid: {', '.join(_TYPES)}")
    if isinstance(raw, list):
        values = list(raw)
    elif isinstance(raw, str):
        values = _ValueList(raw.strip(), f"{where}.Values").build(parse_syntax(raw, f"{where}.Values"))
    else:
        raise SpaceSpecError(f"{where}.Values: expected a string or a list, got {type(raw).__name__}")
    if len(values) > MAX_VALUES:
        raise SpaceSpecError(f"{where}.Values: {len(values)} values, over the limit of {MAX_VALUES}")
    # a value listed twice is one value of the space (a dict keeps the first, in order, in linear time)
    typed = list(dict.fromkeys(_typed(v, kind, where) for v in values))
    if not typed:
        raise SpaceSpecError(f"{where}.Values: {raw!r} gives no value")
    return typed


def _typed(value: Any, kind: str, where: str) -> Any:
    if not isinstance(value, int | float | str):
        raise SpaceSpecError(f"{where}.Values: {str(value)[:60]} is not a number or a string")
    if isinstance(value, float) and not math.isfinite(value):
        raise SpaceSpecError(f"{where}.Values: {value} is not a finite number")
    if kind == "string":
        return value if isinstance(value, str) else str(value)
    if isinstance(value, str) or (kind in ("int", "uint", "bool") and isinstance(value, float)
                                  and not value.is_integer()):
        raise SpaceSpecError(f"{where}.Values: {value!r} is not of type {kind}")
    return _TYPES[kind](value)


class _Translate(ast.NodeTransformer):
    """Rewrites what bat.core.expressions lacks into what it has (membership tests, booleans)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        op = node.ops[0]
        if (len(node.ops) == 1 and isinstance(op, ast.In | ast.NotIn)
                and isinstance(node.comparators[0], ast.List | ast.Tuple | ast.Set)
                and node.comparators[0].elts):
            test: type[ast.cmpop] = ast.Eq if isinstance(op, ast.In) else ast.NotEq
            parts: list[ast.expr] = [ast.Compare(copy.deepcopy(node.left), [test()], [e])
                                     for e in node.comparators[0].elts]
            joined = ast.BoolOp(ast.Or() if isinstance(op, ast.In) else ast.And(), parts)
            return parts[0] if len(parts) == 1 else joined
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(int(node.value)) if isinstance(node.value, bool) else node


def translate_condition(text: Any, names: list[str], where: str) -> str:
    """A T1 condition in bat.core.expressions' language; SpaceSpecError when it cannot be expressed."""
    if not isinstance(text, str) or not text.strip():
        raise SpaceSpecError(f"{where}: expected a non-empty expression string, got {text!r}")
    tree = ast.Expression(parse_syntax(text, where))
    out = ast.unparse(ast.fix_missing_locations(_Translate().visit(tree)))
    try:
        parse_expression(out, names, where=where)
    except SpaceSpecError as exc:
        raise SpaceSpecError(f"{exc} (T1 condition {text!r}; BAT's constraint language has arithmetic, "
                             "comparisons, and/or/not, if-else, min, max and abs)") from None
    return out


def _section(raw: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise SpaceSpecError(f"{source}: {key}: expected an object, got {type(value).__name__}")
    return value


def t1_to_space(raw: Any, source: str, name: str) -> dict[str, Any]:
    """The space-file dict of a parsed T1 document, named ``name``."""
    if not is_t1(raw):
        raise SpaceSpecError(f"{source}: not a T1 file (no ConfigurationSpace object)")
    space = raw["ConfigurationSpace"]
    params = space.get("TuningParameters")
    if not isinstance(params, list) or not params:
        raise SpaceSpecError(f"{source}: ConfigurationSpace.TuningParameters: expected a non-empty list")
    parameters, default = [], {}
    for i, p in enumerate(params):
        where = f"{source}: ConfigurationSpace.TuningParameters[{i}]"
        if not isinstance(p, dict) or not {"Name", "Values"} <= set(p):
            raise SpaceSpecError(f"{where}: expected an object with Name, Type and Values")
        parameters.append({"name": p["Name"], "values": t1_values(p["Values"], str(p.get("Type", "int")), where)})
        value = p.get("Default")
        value = value[0] if isinstance(value, list) and len(value) == 1 else value
        if value in parameters[-1]["values"]:
            default[str(p["Name"])] = value
    names = [str(p["name"]) for p in parameters]
    conditions = space.get("Conditions") or []
    if not isinstance(conditions, list):
        raise SpaceSpecError(f"{source}: ConfigurationSpace.Conditions: expected a list")
    constraints = []
    for i, cond in enumerate(conditions):
        where = f"{source}: ConfigurationSpace.Conditions[{i}].Expression"
        text = cond.get("Expression") if isinstance(cond, dict) else None
        expr = translate_condition(text, names, where)
        why = "T1 condition" if expr == ast.unparse(ast.parse(str(text).strip())) else f"T1 condition {text!r}"
        constraints.append({"expr": expr, "why": why})
    constraints += _block_limit(parameters)
    kernel_spec = _section(raw, "KernelSpecification", source)
    sizes = kernel_spec.get("ProblemSize", [])
    sizes = sizes if isinstance(sizes, list) else [sizes]
    problem_size = {n: v for n, v in zip(PROBLEM_SIZE_NAMES, sizes, strict=False)
                    if isinstance(v, int | float) and not isinstance(v, bool)}
    kept = {k: raw[k] for k in ("General", "KernelSpecification", "BenchmarkConfig", "Search", "Budget") if k in raw}
    kernel = {"name": str(kernel_spec.get("KernelName", name)), "language": str(kernel_spec.get("Language", "")),
              "source": str(kernel_spec.get("KernelFile", "")), "t1": kept}
    out = {"name": name, "description": f"T1 search space of kernel {kernel['name']} ({Path(source).name})",
           "parameters": parameters, "constraints": constraints, "problem_size": problem_size, "kernel": kernel}
    if len(default) == len(parameters):  # a default configuration only when every parameter has a valid one
        out["default"] = default
    return out


def _block_limit(parameters: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Kernel Tuner's implicit thread-block limit, when the block-size values can exceed it."""
    block = [p for p in parameters if p["name"] in BLOCK_SIZE_NAMES]
    numeric = all(isinstance(v, int | float) for p in block for v in p["values"])
    if not block or not numeric or math.prod(max(p["values"]) for p in block) <= MAX_THREADS_PER_BLOCK:
        return []
    return [{"expr": f"{' * '.join(p['name'] for p in block)} <= {MAX_THREADS_PER_BLOCK}",
             "why": "Kernel Tuner's implicit limit on threads per block (1024 assumed)"}]


# -- writing --------------------------------------------------------------------------------
class _Substitute(ast.NodeTransformer):
    """Names to their values, and ``ceil_div(a, b)`` (launch geometry) to Python's ``-(-a // b)``."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(self.values[node.id]) if node.id in self.values else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "ceil_div" and len(node.args) == 2:
            a, b = node.args
            return ast.UnaryOp(ast.USub(), ast.BinOp(ast.UnaryOp(ast.USub(), a), ast.FloorDiv(), b))
        return node


def python_expression(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with every name in ``values`` replaced by its value (T1 conditions see parameters only)."""
    tree = _Substitute(values).visit(ast.parse(str(text).strip(), mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


def _type_of(values: list[Any]) -> str:
    if all(isinstance(v, int) for v in values):
        return "int"
    if all(isinstance(v, int | float) for v in values):
        return "float"
    return "string"


def space_to_t1(raw: Mapping[str, Any], *, kernel_file: str | None = None) -> dict[str, Any]:
    """A T1 document for a validated space-file dict (``kernel_file``: where the kernel source lies)."""
    fixed = {**raw.get("problem_size", {}), **raw.get("constants", {})}
    names = [p["name"] for p in raw["parameters"]]
    default = raw.get("default") or {}
    params = [{"Name": p["name"], "Type": _type_of(list(p["values"])), "Values": repr(list(p["values"])),
               "Default": default.get(p["name"], p["values"][0])} for p in raw["parameters"]]
    conditions = []
    for c in raw.get("constraints", []):
        expr = python_expression(c["expr"], fixed)
        used = parse_expression(expr, names, where=f"constraint {c['expr']!r}").names
        conditions.append({"Expression": expr, "Parameters": [n for n in names if n in used]})
    kernel = raw.get("kernel") or {}
    kept = dict(kernel.get("t1") or {})
    spec = dict(kept.get("KernelSpecification") or _kernel_spec(raw, fixed))
    if kernel_file is not None:
        spec["KernelFile"] = kernel_file
    spec.setdefault("Arguments", [])
    general = {"BenchmarkName": raw["name"], "OutputFormat": "JSON", **(kept.get("General") or {})}
    doc: dict[str, Any] = {"General": general,
                           "ConfigurationSpace": {"TuningParameters": params, "Conditions": conditions}}
    config = kept.get("BenchmarkConfig") or {k: v for k, v in fixed.items()}
    if config:
        doc["BenchmarkConfig"] = config
    doc["KernelSpecification"] = spec
    for key in ("Search", "Budget"):
        if key in kept:
            doc[key] = kept[key]
    return doc


def _kernel_spec(raw: Mapping[str, Any], fixed: Mapping[str, Any]) -> dict[str, Any]:
    kernel = raw.get("kernel") or {}
    names = {p["name"] for p in raw["parameters"]}
    launch = raw.get("launch") or {}

    def dims(key: str, default: list[str]) -> dict[str, str]:
        exprs = [python_expression(str(e), fixed) for e in launch.get(key, default)]
        return dict(zip("XYZ", [*exprs, "1", "1"][:3], strict=True))

    block_default = [n for n in BLOCK_SIZE_NAMES if n in names] or ["1"]
    sizes = list(raw.get("problem_size", {}).values())[:3]
    return {"Language": str(kernel.get("language", "CUDA")) or "CUDA",
            "KernelName": str(kernel.get("name", raw["name"])),
            "KernelFile": str(kernel.get("source", f"{raw['name']}.cu")),
            "GlobalSizeType": "CUDA", "GlobalSize": dims("grid", ["1"]), "LocalSize": dims("block", block_default),
            "ProblemSize": sizes or [1], "SharedMemory": 0, "Arguments": []}


def write_t1(raw: Mapping[str, Any], directory: Path, out: str | Path, *, overwrite: bool = True) -> Path:
    """Write the T1 document of a space-file dict whose file lies in ``directory``.

    ``KernelFile`` is written relative to ``out``'s folder (where Kernel Tuner looks for it)
    when the kernel source exists.
    """
    out = Path(out)
    source = (raw.get("kernel") or {}).get("source")
    kernel_file = None
    if source and (directory / source).is_file():
        try:
            kernel_file = os.path.relpath((directory / source).resolve(), out.resolve().parent)
        except ValueError:  # another drive (Windows): an absolute path is all there is
            kernel_file = str((directory / source).resolve())
    return write_text(out, json.dumps(space_to_t1(raw, kernel_file=kernel_file), indent=2) + "\n",
                      overwrite=overwrite)
