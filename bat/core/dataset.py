"""Measured data on disk: one Parquet file per (benchmark, GPU), readable with plain pandas.

A dataset holds one row per measured configuration: the parameter values,
a status, the objective (mean kernel time, ms), every repeated time, the
compile time and optional columns (static resources, launch geometry,
Nsight Compute counters). Per-dataset metadata (benchmark, space hash,
problem size, input recipe, GPU, toolchain, date, source, licence) travels
in the Parquet schema metadata under the key ``bat`` (``bat.core.datasetmeta``). pandas and pyarrow are
imported where rows are read or written, so the statuses and metadata types
load without them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.core import quarantine
from bat.core.atomic import publish
from bat.core.datasetmeta import META_KEY, check_regular, not_parquet, read_meta
from bat.core.datasetmeta import DatasetMeta as DatasetMeta  # re-exported: where every importer finds it
from bat.core.errors import DatasetError, InputLimitError, SpaceMismatchError, SpaceSpecError
from bat.core.indexed_config import IndexedConfig
from bat.core.limits import loads
from bat.core.suspect import quarantine_rows, suspect_reasons

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from bat.core.space import SearchSpace

class Status(StrEnum):
    """Outcome of evaluating one configuration."""

    OK = "ok"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    INCORRECT = "incorrect"
    TIMEOUT = "timeout"
    CONSTRAINT_VIOLATION = "constraint_violation"
    MISSING = "missing"


#: Columns every dataset has, after the parameter columns.
CORE_COLUMNS: tuple[str, ...] = (
    "status",
    "objective_ms",
    "times_ms",
    "compile_ms",
    "benchmark_ms",
    "message",
)

#: Optional columns with a fixed meaning (static resources and launch geometry).
RESOURCE_COLUMNS: tuple[str, ...] = (
    "registers",
    "shared_bytes",
    "local_bytes",
    "spill_stores_bytes",
    "spill_loads_bytes",
    "threads",
    "blocks",
)


def counter_columns(columns: pd.DataFrame | list[str]) -> list[str]:
    """Columns holding Nsight Compute metrics (their names contain ``__``), of a frame or a list of names."""
    names = columns if isinstance(columns, list) else columns.columns
    return [c for c in names if "__" in c]


@dataclass
class Dataset:
    """A table of measured configurations plus its metadata."""

    frame: pd.DataFrame
    meta: DatasetMeta
    parameters: tuple[str, ...]
    _index: dict[tuple[Any, ...], int] | None = field(default=None, init=False, repr=False, compare=False)
    #: the space of the last ``row_of`` of an IndexedConfig, and the rows by flat id in it (None: not indexable)
    _by_id: tuple[SearchSpace, dict[int, int] | None] | None = field(default=None, init=False, repr=False,
                                                                     compare=False)

    def __post_init__(self) -> None:
        missing = [c for c in (*self.parameters, *CORE_COLUMNS) if c not in self.frame.columns]
        if missing:
            raise DatasetError(f"dataset {self.meta.benchmark}/{self.meta.gpu} lacks columns {missing}")
        bad = set(self.frame["status"].unique()) - {s.value for s in Status}
        if bad:
            raise DatasetError(f"dataset {self.meta.benchmark}/{self.meta.gpu}: unknown statuses "
                               f"{sorted(bad, key=str)}; valid: {', '.join(s.value for s in Status)}")

    # -- views ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self.meta.benchmark}/{self.meta.gpu}"

    @property
    def ok(self) -> pd.DataFrame:
        """Rows whose status is ok (the ones with an objective)."""
        return self.frame[self.frame["status"] == Status.OK.value]

    @property
    def best_ms(self) -> float:
        """Best (lowest) objective among ok rows."""
        ok = self.ok
        if ok.empty:
            raise DatasetError(f"dataset {self.name} has no valid measurement")
        return float(ok["objective_ms"].min())

    @property
    def counters(self) -> list[str]:
        return counter_columns(self.frame)

    def row_of(self, config: Mapping[Any, Any]) -> int | None:
        """Position of ``config`` in ``frame`` (None when it was not recorded); indexed on first use.

        A configuration the space made (bat.core.indexed_config) is found by its flat id, others by
        their values (NumPy scalars hash and compare as the Python values they hold). Its keys are the
        parameters' names (a frame's row, as ``to_dict`` gives it, types them as any label).
        """
        if type(config) is IndexedConfig and config.flat >= 0:
            by_id = self._rows_by_id(config.space)
            if by_id is not None:
                return by_id.get(config.flat)
        if self._index is None:
            keys = zip(*(self.frame[p].map(_plain).tolist() for p in self.parameters), strict=True)
            self._index = {}
            for i, k in enumerate(keys):  # a configuration twice: its first row (a repeat is quarantined)
                self._index.setdefault(k, i)
        return self._index.get(tuple(map(config.__getitem__, self.parameters)))

    def _rows_by_id(self, space: SearchSpace) -> dict[int, int] | None:
        """Row of each recorded flat id of ``space`` (the first of a repeat); None when the data has
        other parameters or values outside the space (then rows are found by value)."""
        if self._by_id is None or self._by_id[0] is not space:
            table = None
            if tuple(space.names) == self.parameters:
                try:
                    ids = space.to_ids(space.encode(self.frame[list(self.parameters)])).tolist()
                except SpaceSpecError:
                    ids = None
                if ids is not None:
                    table = dict(zip(reversed(ids), range(len(ids) - 1, -1, -1), strict=True))
            self._by_id = (space, table)
        return self._by_id[1]

    def configs(self) -> pd.DataFrame:
        return self.frame[list(self.parameters)]

    # -- checks --------------------------------------------------------------
    def check_space(self, space: SearchSpace, *, same_hash: bool = True) -> None:
        """Raise SpaceMismatchError listing every way the data disagrees with ``space``.

        ``same_hash=False`` accepts data recorded on another space with the same parameters and
        values (a copy of a space with another constraint): only the hash may differ.
        """
        problems: list[str] = []
        if tuple(space.names) != self.parameters:
            problems.append(f"parameters {list(self.parameters)} != space's {list(space.names)}")
        else:
            for p in space.parameters:
                allowed = set(p.values)
                seen = set(self.frame[p.name].unique().tolist())
                extra = sorted(seen - allowed, key=str)
                if extra:
                    problems.append(f"{p.name}: values {extra} not in the space")
        if same_hash and self.meta.space_hash != space.space_hash:
            problems.append(
                f"space hash {self.meta.space_hash[:12]} != space file's {space.space_hash[:12]}"
            )
        if problems:
            raise SpaceMismatchError(f"dataset {self.name} does not match space {space.name}: " + "; ".join(problems))

    # -- disk ----------------------------------------------------------------
    def save(self, path: str | Path, *, overwrite: bool = True) -> Path:
        """Write the dataset atomically (``overwrite=False``: never replace an existing file).

        What is written reads back: a column Arrow cannot store (an integer beyond 64 bits, values of mixed
        kinds), a column of a type or a time ``load`` refuses (check_column_types: a negative compile time taken
        from a cache) or metadata outside the readers' limits (NaN or an infinity taken from a source file,
        nesting, digits) is refused naming the column or the limit, before anything is written."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        frame = self.frame.reset_index(drop=True)
        try:
            table = pa.Table.from_pandas(frame, preserve_index=False)
        except (OverflowError, pa.ArrowException) as exc:
            raise DatasetError(f"{path}: column {_unstorable(frame)!r} holds a value a dataset cannot store "
                               f"({' '.join(str(exc).split())[:200]})") from None
        check_column_types(table, self.parameters, str(path))  # what load would refuse is not written
        text = self.meta.to_json()
        try:
            loads(text, f"{path}: the metadata to write")
        except (InputLimitError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{exc} (taken from the source; a dataset's metadata must read back)") from None
        meta = dict(table.schema.metadata or {})
        meta[META_KEY] = text.encode()
        meta[b"bat_parameters"] = json.dumps(list(self.parameters)).encode()
        table = table.replace_schema_metadata(meta)
        return publish(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"), overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path, *, as_recorded: bool = False) -> Dataset:
        """The dataset in ``path``, every column typed (check_column_types). Rows no GPU can produce that the
        file still holds (bat.core.suspect: a time <= 0, NaN or infinite, a configuration twice) are
        quarantined, and every output drawn on it says so (bat.core.quarantine); ``as_recorded`` keeps them
        as the file has them (``bat check``, which reports them)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(path)
        if not path.exists():
            raise DatasetError(f"{path}: no such dataset file")
        check_regular(path)
        try:
            table = pq.read_table(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise not_parquet(path, exc) from exc
        meta = table.schema.metadata or {}
        if META_KEY not in meta or b"bat_parameters" not in meta:
            raise DatasetError(f"{path}: no BAT metadata (keys 'bat', 'bat_parameters') in the Parquet schema")
        try:
            params = loads(meta[b"bat_parameters"], f"{path}: metadata 'bat_parameters'")
        except ValueError as exc:
            raise DatasetError(f"{path}: metadata 'bat_parameters' is not a JSON list ({exc})") from None
        if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
            raise DatasetError(f"{path}: metadata 'bat_parameters' is not a JSON list of names")
        params = tuple(params)
        missing = [c for c in (*params, *CORE_COLUMNS) if c not in table.column_names]
        if missing:
            raise DatasetError(f"{path}: lacks columns {missing} (a dataset has its parameters and "
                               f"{', '.join(CORE_COLUMNS)})")
        check_column_types(table, params, str(path))
        frame = table.drop_columns(["times_ms"]).to_pandas()
        frame.insert(table.column_names.index("times_ms"), "times_ms", _float_lists(table.column("times_ms")))
        for column in ("objective_ms", "compile_ms", "benchmark_ms"):
            frame[column] = frame[column].astype(float)
        frame["message"] = frame["message"].fillna("")
        reasons = suspect_reasons(frame, params)
        if not as_recorded and (reasons != "").any():
            frame = quarantine_rows(frame, reasons)
        loaded = cls(frame=frame, meta=DatasetMeta.from_json(meta[META_KEY], str(path)), parameters=params)
        quarantine.note(str(path), quarantine.count(loaded.meta.extra, frame.get("suspect")))
        return loaded

    @staticmethod
    def read_columns(path: str | Path) -> list[str]:
        """Column names only, without reading the rows."""
        import pyarrow.parquet as pq

        check_regular(Path(path))
        return list(pq.read_schema(path).names)

    read_meta = staticmethod(read_meta)

def check_column_types(table: pa.Table, parameters: tuple[str, ...], where: str) -> None:
    """Every column of a dataset read from outside has its type, from the Arrow schema, before any arithmetic.

    status: text without nulls; objective_ms, compile_ms, benchmark_ms and counters: numbers; times_ms: a
    list of numbers per row; message: text; a parameter: a column of numbers, booleans or text, never a
    nested value, and so is any other column; compile_ms and benchmark_ms are never negative or infinite. A
    column of another type raises DatasetError naming the column and the type found (or the value).
    """
    import pyarrow.compute as pc
    import pyarrow.types as pat

    def number(kind: pa.DataType) -> bool:
        return bool(pat.is_integer(kind) or pat.is_floating(kind) or pat.is_null(kind))

    def text(kind: pa.DataType) -> bool:
        return pat.is_string(kind) or pat.is_large_string(kind) or pat.is_null(kind) or (
            pat.is_dictionary(kind) and text(kind.value_type))

    def times(kind: pa.DataType) -> bool:
        return pat.is_null(kind) or number(kind) or (
            (pat.is_list(kind) or pat.is_large_list(kind)) and number(kind.value_type))

    def scalar(kind: pa.DataType) -> bool:
        return number(kind) or text(kind) or pat.is_boolean(kind)

    expected = {"status": ("text", text), "message": ("text", text), "times_ms": ("a list of numbers", times),
                **{c: ("numbers", number) for c in ("objective_ms", "compile_ms", "benchmark_ms")},
                **{c: ("numbers", number) for c in counter_columns(table.column_names)},
                **{c: ("numbers, booleans or text", scalar) for c in parameters}}
    others = {c: ("numbers, booleans or text", scalar) for c in table.column_names if c not in expected}
    for column, (what, accepts) in {**expected, **others}.items():
        kind = table.schema.field(column).type
        if not accepts(kind):
            raise DatasetError(f"{where}: column {column!r} holds {kind}; a dataset's {column} holds {what}")
    for column in ("compile_ms", "benchmark_ms"):  # a cost: empty, or a finite number >= 0
        values = table.column(column)
        if pat.is_null(values.type):
            continue
        bad = pc.less(values, 0)
        if pat.is_floating(values.type):
            bad = pc.or_(bad, pc.is_inf(values))
        if (row := pc.index(bad, True).as_py()) >= 0:
            raise DatasetError(f"{where}: column {column!r} holds {values[row].as_py()} (row {row}); a time "
                               "spent is empty or a finite number >= 0")
    if table.column("status").null_count:
        raise DatasetError(f"{where}: column 'status' has {table.column('status').null_count} empty rows; "
                           f"each row has one of {', '.join(s.value for s in Status)}")


def _unstorable(frame: Any) -> str:
    """The first column of ``frame`` that Arrow cannot convert ("?" when each converts alone)."""
    import pyarrow as pa

    for column in frame.columns:
        try:
            pa.Array.from_pandas(frame[column])
        except (OverflowError, pa.ArrowException):
            return str(column)[:80]
    return "?"


def _float_lists(column: pa.ChunkedArray) -> list[list[float]]:
    """Each row's ``times_ms`` as a list of floats, [] where there are none: a column of lists of numbers
    without a missing element in one pass through Arrow, any other (numbers, nulls) row by row."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pat

    if pat.is_list(column.type) or pat.is_large_list(column.type):
        lists = column.cast(pa.large_list(pa.float64()))
        if pc.list_flatten(lists).null_count == 0:  # a missing element is NaN row by row, as below
            return [[] if values is None else values for values in lists.to_pylist()]
    return [_as_float_list(value) for value in column.to_pandas()]


def _as_float_list(value: object) -> list[float]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return [float(v) for v in np.atleast_1d(np.asarray(value, dtype=float))]


def make_frame(
    parameters: tuple[str, ...] | list[str],
    rows: Sequence[Mapping[str, Any]],
    where: str = "the data",
) -> pd.DataFrame:
    """Build a dataset frame from row dicts, filling core columns with defaults. A parameter named twice, or
    named like a column of every dataset (``status``, ``objective_ms``, ...), is refused naming ``where``:
    one name, one column."""
    import pandas as pd

    seen: set[str] = set()
    for name in parameters:
        if name in seen or name in CORE_COLUMNS:
            why = "twice" if name in seen else "like a column of every dataset"
            raise DatasetError(f"{where}: the parameter {str(name)[:80]!r} is named {why}; one name, one column")
        seen.add(name)
    frame = pd.DataFrame.from_records(list(rows))
    ordered = [*parameters, *CORE_COLUMNS]
    rest = [c for c in frame.columns if c not in ordered]
    if missing := [p for p in parameters if p not in frame.columns]:
        raise KeyError(f"{missing} not in index")  # as pandas says it when a frame lacks columns asked for
    # the columns are built apart and the frame once: a column set or taken on a frame costs far more
    columns: dict[Any, Any] = dict(frame.items())
    for col, default in (
        ("status", Status.OK.value),
        ("objective_ms", np.nan),
        ("times_ms", None),
        ("compile_ms", np.nan),
        ("benchmark_ms", np.nan),
        ("message", ""),
    ):
        if col not in columns:  # an empty column is float, as pandas makes one set on an empty frame
            columns[col] = pd.Series([default] * len(frame), index=frame.index, dtype=None if len(frame) else float)
    columns["times_ms"] = columns["times_ms"].map(_as_float_list)
    columns["message"] = columns["message"].fillna("").astype(str)
    columns["status"] = columns["status"].astype(str)
    for col in ("objective_ms", "compile_ms", "benchmark_ms"):
        columns[col] = pd.to_numeric(columns[col], errors="coerce").astype(float)
    return pd.DataFrame({c: columns[c] for c in ordered + rest}, index=frame.index)


def _plain(value: Any) -> Any:
    """NumPy scalars as Python scalars, so keys compare and hash as plain values."""
    return value.item() if isinstance(value, np.generic) else value
