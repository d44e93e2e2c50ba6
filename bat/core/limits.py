"""Bounded readers: every file and message BAT reads from outside goes through here.

Each reader has stated limits (docs/RELIABILITY.md lists them): bytes read,
bytes after gzip decompression, JSON nesting depth, digits of a JSON integer,
and non-finite numbers. Only regular files are read, so a FIFO or a device
(``/dev/zero``) is refused from its ``stat`` before anything blocks or grows.
A breach raises ``InputLimitError`` naming the source and the limit, which the
CLI prints as one line with exit 2.

Hand-written because the standard ``json`` module has no depth or size
limits of its own and no library we use wraps it with them; parsing itself
stays with ``json``.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import stat
import zlib
from pathlib import Path
from typing import Any

from bat.core.errors import InputLimitError

MIB = 1 << 20
#: a space file (ours or a T1 file)
MAX_SPACE_BYTES = 4 * MIB
#: a kernel source given in place of a benchmark's own (bat verify --source)
MAX_SOURCE_BYTES = 4 * MIB
#: a data file: Kernel Tuner cache, T4, KTT output, compare baseline (after decompression too)
MAX_DATA_BYTES = 128 * MIB
#: a gzip file's size before decompression
MAX_GZIP_BYTES = 32 * MIB
#: a checkpoint journal (bat record, bat run on a measuring backend): about 500 bytes per configuration
MAX_JOURNAL_BYTES = 512 * MIB
#: a campaign's run store (bat compare's runs.sqlite)
MAX_STORE_BYTES = 8 * 1024 * MIB
#: one stored run of a run store: its metadata, its trace
MAX_RUN_BYTES = 64 * MIB
#: one protocol line
MAX_LINE_BYTES = 16 * MIB
#: nesting of JSON arrays and objects
MAX_DEPTH = 64
#: decimal digits of a JSON integer
MAX_INT_DIGITS = 30
#: values of one parameter
MAX_VALUES = 1 << 20
#: configurations of one constraint group, the part of a space the constraint engine enumerates
MAX_GROUP_SIZE = 1 << 25
#: characters of a name (tuner, label, GPU) taken from outside
MAX_NAME_CHARS = 200
#: evaluations of one budget of a comparison (its curves, bands and figures grow with the largest budget)
MAX_BUDGET = 100_000
#: runs of one comparison campaign (tuners x targets x budgets x repeats), planned before any runs
MAX_CAMPAIGN_RUNS = 100_000
#: configurations of another GPU's data (the transfer prior) in one protocol reply (``prior``)
PRIOR_PAGE_ROWS = 4096


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_kind(path: str | Path, *, folder_ok: bool = False) -> None:
    """``path`` is absent, a regular file or (``folder_ok``) a folder: never a loop of symbolic links, a link to
    nothing, a FIFO, a device or a socket (InputLimitError naming it). Every path BAT writes is checked here
    before any work."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # absent; a file on the way is the writer's own message
        if os.path.islink(path):  # writing through it would make a file elsewhere, or fail once work is done
            raise InputLimitError(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist") from None
        return
    except OSError as exc:  # ELOOP: a loop of symbolic links
        raise InputLimitError(f"{path}: {exc.strerror or exc}") from None
    if not (stat.S_ISREG(info.st_mode) or (folder_ok and stat.S_ISDIR(info.st_mode))):
        raise InputLimitError(f"{path}: {_kind(info.st_mode)}, not a regular file: BAT writes regular files only")


def regular_file(path: str | Path, limit: int) -> int:
    """The size of ``path``, a regular file of at most ``limit`` bytes (InputLimitError otherwise)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputLimitError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputLimitError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputLimitError(f"{path}: {_kind(info.st_mode)}, not a regular file: BAT reads regular files only")
    if info.st_size > limit:
        raise InputLimitError(f"{path}: {info.st_size} bytes, over the limit of {limit} bytes")
    return info.st_size


def read_bytes(path: str | Path, limit: int = MAX_DATA_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; a ``.gz`` file is decompressed, at most
    ``limit`` bytes after decompression."""
    gz = str(path).endswith(".gz")
    regular_file(path, MAX_GZIP_BYTES if gz else limit)
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            data = fh.read(limit + 1)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputLimitError(f"{path}: a damaged or truncated gzip file ({exc})") from None
    except OSError as exc:
        raise InputLimitError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputLimitError(f"{path}: more than {limit} bytes{' after decompression' if gz else ''}, "
                              "over the limit")
    return data


def read_text(path: str | Path, limit: int = MAX_DATA_BYTES) -> str:
    """The UTF-8 text of a regular (or gzip) file within ``limit`` bytes."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputLimitError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits, over the limit of {MAX_INT_DIGITS}")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > 2 * MAX_INT_DIGITS + 10:
        raise ValueError(f"a number of {len(text)} characters, over the limit")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows to infinity")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # json would keep the last silently: a configuration listed twice, say
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key[:80]!r} appears twice in one object")
            seen.add(key)
    return obj


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number BAT accepts (only finite numbers)")


def loads(text: str | bytes, where: str, *, finite: bool = True) -> Any:
    """JSON within the depth and digit limits, no key twice in an object; ``finite`` refuses NaN, Infinity and
    numbers that overflow.

    ``where`` (a path, "protocol line") starts the message of the InputLimitError raised for a breach
    and of the ``json.JSONDecodeError`` (re-raised as is) for malformed text.
    """
    try:
        value = json.loads(text, parse_int=_parse_int, object_pairs_hook=_object,
                           parse_float=_parse_float if finite else None,
                           parse_constant=_refuse_constant if finite else None)
    except RecursionError:
        raise InputLimitError(f"{where}: JSON nested deeper than the limit of {MAX_DEPTH}") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # from the hooks above, or bytes that are not UTF-8
        raise InputLimitError(f"{where}: {exc}") from None
    check_depth(value, where)
    return value


def check_depth(value: Any, where: str, limit: int = MAX_DEPTH) -> None:
    """Refuse lists and dicts nested deeper than ``limit`` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth > limit:
            raise InputLimitError(f"{where}: JSON nested deeper than the limit of {limit}")
        stack.extend((child, depth + 1) for child in item if isinstance(child, list | dict))


def name(value: Any, where: str) -> str:
    """A name from outside: a string of at most MAX_NAME_CHARS characters."""
    if not isinstance(value, str):
        raise InputLimitError(f"{where}: expected a string, got {type(value).__name__}")
    if len(value) > MAX_NAME_CHARS:
        raise InputLimitError(f"{where}: {len(value)} characters, over the limit of {MAX_NAME_CHARS}")
    return value
