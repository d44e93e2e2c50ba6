"""Checkpoint journal: append-only JSON lines, one per finished configuration.

``bat record`` keeps one per recording, ``bat run`` on a measuring backend
one per run (bat.run.recording.run_journal); the header's ``kind`` tells them
apart. The first line is a header (what is being measured, on which device);
every later line is one finished configuration, written, flushed and fsynced
before the next one starts, so a recording killed at any moment (``kill -9``
included) loses at most the configuration it was measuring. Only the last
line can be torn by a kill; opening the journal again cuts it off. An open
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
from bat.core.errors import DatasetError

KIND = "bat-record-journal"  # the default kind: a recording's journal
VERSION = 1


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
    def open(cls, path: str | Path, *, kind: str = KIND) -> Journal:
        """Read an existing journal of ``kind``, cutting off a torn last line."""
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: no journal to resume")
        fd = _locked(path)
        try:
            return cls._read(path, fd, kind)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def read(cls, path: str | Path, *, kind: str = KIND) -> Journal:
        """The journal's header and records, its lock released at once (nothing can be appended)."""
        with cls.open(path, kind=kind) as journal:
            return journal

    @classmethod
    def _read(cls, path: Path, fd: int, kind: str) -> Journal:
        data = path.read_bytes()
        lines, good_end = [], 0
        for raw, end in _complete_lines(data):
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError as exc:
                if end == len(data):  # a torn last line that happens to end in a newline
                    break
                raise DatasetError(f"{path}: line {len(lines) + 1} is not JSON: {exc}") from exc
            good_end = end
        if good_end < len(data):
            os.ftruncate(fd, good_end)
            os.fsync(fd)
        if not lines or lines[0].get("kind") != kind:
            raise DatasetError(f"{path}: not a journal of kind {kind!r} (no such header line)")
        header = lines[0]
        if header.get("version") != VERSION:
            raise DatasetError(f"{path}: journal version {header.get('version')} != {VERSION}")
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


def _locked(path: Path) -> int:
    """An appending descriptor of the journal holding its exclusive lock (dropped when closed or at death)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DatasetError(f"{path}: another BAT process is writing this journal; wait for it to finish "
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
