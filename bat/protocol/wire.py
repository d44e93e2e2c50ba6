"""Protocol messages on the server's side: checking what a client sent, writing what it gets back.

Checked by hand, not with jsonschema: jsonschema is a development
dependency only (the GPU machines run the core without it), and the checks
must name the field at fault in words a client author can act on. The rules
are those of bat/schemas/protocol/v1/ and v2/; tests/test_protocol_schema.py holds
the two together. Every failure is a ``ProtocolError`` whose ``code`` is one
of ``ERROR_CODES`` and whose ``field`` is a path into the message
(``config.MWG``, ``configs[2]``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bat.core.errors import ProtocolError
from bat.core.limits import MAX_LINE_BYTES, loads
from bat.core.problem import EvalResult, Problem
from bat.core.space import SearchSpace

#: request type -> (required fields, optional fields), besides ``type`` and ``id``
REQUEST_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "hello": (frozenset({"protocol"}), frozenset({"tuner"})),
    "evaluate": (frozenset({"config"}), frozenset({"profiled"})),
    "batch": (frozenset({"configs"}), frozenset()),
    "valid": (frozenset({"configs"}), frozenset()),
    "done": (frozenset(), frozenset()),
    "prior": (frozenset({"gpu"}), frozenset({"offset"})),
}
#: the protocol version that introduced a request type (the others are in every version)
SINCE: dict[str, int] = {"prior": 2}
_ALLOWED = {kind: required | optional | {"type", "id"} for kind, (required, optional) in REQUEST_FIELDS.items()}
ERROR_CODES = ("parse_error", "invalid_message", "unknown_type", "unsupported_protocol", "no_hello",
               "invalid_config", "budget_exhausted", "server_error")
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
#: values listed at most in an error message
_LISTED = 12


@dataclass(frozen=True)
class Request:
    """A checked request: its type, the id to echo (if any) and the whole message."""

    type: str
    id: int | str | None
    body: Mapping[str, Any]


def decode(line: bytes) -> dict[str, Any]:
    """One line as a JSON object (ProtocolError ``parse_error`` / ``invalid_message`` otherwise)."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError("parse_error", f"a line of {len(line)} bytes, over the limit of {MAX_LINE_BYTES}")
    try:
        message = loads(line, "line")
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError and InputLimitError (depth, digits, NaN)
        raise ProtocolError("parse_error", f"not a JSON message: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("invalid_message", f"a message is a JSON object, got {type(message).__name__}")
    return message


def message_id(message: Mapping[str, Any]) -> int | str | None:
    """The message's ``id`` when it is one the reply can echo (an integer or a string)."""
    ident = message.get("id")
    return ident if isinstance(ident, int | str) and not isinstance(ident, bool) else None


def check(message: Mapping[str, Any]) -> Request:
    """The request in ``message``, its fields present, known and of the right JSON type."""
    if "id" in message and message_id(message) is None:
        raise ProtocolError("invalid_message", "must be an integer or a string", "id")
    kind = message.get("type")
    if kind is None:
        raise ProtocolError("invalid_message", "missing", "type")
    if not isinstance(kind, str):
        raise ProtocolError("invalid_message", "must be a string", "type")
    if kind not in REQUEST_FIELDS:
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}; valid: {', '.join(REQUEST_FIELDS)}",
                            "type")
    required = REQUEST_FIELDS[kind][0]
    if not required <= message.keys():
        raise ProtocolError("invalid_message", f"missing (required in {kind} messages)",
                            sorted(required - message.keys())[0])
    if not message.keys() <= _ALLOWED[kind]:
        raise ProtocolError("invalid_message", f"not a field of {kind} messages",
                            sorted(message.keys() - _ALLOWED[kind])[0])
    _check_types(kind, message)
    return Request(kind, message_id(message), message)


