"""Load and structurally validate space JSON files (benchmarks/<name>/space.json).

Checks by hand rather than with jsonschema, because the GPU machines do not
have it; bat/schemas/space.schema.json documents the same format and the
tests hold the two in agreement. Every error names the file and the JSON path
of the problem (``parameters[2].values``).
"""

from __future__ import annotations

import json
import keyword
import math
import unicodedata
from pathlib import Path
from types import UnionType
from typing import Any

from bat.core.errors import SpaceSpecError
from bat.core.expressions import FUNCTION_NAMES
from bat.core.limits import MAX_SPACE_BYTES, MAX_VALUES, loads, read_text
from bat.core.space import Constraint, Parameter, SearchSpace
from bat.core.t1 import is_t1, name_from_file, t1_to_space

REQUIRED = ("name", "parameters", "constraints", "problem_size")
OPTIONAL = ("$schema", "description", "constants", "small_problem_size", "emulation_problem_size", "launch",
            "kernel", "command", "published", "default", "other_names")
SIZES = ("small_problem_size", "emulation_problem_size")
#: Column names of datasets and traces (bat.core.dataset, bat.core.trace): a parameter of such a name would
#: overwrite the column (tests/test_input_types.py holds this list and those modules together).
RESERVED_NAMES = frozenset({
    "status", "objective_ms", "times_ms", "compile_ms", "benchmark_ms", "message", "registers",
    "shared_bytes", "local_bytes", "spill_stores_bytes", "spill_loads_bytes", "threads", "blocks",
    "step", "kind", "charged", "best_so_far_ms", "cost_s", "elapsed_cost_s", "tuner_s", "profiled",
    "timeout_bound_ms", "fidelity", "compile_s", "verify_s",
})


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> SpaceSpecError:
        return SpaceSpecError(f"{self.source}: {path}: {problem}")

    def typed(self, value: Any, kind: type | UnionType | tuple[type, ...], path: str, what: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, kind):
            raise self.fail(path, f"expected {what}, got {json.dumps(value)[:60]}")
        return value

    def identifier(self, name: Any, path: str) -> str:
        text: str = self.typed(name, str, path, "a name")
        if not name.isidentifier() or keyword.iskeyword(name) or name in FUNCTION_NAMES:
            raise self.fail(path, f"{name!r} is not usable as a name in expressions")
        if (normal := unicodedata.normalize("NFKC", name)) != name:
            # Python reads identifiers in NFKC form: 'ﬁ' and 'fi' would be one name in expressions
            raise self.fail(path, f"{name!r} is not in Unicode NFKC form; write it as {normal!r}")
        return text

    def numbers(self, raw: dict[str, Any], key: str) -> dict[str, int | float]:
        table: dict[str, int | float] = self.typed(raw[key], dict, key, "an object of numbers")
        for name, value in table.items():
            self.identifier(name, f"{key}.{name}")
            self.typed(value, int | float, f"{key}.{name}", "a number")
            if not math.isfinite(value):
                raise self.fail(f"{key}.{name}", f"{value} is not a finite number")
        return table

    def keys(self, item: Any, path: str, what: str, required: tuple[str, ...],
             optional: tuple[str, ...] = ()) -> None:
        """``item`` is an object with every ``required`` key and no key outside required + optional."""
        self.typed(item, dict, path, what)
        for key in required:
            if key not in item:
                raise self.fail(path, f"missing key {key!r}")
        if extra := set(item) - set(required) - set(optional):
            raise self.fail(path, f"unknown key {sorted(extra)[0]!r}")

    def parameters(self, raw: Any) -> list[Parameter]:
        items = self.typed(raw, list, "parameters", "a list")
        if not items:
            raise self.fail("parameters", "empty list")
        seen: set[str] = set()
        out = []
        for i, item in enumerate(items):
            path = f"parameters[{i}]"
            self.keys(item, path, "an object", ("name", "values"), ("description",))
            name = self.identifier(item["name"], f"{path}.name")
            if name in seen:
                raise self.fail(f"{path}.name", f"duplicate parameter name {name!r}")
            if name in RESERVED_NAMES:
                raise self.fail(f"{path}.name", f"{name!r} is reserved: datasets and traces have a column of "
                                "that name")
            seen.add(name)
            values = self.typed(item["values"], list, f"{path}.values", "a list")
            if not values:
                raise self.fail(f"{path}.values", "empty value list")
            if len(values) > MAX_VALUES:
                raise self.fail(f"{path}.values", f"{len(values)} values, over the limit of {MAX_VALUES}")
            first: dict[Any, int] = {}
            for k, v in enumerate(values):
                self.typed(v, int | float | str, f"{path}.values[{k}]", "a number or string")
                if isinstance(v, float) and not math.isfinite(v):
                    raise self.fail(f"{path}.values[{k}]", f"{v} is not a finite number")
                if isinstance(v, str) != isinstance(values[0], str):
                    raise self.fail(f"{path}.values[{k}]", f"{v!r} mixes strings and numbers in one parameter "
                                    f"(values[0] is {values[0]!r}): a parameter has one type")
                if v in first:  # a dict: linear in the number of values (1 and 1.0 are one value)
                    raise self.fail(f"{path}.values[{k}]", f"duplicate value {v!r}")
                first[v] = k
            out.append(Parameter(name, tuple(values)))
        return out

    def constraints(self, raw: Any, where: str = "constraints") -> list[Constraint]:
        items = self.typed(raw, list, where, "a list")
        out = []
        for i, item in enumerate(items):
            path = f"constraints[{i}]" if where == "constraints" else where
            self.keys(item, path, "an object with expr and why", ("expr", "why"))
            for key in ("expr", "why"):
                self.typed(item[key], str, f"{path}.{key}", "a string")
            out.append(Constraint(item["expr"], item["why"], path))
        return out

    def launch(self, raw: Any) -> None:
        self.typed(raw, dict, "launch", "an object")
        for key in ("block", "grid"):
            if key not in raw:
                raise self.fail("launch", f"missing key {key!r}")
            dims = self.typed(raw[key], list, f"launch.{key}", "a list of 1 to 3 expressions")
            if not 1 <= len(dims) <= 3:
                raise self.fail(f"launch.{key}", "expected 1 to 3 expressions")
            for k, dim in enumerate(dims):
                self.typed(dim, str | int, f"launch.{key}[{k}]", "an expression string")

    def default(self, raw: Any, parameters: list[Parameter]) -> None:
        """The default configuration: one value of each parameter (it may violate a constraint)."""
        self.typed(raw, dict, "default", "an object of parameter values")
        for p in parameters:
            if p.name not in raw:
                raise self.fail("default", f"missing parameter {p.name!r}")
            if raw[p.name] not in p.values:
                raise self.fail(f"default.{p.name}", f"{raw[p.name]!r} is not one of the values {list(p.values)}")
        if extra := sorted(set(raw) - {p.name for p in parameters}):
            raise self.fail(f"default.{extra[0]}", "not a parameter")

    def other_names(self, raw: Any, names: set[str]) -> None:
        """How other frameworks' files name the parameters and problem-size keys: per format, one
        expression over the file's names for each name of ours (bat.formats.mapping reads them)."""
        for fmt, table in self.typed(raw, dict, "other_names", "an object of formats").items():
            self.identifier(fmt, f"other_names.{fmt}")
            for ours, text in self.typed(table, dict, f"other_names.{fmt}", "an object of expressions").items():
                if ours not in names:
                    raise self.fail(f"other_names.{fmt}.{ours}", "neither a parameter nor a problem_size key")
                if not isinstance(text, str) or not text.strip():
                    raise self.fail(f"other_names.{fmt}.{ours}", "expected an expression over the file's names")

    def published(self, raw: Any, n_constraints: int) -> None:
        self.typed(raw, dict, "published", "an object")
        for key, kind, what in (("cardinality", int, "an integer"),
                                ("constrained", int, "an integer"), ("note", str, "a string")):
            if key in raw:
                self.typed(raw[key], kind, f"published.{key}", what)
        for name, variant in self.typed(raw.get("variants", {}), dict, "published.variants", "an object").items():
            path = f"published.variants.{name}"
            self.identifier(name, path)
            self.keys(variant, path, "an object", ("constraints", "note"), ("constants", "constrained"))
            self.typed(variant["note"], str, f"{path}.note", "a string")
            if "constrained" in variant:
                self.typed(variant["constrained"], int, f"{path}.constrained", "an integer")
            for key, value in self.typed(variant.get("constants", {}), dict, f"{path}.constants",
                                         "an object of numbers").items():
                self.identifier(key, f"{path}.constants.{key}")
                self.typed(value, int | float, f"{path}.constants.{key}", "a number")
            for i, item in enumerate(self.typed(variant["constraints"], list, f"{path}.constraints", "a list")):
                if isinstance(item, int) and not isinstance(item, bool):
                    if not 0 <= item < n_constraints:
                        raise self.fail(f"{path}.constraints[{i}]", f"no constraint {item} in this file")
                else:
                    self.constraints([item], f"{path}.constraints[{i}]")


