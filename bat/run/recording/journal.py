"""Checkpoint journal: append-only JSON lines, one per finished configuration.

``bat record`` keeps one per recording, ``bat run`` on a measuring backend
one per run (bat.run.recording.run_journal); the header's ``kind`` tells them
apart. The first line is a header (what is being measured, on which device);
every later line is one finished configuration, written, flushed and fsynced
before the next one starts, so a recording killed at any moment (``kill -9``
included) loses at most the configuration it was measuring. Only the last
line can be torn by a kill; opening the journal again cuts it off (the
documented recovery: a journal whose last line is not complete JSON loses that
line and nothing else). A journal is read within the limits of every reader
(bat.core.limits: a regular file of at most ``MAX_JOURNAL_BYTES``, each line
within the JSON depth and digit limits), and its header and every record are
checked against the fields its kind writes, so a damaged or hand-made journal
is refused in one line naming the file, the line and the field. An open
journal holds an exclusive ``flock`` on its file, so a second process
writing the same journal is refused instead of appending beside the first.

Hand-written because the job is a dozen lines of ``os.write`` + ``fsync``:
Parquet parts would make many small files, and SQLite (in the standard
library; the campaign store uses it) makes a record durable with the same
fsync per commit, no more cheaply, while a journal of JSON lines stays
readable with any text tool after a crash.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from bat.core.atomic import publish
from bat.core.dataset import Status
from bat.core.errors import DatasetError, InputLimitError
from bat.core.limits import MAX_JOURNAL_BYTES, loads, regular_file

KIND = "bat-record-journal"  # the default kind: a recording's journal
VERSION = 1

#: a JSON number or null (NaN and infinities included: a failed measurement writes NaN)
_NUMBER = (int, float, type(None))
#: the fields of a record of a recording's journal (bat.run.recording.engine.to_record), with their JSON types
RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "id": (int,), "config": (dict,), "status": (str,), "objective_ms": _NUMBER, "times_ms": (list,),
    "compile_ms": _NUMBER, "benchmark_ms": _NUMBER, "message": (str,), "extra": (dict,)}
#: the fields of a recording journal's header that a resume reads
HEADER_FIELDS: dict[str, tuple[type, ...]] = {"meta": (dict,)}
_STATUSES = {s.value for s in Status}
#: no field required (every line still an object)
_NONE: Mapping[str, tuple[type, ...]] = {}


class JournalBusy(DatasetError):
    """The journal is locked by another live BAT process."""


class Journal:
    """An open journal: its header and the records already in it; ``append`` adds one durably."""

    def __init__(self, path: Path, header: dict[str, Any], records: list[dict[str, Any]], fd: int) -> None:
        self.path = path
        self.header = header
        self.records = records
        self._fd: int | None = fd  # holds the journal's lock until close

    # -- opening ---------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, header: Mapping[str, Any], *, kind: str = KIND) -> Journal:
        """Start a new journal at ``path`` (refused when one exists: resume it or remove it)."""
        path = Path(path)
        if path.exists():
            raise DatasetError(f"{path}: a journal of an earlier recording exists; "
                               "resume it (--resume) or remove it")
        full = {"kind": kind, "version": VERSION, **header}

        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(full, sort_keys=True) + "\n")
                fh.flush()
                os.fsync(fh.fileno())

        publish(path, write, overwrite=False)  # the header appears whole or not at all, never twice
        _fsync_dir(path.parent)
        return cls(path, full, [], _locked(path))

    @classmethod
    def open(cls, path: str | Path, *, kind: str = KIND, fields: Mapping[str, tuple[type, ...]] = _NONE,
             header_fields: Mapping[str, tuple[type, ...]] = _NONE) -> Journal:
        """Read an existing journal of ``kind`` whose records have ``fields`` (and header ``header_fields``),
        cutting off a torn last line."""
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: no journal to resume")
        try:  # a link to /dev/zero or a FIFO is refused before it is opened
            regular_file(path, MAX_JOURNAL_BYTES)
        except InputLimitError as exc:
            raise DatasetError(str(exc)) from None
        fd = _locked(path)
        try:
            return cls._read(path, fd, kind, fields, header_fields)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def read(cls, path: str | Path, *, kind: str = KIND, fields: Mapping[str, tuple[type, ...]] = _NONE,
             header_fields: Mapping[str, tuple[type, ...]] = _NONE) -> Journal:
        """The journal's header and records, its lock released at once (nothing can be appended)."""
        with cls.open(path, kind=kind, fields=fields, header_fields=header_fields) as journal:
            return journal

    @classmethod
    def _read(cls, path: Path, fd: int, kind: str, fields: Mapping[str, tuple[type, ...]],
              header_fields: Mapping[str, tuple[type, ...]]) -> Journal:
        size = os.fstat(fd).st_size  # the file opened, not the name: it may have been swapped since the check
        if size > MAX_JOURNAL_BYTES:
            raise DatasetError(f"{path}: {size} bytes, over the limit of {MAX_JOURNAL_BYTES} bytes of a journal")
        data = os.pread(fd, size, 0)
        lines: list[Any] = []
        good_end = 0
        for raw, end in _complete_lines(data):
            where = f"{path}: line {len(lines) + 1}"
            try:
                lines.append(loads(raw, where, finite=False))
            except json.JSONDecodeError as exc:
                if end == len(data):  # a torn last line that happens to end in a newline
                    break
                raise DatasetError(f"{where} is not JSON: {exc}") from exc
            except InputLimitError as exc:
                raise DatasetError(str(exc)) from None
            good_end = end
        header = lines[0] if lines else None
        if not isinstance(header, dict) or header.get("kind") != kind:
            raise DatasetError(f"{path}: not a journal of kind {kind!r} (no such header line)")
        if header.get("version") != VERSION:
            raise DatasetError(f"{path}: journal version {str(header.get('version'))[:40]} != {VERSION}")
        _check_fields(header, header_fields, f"{path}: line 1 (the header)")
        for number, record in enumerate(lines[1:], start=2):
            _check_fields(record, fields, f"{path}: line {number}")
        if good_end < len(data):  # cut only a journal that is otherwise whole: a refused one stays as it was
            os.ftruncate(fd, good_end)
            os.fsync(fd)
        return cls(path, header, lines[1:], fd)

    # -- writing ---------------------------------------------------------------
    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record and make it durable before returning."""
        if self._fd is None:
            raise DatasetError(f"{self.path}: the journal is closed")
        line = (json.dumps(record, sort_keys=True, allow_nan=True) + "\n").encode()
        os.write(self._fd, line)
        os.fsync(self._fd)
        self.records.append(dict(record))

    def close(self) -> None:
        """Release the journal (and its lock); the records stay readable."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def remove(self) -> None:
        """Delete the journal (after its records were merged into a complete dataset)."""
        self.close()
        self.path.unlink(missing_ok=True)


