"""JSON that every reader accepts: finite numbers only (RFC 8259 has no NaN or Infinity).

``finite`` turns NumPy values into Python's and each non-finite float into null, and says where each
one was (a JSON Pointer, RFC 6901) and what it was (``"inf"``, ``"-inf"``, ``"nan"``), so a document
keeps the fact without breaking a strict parser; ``dumps`` writes its result with ``allow_nan=False``,
so anything that slipped through fails here, not in the reader. Hand-written: the ``json`` module calls
no hook for floats (``default`` sees only what it cannot encode), so no encoder option does this.
"""

from __future__ import annotations

import json
import math
from pathlib import PurePath
from typing import Any


def _pointer_part(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def finite(obj: Any) -> tuple[Any, dict[str, str]]:
    """``obj`` with only JSON values (non-finite floats as None), and ``{pointer: "inf" | "-inf" | "nan"}``."""
    where: dict[str, str] = {}

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, dict):
            return {str(k): walk(v, f"{path}/{_pointer_part(k)}") for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v, f"{path}/{i}") for i, v in enumerate(value)]
        if hasattr(value, "tolist") and not isinstance(value, str | bytes):  # NumPy scalars and arrays
            return walk(value.tolist(), path)
        if isinstance(value, float) and not math.isfinite(value):
            where[path] = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            return None
        if isinstance(value, PurePath):
            return str(value)
        return value

    return walk(obj, ""), where


def dumps(obj: Any, *, indent: int | None = None, key: str | None = "non_finite") -> str:
    """``obj`` as strict JSON; a dict's non-finite values listed under ``key`` (None: not listed)."""
    clean, where = finite(obj)
    if where and key is not None and isinstance(clean, dict):
        clean[key] = where
    return json.dumps(clean, indent=indent, allow_nan=False, default=str)