def validate_space_dict(raw: Any, source: str) -> tuple[list[Parameter], list[Constraint]]:
    """Check the structure of a parsed space file; return its parameters and constraints."""
    check = _Checker(source)
    check.typed(raw, dict, "$", "a JSON object")
    for key in REQUIRED:
        if key not in raw:
            raise check.fail("$", f"missing key {key!r}")
    if extra := sorted(set(raw) - set(REQUIRED) - set(OPTIONAL)):
        raise check.fail(extra[0], f"unknown key; allowed: {', '.join(REQUIRED + OPTIONAL)}")
    check.identifier(raw["name"], "name")
    for key in ("description", "$schema"):
        if key in raw:
            check.typed(raw[key], str, key, "a string")
    parameters = check.parameters(raw["parameters"])
    constraints = check.constraints(raw["constraints"])
    names = {p.name for p in parameters}
    for key in ("problem_size", "constants", *SIZES):
        if key in raw:
            for name, value in check.numbers(raw, key).items():
                if name in names:
                    raise check.fail(f"{key}.{name}", "name clashes with a parameter")
                if key != "constants":
                    check_size_value(value, f"{check.source}: {key}.{name}")
    if "constants" in raw and (both := set(raw["constants"]) & set(raw["problem_size"])):
        raise check.fail(f"constants.{sorted(both)[0]}", "name clashes with problem_size")
    for key in SIZES:
        if unknown := set(raw.get(key, {})) - set(raw["problem_size"]):
            raise check.fail(f"{key}.{sorted(unknown)[0]}", "not a problem_size key")
    for key in ("kernel", "command"):
        if key in raw:
            check.typed(raw[key], dict, key, "an object")
    if "launch" in raw:
        check.launch(raw["launch"])
    if "published" in raw:
        check.published(raw["published"], len(constraints))
    if "default" in raw:
        check.default(raw["default"], parameters)
    if "other_names" in raw:
        check.other_names(raw["other_names"], names | set(raw["problem_size"]))
    return parameters, constraints


