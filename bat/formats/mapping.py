"""A file's parameters mapped onto a benchmark's: other frameworks' names, problem-size constants, slices.

Other frameworks name a kernel's parameters their own way: KTT writes
``BLOCK_SIZE_X`` for ``block_size_x`` and lists problem-size constants
(``IMAGE_WIDTH``, ``HFS``, ``VERTICES``) beside the tuning parameters. A
benchmark's space file declares those names under ``other_names.<format>``:
each of its parameters or problem-size keys as an expression over the file's
names (``"filter_width": "2 * HFS + 1"``, ``"use_padding": "PADDING"``). A
format the space declares nothing for is matched by name, ignoring case.

- a parameter's expression gives the column of that parameter;
- a problem-size key's expression must equal the benchmark's problem size in
  every row, else the file measured another problem and is refused;
- a name of the file that no expression reads is refused, named in one line;
- a parameter the file lacks is fixed: to ``--fix name=value``, or to its
  only value when the space has one. The dataset is then a slice of the space
  (``DatasetMeta.partial``, the fixed values in ``extra["slice"]``); a
  parameter with several values and no ``--fix`` is refused, never guessed.

Every mapping is said in ``Mapping.lines()``, so ``bat import`` reports how.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingType
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bat.core.benchmark import Benchmark
from bat.core.errors import SpaceMismatchError, SpaceSpecError
from bat.core.expressions import parse_expression


@dataclass
class Mapping:
    """How a file's parameters became a benchmark's."""

    declared: str  # "other_names.ktt of the space file", "names matched ignoring case", ...
    renamed: dict[str, str] = field(default_factory=dict)  # ours -> the file's expression
    checked: dict[str, str] = field(default_factory=dict)  # problem-size key -> the file's expression
    fixed: dict[str, Any] = field(default_factory=dict)  # parameter -> value, absent from the file
    fixed_how: dict[str, str] = field(default_factory=dict)  # parameter -> "--fix" or "its only value"

    @property
    def is_slice(self) -> bool:
        """Whether a fixed parameter leaves out values of the space (the data covers part of it)."""
        return any(how == "--fix" for how in self.fixed_how.values())

    def lines(self) -> list[str]:
        out = []
        moved = {ours: text for ours, text in self.renamed.items() if ours != text}
        if moved:
            out.append(f"parameters mapped ({self.declared}): "
                       + ", ".join(f"{ours} = {text}" for ours, text in moved.items()))
        if self.checked:
            out.append("problem-size constants checked against the benchmark's problem size: "
                       + ", ".join(f"{key} = {text}" for key, text in self.checked.items()))
        if self.fixed:
            out.append(("a slice of the space, " if self.is_slice else "")
                       + "parameters the file lacks fixed: "
                       + ", ".join(f"{p} = {v!r} ({self.fixed_how[p]})" for p, v in self.fixed.items()))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"declared": self.declared, "renamed": dict(self.renamed), "checked": dict(self.checked),
                "fixed": dict(self.fixed), "fixed_how": dict(self.fixed_how)}


def map_parameters(params: list[str], frame: pd.DataFrame, bench: Benchmark, fmt: str,
                   fix: MappingType[str, str], where: str) -> tuple[pd.DataFrame, Mapping | None]:
    """``frame`` (the file's parameter columns ``params``) with ``bench``'s parameters instead.

    None when the file already names exactly the benchmark's parameters and nothing is fixed.
    Raises SpaceMismatchError, in one line, for what cannot be mapped."""
    space = bench.space
    if set(params) == set(space.names) and not fix:
        return frame, None
    declared = (bench.raw.get("other_names") or {}).get(fmt)
    if declared:
        how, table = f"other_names.{fmt} of {bench.name}'s space file", dict(declared)
    else:
        how, table = "names matched ignoring case", _by_case(params, bench)
    mapping = Mapping(how)
    env = {name: frame[name].to_numpy() for name in params}
    read: set[str] = set()
    columns: dict[str, Any] = {}
    for ours, text in table.items():
        expr = _parse(text, params, f"{where}: other_names.{fmt}.{ours}")
        read |= expr.names
        value = np.broadcast_to(expr.evaluate(env), (len(frame),))
        if ours in space.names:
            columns[ours] = value
            mapping.renamed[ours] = text
        else:
            _check_size(ours, text, value, bench, where)
            mapping.checked[ours] = text
    if unread := [p for p in params if p not in read]:
        raise SpaceMismatchError(
            f"{where}: cannot map the file's parameter{'s' if len(unread) > 1 else ''} {', '.join(unread)} onto "
            f"benchmark {bench.name} (parameters {', '.join(space.names)}; problem size "
            f"{', '.join(bench.problem_size) or 'none'}); declare {'them' if len(unread) > 1 else 'it'} under "
            f"other_names.{fmt} in its space file{_hints(unread, frame, bench)}")
    for name, text in fix.items():
        if name not in space.names:
            raise SpaceMismatchError(f"{where}: --fix {name}: not a parameter of {bench.name} "
                                     f"(parameters: {', '.join(space.names)})")
        if name in columns:
            raise SpaceMismatchError(f"{where}: --fix {name}: the file has this parameter (as {mapping.renamed[name]})")
        mapping.fixed[name], mapping.fixed_how[name] = _value(text, space.parameters[space.names.index(name)].values,
                                                              name, where), "--fix"
    for p in space.parameters:
        if p.name in columns or p.name in mapping.fixed:
            continue
        if len(p.values) > 1:
            missing = [q.name for q in space.parameters if q.name not in columns and q.name not in mapping.fixed
                       and len(q.values) > 1]
            raise SpaceMismatchError(
                f"{where}: the file lacks parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)} of "
                f"benchmark {bench.name}; to import it as a slice give "
                + " ".join(f"--fix {m}=VALUE" for m in missing)
                + " (" + "; ".join(f"{m}: {list(space.parameters[space.names.index(m)].values)}" for m in missing)
                + ")")
        mapping.fixed[p.name], mapping.fixed_how[p.name] = p.values[0], "its only value"
    for name, value in mapping.fixed.items():
        columns[name] = np.full(len(frame), value, dtype=object if isinstance(value, str) else None)
    ours = pd.DataFrame({p: _plain(columns[p]) for p in space.names}, index=frame.index)
    rest = frame[[c for c in frame.columns if c not in params and c not in space.names]]
    return pd.concat([ours, rest], axis=1), mapping


def _hints(unread: list[str], frame: pd.DataFrame, bench: Benchmark) -> str:
    """Names of the file that hold one value equal to a problem-size value: said, never mapped by themselves."""
    hints = []
    for name in unread:
        values = frame[name].unique()
        if len(values) == 1:
            keys = [k for k, v in bench.problem_size.items() if v == values[0]]
            if keys:
                hints.append(f"{name} is {_plain(values)[0]!r} in every row, as {' and '.join(keys)}")
    return f" ({'; '.join(hints)})" if hints else ""


def _by_case(params: list[str], bench: Benchmark) -> dict[str, str]:
    """Our names -> the file's name that equals them ignoring case (each name of ours once at most)."""
    ours = {n.lower(): n for n in (*bench.space.names, *bench.problem_size)}
    return {ours[p.lower()]: p for p in params if p.lower() in ours}


def _parse(text: Any, names: list[str], where: str) -> Any:
    try:
        return parse_expression(text, names, where=where)
    except SpaceSpecError as exc:  # an unknown name: the file lacks what the space file reads
        raise SpaceMismatchError(str(exc)) from None


def _check_size(key: str, text: str, value: np.ndarray, bench: Benchmark, where: str) -> None:
    if key not in bench.problem_size:
        raise SpaceMismatchError(f"{where}: other_names maps {text!r} to {key!r}, neither a parameter nor a "
                                 f"problem-size key of {bench.name}")
    wrong = np.flatnonzero(value != bench.problem_size[key])
    if len(wrong):
        raise SpaceMismatchError(
            f"{where}: {text} is {_plain([value[wrong[0]]])[0]!r} in row {int(wrong[0])}, the benchmark "
            f"{bench.name}'s {key} is {bench.problem_size[key]!r}: the file measured another problem size")


def _value(text: str, values: tuple[Any, ...], name: str, where: str) -> Any:
    """The space's value of ``name`` that ``text`` spells (``--fix name=text``)."""
    for v in values:
        if str(v) == text or (not isinstance(v, str) and _number(text) == v):
            return v
    raise SpaceMismatchError(f"{where}: --fix {name}={text}: not one of the values {list(values)}")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _plain(column: Any) -> list[Any]:
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(column, dtype=object)]