def _check_fields(line: Any, fields: Mapping[str, tuple[type, ...]], where: str) -> None:
    """A journal line: an object whose ``fields`` have their JSON types (a ``status`` one BAT knows)."""
    if not isinstance(line, dict):
        raise DatasetError(f"{where}: a {type(line).__name__}, not a JSON object")
    for key, types in fields.items():
        value = line.get(key, _ABSENT)
        if value is _ABSENT:
            raise DatasetError(f"{where}: no field {key!r}")
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise DatasetError(f"{where}: field {key!r} is a {type(value).__name__}, not "
                               f"{' or '.join('null' if t is type(None) else t.__name__ for t in types)}")
        if key == "status" and value not in _STATUSES:
            raise DatasetError(f"{where}: status {str(value)[:40]!r} is not one of {sorted(_STATUSES)}")


_ABSENT = object()


def _locked(path: Path) -> int:
    """An appending descriptor of the journal holding its exclusive lock (dropped when closed or at death)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise JournalBusy(f"{path}: another BAT process is writing this journal; wait for it to finish "
                           "or write into another --out") from None
    return fd


def _complete_lines(data: bytes) -> Iterator[tuple[bytes, int]]:
    """(line, offset just after its newline) for every newline-terminated line."""
    start = 0
    while (nl := data.find(b"\n", start)) >= 0:
        yield data[start:nl], nl + 1
        start = nl + 1


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