def space_from_dict(raw: Any, source: str = "<memory>") -> SearchSpace:
    """A SearchSpace from a parsed space file (validated first)."""
    parameters, constraints = validate_space_dict(raw, source)
    return SearchSpace(raw["name"], parameters, constraints, constants=raw.get("constants"),
                       problem_size=raw["problem_size"], source=source)


def variant_space(raw: dict[str, Any], variant: str, source: str = "<memory>") -> SearchSpace:
    """The space under another rule set (``published.variants.<variant>``): the rules a published count used.

    A variant lists its constraints as indices of the file's own constraints (kept as they are)
    or as new ``{expr, why}`` objects, and may add or override constants.
    """
    from bat.core.errors import UnknownNameError

    validate_space_dict(raw, source)
    variants = raw.get("published", {}).get("variants", {})
    if variant not in variants:
        raise UnknownNameError(f"rule variant of {raw['name']}", variant, sorted(variants))
    v = variants[variant]
    rules = [raw["constraints"][item] if isinstance(item, int) else item for item in v["constraints"]]
    return space_from_dict({**raw, "constraints": rules, "constants": {**raw.get("constants", {}),
                                                                      **v.get("constants", {})}},
                           f"{source} (rules {variant})")


def check_size_value(value: Any, where: str) -> None:
    """A problem size is a number above 0 (an array of -5 elements, or of 0, is no problem to measure)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value > 0):
        raise SpaceSpecError(f"{where}: a problem size must be a finite number above 0, got {str(value)[:60]}")


def read_space_json(path: str | Path) -> dict[str, Any]:
    """Parse a space file (ours, or a T1 file: bat.core.t1); malformed JSON raises SpaceSpecError naming file,
    line and column."""
    path = Path(path)
    text = read_text(path, MAX_SPACE_BYTES)
    try:
        raw = loads(text, str(path))
    except json.JSONDecodeError as exc:
        raise SpaceSpecError(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                             f"{exc.msg}") from None
    return t1_to_space(raw, str(path), name_from_file(path)) if is_t1(raw) else raw


def load_space(path: str | Path) -> SearchSpace:
    """Read, validate and build the SearchSpace of a space file."""
    return space_from_dict(read_space_json(path), str(path))