def _check_types(kind: str, message: Mapping[str, Any]) -> None:
    if kind == "hello":
        if not _is_int(message["protocol"]):
            raise ProtocolError("invalid_message", "must be an integer", "protocol")
        if not isinstance(message.get("tuner", ""), str):
            raise ProtocolError("invalid_message", "must be a string", "tuner")
    elif kind == "evaluate" and not isinstance(message.get("profiled", False), bool):
        raise ProtocolError("invalid_message", "must be true or false", "profiled")
    elif kind in ("batch", "valid") and not isinstance(message["configs"], list):
        raise ProtocolError("invalid_message", "must be an array of configurations", "configs")
    elif kind == "prior":
        if not isinstance(message["gpu"], str):
            raise ProtocolError("invalid_message", "must be a string (a GPU id of hello's target.others)", "gpu")
        if "offset" in message and not (_is_int(message["offset"]) and message["offset"] >= 0):
            raise ProtocolError("invalid_message", "must be an integer >= 0", "offset")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class ConfigReader:
    """Configurations as clients send them (objects of parameter values) -> the space's own values.

    A JSON number is matched to the parameter's value it equals (``16`` and
    ``16.0`` both name the value 16), so what reaches the Problem is always
    the space's own value; booleans, unknown parameters and values outside
    the space are refused, naming the parameter.
    """

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        self.names = space.names
        self._columns = [(p.name, {v: i for i, v in enumerate(p.values)}, p.values) for p in space.parameters]

    def read(self, raw: Any, field: str) -> tuple[dict[str, Any], list[int]]:
        """The configuration and its value-index row."""
        if not isinstance(raw, dict):
            raise ProtocolError("invalid_message", "must be an object of parameter values", field)
        if len(raw) != len(self.names) or not all(n in raw for n in self.names):
            for name in self.names:
                if name not in raw:
                    raise ProtocolError("invalid_config", "missing parameter", f"{field}.{name}")
            extra = sorted(set(raw) - set(self.names))[0]
            raise ProtocolError("invalid_config", f"not a parameter of space {self.space.name}", f"{field}.{extra}")
        config, row = {}, []
        for name, index, values in self._columns:
            value = raw[name]
            try:  # True would find the value 1 (equal hashes): booleans are refused
                i = index[value] if type(value) is not bool else None
            except (KeyError, TypeError):  # TypeError: an array or object is no value
                i = None
            if i is None:
                listing = ", ".join(json.dumps(v) for v in values[:_LISTED]) + (", ..." if len(values) > _LISTED
                                                                                 else "")
                raise ProtocolError("invalid_config", f"{json.dumps(value)} is not one of [{listing}]",
                                    f"{field}.{name}")
            config[name] = values[i]
            row.append(i)
        return config, row

    def read_many(self, raws: list[Any], field: str) -> tuple[list[dict[str, Any]], np.ndarray]:
        """Several configurations and their value-index rows (n, d)."""
        pairs = [self.read(raw, f"{field}[{i}]") for i, raw in enumerate(raws)]
        rows = np.array([row for _, row in pairs], dtype=np.int64).reshape(len(pairs), len(self.names))
        return [config for config, _ in pairs], rows


# -- replies -----------------------------------------------------------------------------
def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _finite(values: tuple[float, ...]) -> list[float]:
    """The finite values (JSON has no NaN); the sum tells at once when all are."""
    return list(values) if math.isfinite(sum(values)) else [v for v in values if math.isfinite(v)]


def outcome(result: EvalResult, kind: str, charged: bool) -> dict[str, Any]:
    """What one evaluated configuration gave, as the ``result`` of a reply."""
    out: dict[str, Any] = {
        "kind": kind,
        "charged": charged,
        "status": result.status.value,
        "objective": _number(result.objective_ms) if result.ok else None,
        "times": _finite(result.times_ms),
        "compile_ms": _number(result.compile_ms),
        "cost_s": result.cost_s,
        "message": result.message,
    }
    if result.extra:
        out["extra"] = {k: v for k, v in ((k, _number(v)) for k, v in result.extra.items()) if v is not None}
    return out


def refused(problem: Problem) -> dict[str, Any]:
    """The ``result`` of a configuration the budget no longer affords (nothing was run)."""
    return {"kind": "refused", "charged": False, "status": None, "objective": None, "times": [],
            "compile_ms": None, "cost_s": 0.0, "message": f"the budget of {problem.budget.describe()} is spent"}


def budget_left(problem: Problem) -> dict[str, Any]:
    """What is left of the budget: evaluations and simulated seconds (null when not limited)."""
    b = problem.budget
    seconds = None if b.max_time_s is None else max(0.0, b.max_time_s - problem.stats.clock_s)
    return {"evaluations": problem.remaining, "seconds": seconds}


def error(exc: ProtocolError) -> dict[str, Any]:
    """An ``error`` reply."""
    return {"type": "error", "code": exc.code, "field": exc.field, "message": exc.detail}


def encode(reply: Mapping[str, Any]) -> bytes:
    """One reply as a line of compact JSON."""
    return _ENCODER.encode(reply).encode() + b"\n"
