"""Declared hyper-parameters of a tuner: name, type, default and the range a search may try.

A tuner class lists its tunable options in ``HYPERPARAMETERS`` (or, when they
depend on the variant, such as a Kernel Tuner strategy, in its
``hyperparameters(variant)`` class method). ``-O KEY=VALUE`` then accepts
exactly these names, each value checked against its type and range, and
``bat hypertune`` searches inside the ranges. An option that belongs to a
library's own option dictionary (Kernel Tuner's ``strategy_options``) names
that field in ``into``; ``tuner_kwargs`` nests it there.

Ranges are bounds for a search, not limits of the tuner: a value outside a
declared range is refused on the command line too, since no one tried it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.core.errors import TunerError

if TYPE_CHECKING:  # NumPy loads where a value is checked or a grid made, not when tuners are listed
    import numpy as np

KINDS = {"int": int, "float": float, "bool": bool, "choice": str}


@dataclass(frozen=True)
class HyperParam:
    """One tunable option: ``kind`` int, float, bool or choice; bounds or choices; a log scale for wide ranges."""

    name: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    log: bool = False
    doc: str = ""
    into: str = ""  # a dictionary field of the tuner this option goes into ("" : a keyword argument)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        if self.kind in ("int", "float") and (self.low is None or self.high is None or not self.low <= self.high):
            raise ValueError(f"{self.name}: a numeric hyper-parameter needs low <= high")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"{self.name}: a choice needs choices")
        if self.log and (self.low is None or self.low <= 0):
            raise ValueError(f"{self.name}: a log scale needs low > 0")

    @property
    def domain(self) -> tuple[Any, ...]:
        """The finite set of values (bool and choice), empty for a numeric range."""
        if self.kind == "bool":
            return (False, True)
        return tuple(self.choices)

    def describe(self) -> str:
        """``int in [2, 100] (log), default 20``."""
        if self.kind in ("int", "float"):
            where = f"{self.kind} in [{self.low:g}, {self.high:g}]" + (" (log)" if self.log else "")
        else:
            where = f"{self.kind} of {', '.join(map(str, self.domain))}"
        return f"{where}, default {self.default}"

    def check(self, value: Any, where: str) -> Any:
        """``value`` as this option's type, inside its range; TunerError naming ``where`` otherwise."""
        import numpy as np

        ok: Any = None
        if self.kind == "bool" and isinstance(value, bool):
            ok = value
        elif self.kind == "int" and isinstance(value, int | np.integer) and not isinstance(value, bool):
            ok = int(value)
        elif self.kind == "float" and isinstance(value, int | float | np.number) and not isinstance(value, bool):
            ok = float(value)
        elif self.kind == "choice" and value in self.choices:
            ok = value
        if ok is None or (self.kind in ("int", "float") and not (math.isfinite(ok) and self.low <= ok <= self.high)):
            raise TunerError(f"{where}: {value!r} is not {self.describe().rpartition(', default')[0]}")
        return ok

    def sample(self, rng: np.random.Generator) -> Any:
        """A value drawn uniformly (log-uniformly with ``log``) from the range or domain."""
        if self.domain:
            return self.domain[int(rng.integers(len(self.domain)))]
        assert self.low is not None and self.high is not None
        lo, hi = (math.log(self.low), math.log(self.high)) if self.log else (self.low, self.high)
        x = float(rng.uniform(lo, hi))
        x = math.exp(x) if self.log else x
        return int(min(self.high, max(self.low, round(x)))) if self.kind == "int" else x

    def grid(self, points: int) -> list[Any]:
        """``points`` values spread over the range (the whole domain for bool and choice), no repeats."""
        if self.domain:
            return list(self.domain)
        import numpy as np

        assert self.low is not None and self.high is not None
        raw = np.geomspace(self.low, self.high, points) if self.log else np.linspace(self.low, self.high, points)
        values = [round(v) for v in raw] if self.kind == "int" else [float(v) for v in raw]
        return list(dict.fromkeys(values))


def by_name(params: Sequence[HyperParam]) -> dict[str, HyperParam]:
    return {p.name: p for p in params}


def defaults(params: Sequence[HyperParam]) -> dict[str, Any]:
    """Every declared option at its default."""
    return {p.name: p.default for p in params}


def tuner_kwargs(params: Sequence[HyperParam], variant: Mapping[str, Any], settings: Mapping[str, Any],
                 where: str, owner: str) -> dict[str, Any]:
    """The keyword arguments of a tuner: its variant's own with ``settings`` checked and applied.

    Options with ``into`` are merged into that dictionary argument (the variant's entries kept).
    """
    declared = by_name(params)
    out = dict(variant)
    for key, value in settings.items():
        if key not in declared:
            raise TunerError(f"{where} {key!r}: {owner} has no such hyper-parameter; "
                             f"valid: {', '.join(sorted(declared)) or '(none)'}")
        p = declared[key]
        checked = p.check(value, f"{where} {key}")
        if p.into:
            out[p.into] = {**out.get(p.into, {}), key: checked}
        else:
            out[key] = checked
    return out


#: format tag of an options file (written by ``bat hypertune``, read by ``--tuner-options``)
OPTIONS_FORMAT = "bat-tuner-options/1"


def options_pairs(values: Mapping[str, Any]) -> tuple[str, ...]:
    """Options as ``KEY=VALUE`` strings (values as JSON), the form ``-O`` takes."""
    import json

    return tuple(f"{k}={json.dumps(v)}" for k, v in sorted(values.items()))


def read_options_file(path: str | Path) -> tuple[str, tuple[str, ...]]:
    """(tuner name, ``KEY=VALUE`` pairs) of an options file; TunerError naming the file when malformed.

    The file is JSON: ``{"format": "bat-tuner-options/1", "tuner": NAME, "options": {KEY: VALUE}}``.
    The values are checked when the tuner is made (``make_tuner``), like ``-O``.
    """
    import json

    from bat.core import limits
    from bat.core.errors import InputLimitError

    path = Path(path)
    try:  # through the bounded reader: a FIFO, a device or a huge file is refused from its stat
        data = limits.loads(limits.read_text(path, limits.MAX_SPACE_BYTES), str(path))
    except (InputLimitError, json.JSONDecodeError) as exc:
        raise TunerError(f"--tuner-options {path}: not a readable JSON file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != OPTIONS_FORMAT:
        raise TunerError(f"--tuner-options {path}: not an options file (format must be {OPTIONS_FORMAT!r})")
    tuner, options = data.get("tuner"), data.get("options")
    if not isinstance(tuner, str) or not tuner or not isinstance(options, dict):
        raise TunerError(f"--tuner-options {path}: needs a 'tuner' name and an 'options' object")
    return tuner, options_pairs(options)


def write_options_file(path: str | Path, tuner: str, values: Mapping[str, Any], note: str = "") -> None:
    """Write an options file (see ``read_options_file``) atomically."""
    import json

    from bat.core.atomic import write_text

    body = {"format": OPTIONS_FORMAT, "tuner": tuner, "options": dict(values)}
    if note:
        body["note"] = note
    write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
