"""Finished runs on disk: one SQLite file per campaign, a row per run, committed in transactions of finished runs.

``<out>/runs.sqlite`` has one table, ``runs(run_id, meta, trace)``: the
run's metadata (spec, seed, per-budget results) as JSON and its trace as an
Arrow IPC stream (``pyarrow.ipc.open_stream(blob).read_all().to_pandas()``
reads it), in pages of ``PAGE_SIZE`` bytes. The database runs in
write-ahead-log mode: a commit is atomic, so an interruption, even
``kill -9``, leaves every committed run readable and
never a half-written one; a rerun of the same campaign reads the stored ids
and skips those runs. SQLite (Python's standard library) is the store
because it gives exactly that, one file for a whole campaign and
transactions, without a server.

A campaign folder written before the store was SQLite holds one Parquet
trace per run in ``<out>/runs/<run_id>.parquet``; opening the store copies
those it lacks into it (the files stay), so such a campaign resumes where it
stopped instead of running again.

Runs are encoded where they are made (``encode_runs`` runs in the worker
process), so the process that owns the file only inserts bytes; runs
encoded together convert their traces to Arrow as one table (each is
stored as a stream of its own, read as before). A ``RunRecord`` decodes its
trace on first use.

The store is read like every other input (bat.core.limits): a regular file
(and regular ``-wal``/``-shm`` companions) of at most ``MAX_STORE_BYTES``,
each stored run's metadata and trace at most ``MAX_RUN_BYTES``, the metadata
JSON within the depth and digit limits and with its fields typed
(``RUN_FIELDS``), its ``run_id`` the row's, its trace a readable Arrow
stream. A file that is not such a store, or a damaged run, is refused in one
line naming the file and the run (``read`` checks every run it returns, so
a campaign checks the runs it reuses before it runs anything).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.core.errors import DatasetError, InputLimitError
from bat.core.limits import MAX_RUN_BYTES, MAX_STORE_BYTES, loads, regular_file

if TYPE_CHECKING:
    import pandas as pd

#: one stored run: (run_id, metadata as JSON, trace as an Arrow IPC stream)
Encoded = tuple[str, str, bytes]
#: the message that ends an Arrow IPC stream (continuation marker, then a zero length)
_END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
FILE_NAME = "runs.sqlite"
#: where campaigns kept their runs before the SQLite store (one Parquet trace per run)
LEGACY_FOLDER = "runs"
_NUMBER = (int, float, type(None))
#: fields of a stored run's metadata that a campaign reads, with their JSON types (execute.execute_run)
RUN_FIELDS: dict[str, tuple[type, ...]] = {
    "run_id": (str,), "label": (str,), "benchmark": (str,), "gpu": (str,), "budgets": (list,),
    "per_budget": (dict,), "spec": (dict,), "best_known_ms": _NUMBER}


class RunRecord:
    """A finished run: its metadata (see ``execute.execute_run``) and its trace (decoded when first read)."""

    def __init__(self, meta: dict[str, Any], trace: pd.DataFrame | None = None, *,
                 encoded_trace: bytes | None = None) -> None:
        if (trace is None) == (encoded_trace is None):
            raise ValueError("RunRecord needs a trace or an encoded trace, not both")
        self.meta = meta
        self._trace = trace
        self._encoded = encoded_trace

    @property
    def trace(self) -> pd.DataFrame:
        if self._trace is None:
            assert self._encoded is not None  # one of the two, always (__init__)
            self._trace = decode_trace(self._encoded)
            self._encoded = None
        return self._trace

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])

    def encode(self) -> Encoded:
        """The run as it is stored."""
        return encode_runs([self])[0]

    @classmethod
    def decode(cls, row: Encoded) -> RunRecord:
        _, meta, trace = row
        return cls(json.loads(meta), encoded_trace=trace)

    @classmethod
    def checked(cls, row: Any, where: str) -> RunRecord:
        """A run as read from a store, checked (see the module docstring); DatasetError naming ``where``."""
        if not (isinstance(row, tuple) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[1], str)
                and isinstance(row[2], bytes)):
            raise DatasetError(f"{where}: a row that is not (run_id text, meta text, trace bytes)")
        import pyarrow as pa

        from bat.core.trace import check_trace_columns

        run_id, meta_text, blob = row
        where = f"{where}: run {run_id[:80]!r}"
        for what, size in (("metadata", len(meta_text)), ("trace", len(blob))):
            if size > MAX_RUN_BYTES:
                raise DatasetError(f"{where}: {what} of {size} bytes, over the limit of {MAX_RUN_BYTES}")
        try:
            meta = loads(meta_text, f"{where}: metadata", finite=False)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: metadata is not JSON ({exc})") from None
        except InputLimitError as exc:
            raise DatasetError(str(exc)) from None
        if not isinstance(meta, dict):
            raise DatasetError(f"{where}: metadata is a {type(meta).__name__}, not a JSON object")
        for key, types in RUN_FIELDS.items():
            value = meta.get(key)
            if key not in meta or not isinstance(value, types) or isinstance(value, bool):
                raise DatasetError(f"{where}: metadata field {key!r} missing or not "
                                   f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}")
        if meta["run_id"] != run_id:
            raise DatasetError(f"{where}: its metadata names run {meta['run_id'][:80]!r}")
        budgets = meta["budgets"]
        if not budgets or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in budgets) or \
                not all(isinstance(meta["per_budget"].get(str(b)), dict) for b in budgets):
            raise DatasetError(f"{where}: metadata 'budgets' is not a list of positive integers, each with its "
                               "result in 'per_budget'")
        try:
            table = pa.ipc.open_stream(blob).read_all()
        except Exception as exc:  # pyarrow raises several kinds for a blob that is not its stream
            raise DatasetError(f"{where}: the trace is not an Arrow stream ({type(exc).__name__})") from None
        check_trace_columns(table, f"{where}: its trace")  # typed before any arithmetic, as a trace file is
        return cls(meta, table.to_pandas())


def encode_runs(records: list[RunRecord], stacked: list[Stacked] | None = None) -> list[Encoded]:
    """Runs as they are stored, encoded together: their traces cost one conversion to Arrow (``encode_traces``;
    ``stacked``: the fresh traces already stacked, ``stack``)."""
    blobs = iter(encode_traces([r.trace for r in records if r._encoded is None], stacked))
    return [(r.run_id, _META_JSON.encode(r.meta),
             next(blobs) if r._encoded is None else r._encoded) for r in records]


#: what ``json.dumps(meta, sort_keys=True, default=str)`` makes, made once
_META_JSON = json.JSONEncoder(sort_keys=True, default=str)
#: traces stacked into one frame: their positions in the list stacked, and the frame (``stack``)
Stacked = tuple[list[int], "pd.DataFrame"]


def stack(frames: list[pd.DataFrame]) -> list[Stacked]:
    """``frames`` grouped by columns and types (so concatenating converts nothing), each group concatenated."""
    import pandas as pd

    groups: dict[tuple[tuple[object, ...], tuple[object, ...]], list[int]] = {}
    for i, frame in enumerate(frames):
        groups.setdefault((tuple(frame.columns.tolist()), tuple(frame.dtypes)), []).append(i)
    return [(members, pd.concat([frames[i] for i in members], ignore_index=True) if len(members) > 1
             else frames[members[0]]) for members in groups.values()]


def encode_traces(frames: list[pd.DataFrame], stacked: list[Stacked] | None = None) -> list[bytes]:
    """Traces as Arrow IPC streams (columns in order; no pandas metadata needed to read one back).

    Traces of the same columns and types are converted to Arrow together, as one table (``stack``; given as
    ``stacked`` where the caller has it), which costs about what one trace does; each stream is then that
    table's schema, the trace's rows of it and the end-of-stream mark. Together only where that gives each
    trace the Arrow types it has alone: traces with rows, whose columns are numbers, booleans or text (not
    ``object``, whose Arrow type depends on the values), text without a gap.
    """
    out: list[bytes] = [b""] * len(frames)
    for members, whole in stacked if stacked is not None else stack(frames):
        parts = [frames[i] for i in members]
        if len(members) == 1 or _joinable(parts, whole):
            blobs = _streams(parts, whole)
        else:
            blobs = [_streams([part], part)[0] for part in parts]
        for i, blob in zip(members, blobs, strict=True):
            out[i] = blob
    return out


def _joinable(parts: list[pd.DataFrame], whole: pd.DataFrame) -> bool:
    import numpy as np
    import pandas as pd

    if not all(len(part) for part in parts):
        return False
    for column in whole.columns:
        values = whole[column]
        if isinstance(values.dtype, pd.StringDtype):
            if values.hasnans:  # alone, an all-missing text column would have another Arrow type
                return False
        elif not (isinstance(values.dtype, np.dtype) and values.dtype.kind in "biuf"):
            return False
    return True


def _streams(parts: list[pd.DataFrame], whole: pd.DataFrame) -> list[bytes]:
    """The streams of ``parts``, the consecutive rows of ``whole``, converted to Arrow once."""
    import pyarrow as pa

    names = [str(c) for c in whole.columns.tolist()]
    batch = pa.RecordBatch.from_arrays([pa.array(whole[c].to_numpy()) for c in whole.columns], names=names)
    schema = batch.schema.serialize().to_pybytes()
    out, start = [], 0
    for part in parts:
        out.append(schema + batch.slice(start, len(part)).serialize().to_pybytes() + _END_OF_STREAM)
        start += len(part)
    return out


def decode_trace(blob: bytes) -> pd.DataFrame:
    import pyarrow as pa

    return pa.ipc.open_stream(blob).read_all().to_pandas()


#: the store's page size: a run's row (about 10 kB on a 50-evaluation trace) fits in one page, so an insert writes
#: no overflow pages (half the time of 4 kB pages per run); a store made with another page size keeps its own
PAGE_SIZE = 16384
SCHEMA = "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, meta TEXT NOT NULL, trace BLOB NOT NULL)"


def _create(path: Path) -> None:
    """Create the store with its schema atomically: made under a private name, then linked into place.

    A reader never sees ``runs.sqlite`` without its table (a kill or a second process between
    the file's creation and the table's); when two processes create it at once, one link wins and
    the other's copy is dropped.
    """
    pending = path.with_name(f".{path.name}.{os.getpid()}.creating")
    pending.unlink(missing_ok=True)
    db = sqlite3.connect(pending)
    try:
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before the first table: the file's page size from then on
        db.execute("PRAGMA journal_mode=WAL")  # kept in the file's header
        db.execute(SCHEMA)
        db.commit()
    finally:
        db.close()
    try:
        os.link(pending, path)
    except FileExistsError:  # another process made it first: theirs is complete
        pass
    except OSError:  # a file system without hard links
        if not path.exists():
            os.replace(pending, path)
    finally:
        pending.unlink(missing_ok=True)


class RunStore:
    """The ``runs.sqlite`` file of a campaign's output directory."""

    def __init__(self, out: str | Path) -> None:
        self.path = Path(out) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(self.path):
            _create(self.path)
        for companion in (self.path, self.path.with_name(FILE_NAME + "-wal"), self.path.with_name(FILE_NAME + "-shm")):
            if os.path.lexists(companion):  # a FIFO would block SQLite, a link to /dev/zero would feed it forever
                regular_file(companion, MAX_STORE_BYTES)
        try:
            self._db = sqlite3.connect(self.path, timeout=60)
            self._db.execute("PRAGMA synchronous=NORMAL")  # atomic commits; fsync at checkpoints
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(runs)")]
        except sqlite3.DatabaseError as exc:
            raise DatasetError(f"{self.path}: not a run store of bat compare ({exc})") from None
        if columns != ["run_id", "meta", "trace"]:
            self._db.close()
            raise DatasetError(f"{self.path}: not a run store of bat compare (table 'runs' has columns {columns[:8]}, "
                               "not run_id, meta, trace)")
        self._adopt_parquet_runs(Path(out) / LEGACY_FOLDER)

    def _adopt_parquet_runs(self, folder: Path) -> None:
        """Copy the runs of an older campaign folder (one Parquet trace per run) that the store lacks."""
        if not folder.is_dir():
            return
        from bat.core.trace import read_trace

        done, adopted = self.done_ids(), []
        for path in sorted(folder.glob("*.parquet")):
            if path.stem in done:
                continue
            frame, meta = read_trace(path)  # a damaged file is named by the error
            if str(meta.get("run_id")) != path.stem:
                raise DatasetError(f"{path}: not a run of this campaign (its run_id is {meta.get('run_id')!r})")
            adopted.append(RunRecord(meta, frame))
        self.write(encode_runs(adopted))

    def done_ids(self) -> set[str]:
        try:
            return {row[0] for row in self._db.execute("SELECT run_id FROM runs")}
        except sqlite3.DatabaseError as exc:
            raise DatasetError(f"{self.path}: a damaged run store ({exc})") from None

    def write(self, records: list[Encoded]) -> None:
        """Store encoded runs in one transaction (a run already stored is kept as it is)."""
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO runs VALUES (?, ?, ?)", records)

    def read(self, run_ids: list[str]) -> dict[str, RunRecord]:
        """The stored runs among ``run_ids``, by id, each checked (``RunRecord.checked``)."""
        out: dict[str, RunRecord] = {}
        wanted = list(run_ids)
        for start in range(0, len(wanted), 500):  # SQLite's limit on bound parameters
            part = wanted[start:start + 500]
            marks = ",".join("?" * len(part))
            try:
                rows = self._db.execute(f"SELECT run_id, meta, trace FROM runs WHERE run_id IN ({marks})", part)
                for row in rows:
                    record = RunRecord.checked(row, str(self.path))
                    out[record.run_id] = record
            except sqlite3.DatabaseError as exc:
                raise DatasetError(f"{self.path}: a damaged run store ({exc})") from None
        return out

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
