"""The trace of a tuner run: every proposal in order, as an observer of the Problem.

Every tuner's trace has the same schema (see ``TRACE_COLUMNS``), whatever the
tuner (``elapsed_cost_s`` is the simulated clock, bat.core.schedule;
``timeout_bound_ms`` the bound a timed-out measurement exceeded,
bat.core.timeouts; ``fidelity`` the share of the recorded repeats measured,
bat.core.fidelity; ``compile_s`` and ``verify_s`` the parts of ``cost_s`` spent
compiling and verifying, the rest measuring, bat.core.costs); it is written as
Parquet with the run's metadata (tuner, seed, benchmark, GPU, budget, backend)
under the key ``bat_trace``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bat.core.atomic import publish
from bat.core.dataset import Status
from bat.core.errors import DatasetError, InputLimitError
from bat.core.fidelity import FIDELITY_KEY
from bat.core.limits import MAX_DATA_BYTES, loads, regular_file
from bat.core.problem import Event, profile_cost_s
from bat.core.timeouts import BOUND_KEY

META_KEY = b"bat_trace"
NAN = float("nan")
#: Columns after the parameter columns, in this order.
TRACE_COLUMNS: tuple[str, ...] = (
    "step",
    "kind",
    "charged",
    "status",
    "objective_ms",
    "best_so_far_ms",
    "cost_s",
    "elapsed_cost_s",
    "tuner_s",
    "profiled",
    "timeout_bound_ms",
    "fidelity",
    "compile_s",
    "verify_s",
)


class TraceRecorder:
    """Collects the problem's events into a table."""

    def __init__(self, parameters: tuple[str, ...] | list[str], meta: dict[str, Any] | None = None) -> None:
        self.parameters = tuple(parameters)
        self.meta: dict[str, Any] = dict(meta or {})
        self._rows: list[tuple[Any, ...]] = []  # one per event: the parameters' values, then TRACE_COLUMNS
        self._values = values_of(self.parameters)

    def on_result(self, event: Event) -> None:
        r = event.result
        parted = event.charged or event.kind == "partial"  # a profiled re-run is device time alone
        self._rows.append((
            *self._values(r.config),
            event.step,
            event.kind,
            event.charged,
            r.status._value_,  # its value (read without the descriptor: once per evaluation)
            r.objective_ms if r.objective_ms is not None else NAN,
            event.best_so_far_ms if event.best_so_far_ms is not None else NAN,
            r.cost_s if parted else (profile_cost_s(r) if event.kind == "profile" else 0.0),
            event.elapsed_cost_s,
            event.tuner_s,
            event.profiled,
            r.extra.get(BOUND_KEY, NAN) if r.status is Status.TIMEOUT else NAN,
            r.extra.get(FIDELITY_KEY, 1.0),
            r.compile_s if parted else 0.0,
            r.verify_s if parted else 0.0,
        ))

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self) -> pd.DataFrame:
        return records_frame(self._rows, [*self.parameters, *TRACE_COLUMNS])

    def save(self, path: str | Path, *, overwrite: bool = True, numbered: bool = False) -> Path:
        return write_trace(self.frame(), self.meta, path, overwrite=overwrite, numbered=numbered)


