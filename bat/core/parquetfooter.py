"""The key-value metadata of a Parquet file, read from its footer without pyarrow (for ``bat list``).

A Parquet file ends with its footer (a Thrift ``FileMetaData`` in the compact
protocol), the footer's length (4 bytes, little-endian) and ``PAR1``. Only
field 5 of ``FileMetaData``, the list of ``KeyValue`` (key: field 1, value:
field 2), is decoded; every other field is skipped by its wire type. Anything
this reader does not take (an encrypted footer, a truncated or malformed one)
is a ``FooterError``: the caller then asks pyarrow, which reads or names the
fault as it always did.

Hand-written because the libraries that read this footer (pyarrow, fastparquet)
cost more to import than ``bat list`` is allowed in all (issue 45: under
``import kernel_tuner``); the one field read here is a small, fixed part of
the format, and tests/test_parquet_footer.py holds it equal to pyarrow's reading.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

MAGIC = b"PAR1"
#: Thrift compact wire types: booleans held in the field header, fixed and variable integers, a double,
#: bytes, containers
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
_KEY_VALUE_METADATA = 5
#: nesting deeper than any Parquet footer has: a malformed footer is refused, not a RecursionError
_MAX_DEPTH = 32


class FooterError(ValueError):
    """A footer this reader does not decode (pyarrow is asked instead)."""


def key_value_metadata(path: Path) -> dict[bytes, bytes]:
    """The footer's key-value metadata: ``pyarrow.parquet.read_schema(path).metadata`` plus pyarrow's own
    ``ARROW:schema`` entry."""
    with path.open("rb") as f:
        size = f.seek(0, 2)
        if size < 2 * len(MAGIC) + 4:
            raise FooterError(f"{size} bytes: too short for a Parquet file")
        f.seek(size - 8)
        tail = f.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] != MAGIC or length > size - 12:
            raise FooterError("no plain Parquet footer at the end")
        f.seek(size - 8 - length)
        footer = f.read(length)
    return _Compact(footer).file_key_values()


class _Compact:
    """A cursor over Thrift compact-protocol bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise FooterError("footer ends inside a value")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        out = shift = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if b < 0x80:
                return out
            shift += 7
            if shift > 63:
                raise FooterError("a variable-length integer over 64 bits")

    def binary(self) -> bytes:
        n = self.varint()
        if self.pos + n > len(self.data):
            raise FooterError("footer ends inside a string")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def fields(self) -> Iterator[tuple[int, int]]:
        """(field id, wire type) of each field of a struct, up to its stop byte; read each value before the next."""
        last = 0
        while (header := self.byte()) != 0:
            delta, kind = header >> 4, header & 0x0F
            if delta:
                last += delta
            else:
                zigzag = self.varint()
                last = (zigzag >> 1) ^ -(zigzag & 1)
            yield last, kind

    def list_header(self) -> tuple[int, int]:
        header = self.byte()
        size = header >> 4
        return (self.varint() if size == 15 else size), header & 0x0F

    def skip(self, kind: int, depth: int = 0, in_container: bool = False) -> None:
        """Pass over one value of wire type ``kind`` (a boolean in a list or map is a byte of its own)."""
        if depth > _MAX_DEPTH:
            raise FooterError("footer nested too deep")
        if kind in (_TRUE, _FALSE):
            if in_container:
                self.byte()
        elif kind == _BYTE:
            self.byte()
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            if self.pos + 8 > len(self.data):
                raise FooterError("footer ends inside a double")
            self.pos += 8
        elif kind == _BINARY:
            self.binary()
        elif kind in (_LIST, _SET):
            size, element = self.list_header()
            for _ in range(size):
                self.skip(element, depth + 1, True)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4, depth + 1, True)
                    self.skip(types & 0x0F, depth + 1, True)
        elif kind == _STRUCT:
            for _, inner in self.fields():
                self.skip(inner, depth + 1)
        else:
            raise FooterError(f"unknown wire type {kind}")

    def file_key_values(self) -> dict[bytes, bytes]:
        out: dict[bytes, bytes] = {}
        for field, kind in self.fields():
            if field != _KEY_VALUE_METADATA or kind != _LIST:
                self.skip(kind)
                continue
            size, element = self.list_header()
            if element != _STRUCT:
                raise FooterError("key_value_metadata is not a list of structs")
            for _ in range(size):
                key: bytes | None = None
                value = b""
                for inner, inner_kind in self.fields():
                    if inner in (1, 2) and inner_kind == _BINARY:
                        key, value = (self.binary(), value) if inner == 1 else (key, self.binary())
                    else:
                        self.skip(inner_kind, 1)
                if key is None:
                    raise FooterError("a KeyValue without its key")
                out[key] = value
        return out