def values_of(parameters: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """What gives a configuration's values in the order of ``parameters``, as a tuple (from two parameters on an
    ``operator.itemgetter``: half the time of a Python-level map, once per evaluation)."""
    if len(parameters) >= 2:
        getter: Callable[[Mapping[str, Any]], tuple[Any, ...]] = itemgetter(*parameters)
        return getter
    return lambda config: tuple(map(config.__getitem__, parameters))


#: Arrow types whose conversion to pandas gives the dtype and values pandas infers from the Python values
_PLAIN_TYPES = (pa.int64(), pa.float64(), pa.bool_(), pa.string(), pa.null())
#: rows from which Arrow builds a trace's frame faster than pandas (it costs about 0.3 ms more at 50 rows)
ARROW_FROM = 400


def records_frame(rows: list[tuple[Any, ...]], columns: list[str], *, arrow_from: int = ARROW_FROM) -> pd.DataFrame:
    """``pd.DataFrame.from_records(rows, columns=columns)``, the same frame, built column by column through
    Arrow from ``arrow_from`` rows on when every column holds integers, floats, booleans or text, with or
    without None (a third less time per row: once per run, on every row of the trace); other values (a
    tuple, ints mixed with text or booleans, an integer past int64) and repeated column names are left to
    pandas."""
    if rows and len(rows) >= arrow_from and len(set(columns)) == len(columns):
        try:
            arrays = [pa.array(column) for column in zip(*rows, strict=True)]
        except (pa.ArrowException, OverflowError):
            arrays = []
        if arrays and all(a.type in _PLAIN_TYPES for a in arrays):
            frame: pd.DataFrame = pa.Table.from_arrays(arrays, names=columns).to_pandas()
            return frame
    return pd.DataFrame.from_records(rows, columns=columns)


def write_trace(frame: pd.DataFrame, meta: dict[str, Any], path: str | Path, *, overwrite: bool = True,
                numbered: bool = False) -> Path:
    """Write a trace atomically; ``overwrite`` and ``numbered`` as in ``bat.core.atomic.publish``."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[META_KEY] = json.dumps(meta, sort_keys=True, default=str).encode()
    table = table.replace_schema_metadata(schema_meta)
    return publish(path, lambda tmp: pq.write_table(table, tmp), overwrite=overwrite, numbered=numbered)


def read_trace(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A trace and its metadata."""
    if not Path(path).exists():
        raise DatasetError(f"{path}: no such trace file")
    try:
        regular_file(path, MAX_DATA_BYTES)
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid, InputLimitError) as exc:
        raise DatasetError(f"{path}: not a trace file: {exc}") from None
    raw = (table.schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise DatasetError(f"{path}: no trace metadata (key 'bat_trace')")
    try:
        meta = loads(raw, f"{path}: trace metadata")
    except ValueError as exc:
        raise DatasetError(f"{path}: trace metadata is not JSON within the limits: {exc}") from None
    if not isinstance(meta, dict):
        raise DatasetError(f"{path}: trace metadata is a JSON {type(meta).__name__}, not an object")
    check_trace_columns(table, str(path))
    return table.to_pandas(), meta


#: what each column of a trace holds, by its Arrow type (a column a trace does not have is not asked for)
_COLUMN_KINDS = {"step": "integers", "kind": "text", "status": "text", "charged": "booleans", "profiled": "booleans",
                 **{c: "numbers" for c in ("objective_ms", "best_so_far_ms", "cost_s", "elapsed_cost_s", "tuner_s",
                                           "timeout_bound_ms", "fidelity")}}
#: the columns the analyses read (bat analyze --trace, a campaign folder's traces)
REQUIRED_COLUMNS = ("charged", "status", "objective_ms", "best_so_far_ms")


def check_trace_columns(table: pa.Table, where: str) -> None:
    """Every column of a trace read from outside has its type before any arithmetic (DatasetError naming the
    column and the type found): the columns above as listed, any other (a parameter) numbers, booleans or
    text, never a nested value; ``status`` has no empty row."""
    import pyarrow.types as pat

    kinds = {"integers": lambda k: pat.is_integer(k) or pat.is_null(k),
             "numbers": lambda k: pat.is_integer(k) or pat.is_floating(k) or pat.is_null(k),
             "text": lambda k: pat.is_string(k) or pat.is_large_string(k) or pat.is_null(k),
             "booleans": lambda k: pat.is_boolean(k) or pat.is_null(k)}
    scalars = "numbers, booleans or text"
    kinds[scalars] = lambda k: kinds["numbers"](k) or kinds["text"](k) or kinds["booleans"](k)
    if missing := [c for c in REQUIRED_COLUMNS if c not in table.column_names]:
        raise DatasetError(f"{where}: not a trace: lacks columns {missing}")
    for column in table.column_names:
        what = _COLUMN_KINDS.get(column, scalars)
        kind = table.schema.field(column).type
        if not kinds[what](kind):
            raise DatasetError(f"{where}: column {column!r} holds {kind}; a trace's {column} holds {what}")
    if table.column("status").null_count:
        raise DatasetError(f"{where}: column 'status' has {table.column('status').null_count} empty rows")
    _check_times(table, where)


def _check_times(table: pa.Table, where: str) -> None:
    """A time no GPU gives (<= 0, NaN or infinite) as a measured objective, or <= 0 or infinite as the best so
    far, is refused: a trace drawn on it showed a best time of -1.5 ms with exit 0."""
    import pyarrow.compute as pc
    import pyarrow.types as pat

    def floats(column: str) -> pa.ChunkedArray:
        values = table.column(column)
        return pc.cast(values, pa.float64()) if not pat.is_floating(values.type) else values

    objective, best = floats("objective_ms"), floats("best_so_far_ms")
    impossible = {
        "objective_ms": pc.and_(pc.equal(table.column("status"), Status.OK.value),
                                pc.invert(pc.and_(pc.is_finite(objective), pc.greater(objective, 0)))),
        "best_so_far_ms": pc.or_(pc.is_inf(best), pc.less_equal(best, 0)),
    }
    for column, bad in impossible.items():
        if (row := pc.index(pc.fill_null(bad, False), True).as_py()) >= 0:
            raise DatasetError(f"{where}: column {column!r} holds {table.column(column)[row].as_py()} (row {row}); "
                               "a measured time is a finite number > 0")
