"""The Parquet footer reader (bat.core.parquetfooter) gives what pyarrow gives, and hands pyarrow what it cannot read.

``bat list`` reads every dataset's metadata with it, without pyarrow; these
tests hold it to pyarrow's answer on every shipped dataset and on files that
hypothesis makes, and check that a file it refuses still gets pyarrow's error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bat.core.datasetmeta import META_KEY, DatasetMeta, read_meta
from bat.core.errors import DatasetError
from bat.core.parquetfooter import FooterError, key_value_metadata

RESULTS = Path(__file__).resolve().parent.parent / "results"
SHIPPED = sorted(RESULTS.rglob("*.parquet"))


def arrow_metadata(path: Path) -> dict[bytes, bytes]:
    return dict(pq.read_schema(path).metadata or {})


def ours(path: Path) -> dict[bytes, bytes]:
    found = key_value_metadata(path)
    found.pop(b"ARROW:schema", None)  # pyarrow keeps its serialised schema out of the schema's metadata
    return found


def test_every_shipped_dataset_reads_as_pyarrow_reads_it() -> None:
    assert len(SHIPPED) >= 10
    for path in SHIPPED:
        assert ours(path) == arrow_metadata(path), path
        assert read_meta(path) == DatasetMeta.from_json(arrow_metadata(path)[META_KEY], str(path)), path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(meta=st.dictionaries(st.binary(min_size=1, max_size=40), st.binary(max_size=300), max_size=20),
       rows=st.integers(0, 300), group=st.integers(1, 100), text=st.booleans())
def test_files_pyarrow_writes_read_the_same(tmp_path: Path, meta: dict[bytes, bytes], rows: int, group: int,
                                            text: bool) -> None:
    """Any keys and values (many keys: the list's long header; long values: multi-byte lengths), row groups,
    columns of several types with their statistics."""
    columns = {"n": list(range(rows)), "x": [i / 3 for i in range(rows)], "ok": [i % 2 == 0 for i in range(rows)]}
    if text:
        columns["s"] = [f"v{i}" for i in range(rows)]
    table = pa.table(columns).replace_schema_metadata(meta)
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, row_group_size=group)
    assert ours(path) == arrow_metadata(path)


@pytest.mark.parametrize("content", [b"", b"PAR1", b"PAR1" + b"\0" * 20 + b"PAR1", b"x" * 40 + b"\xff\xff\xff\x7fPAR1",
                                     b'{"cache": 1}' + b" " * 20])
def test_what_it_cannot_read_is_a_footer_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    with pytest.raises(FooterError):
        key_value_metadata(path)


def test_a_cut_footer_is_refused_not_misread(tmp_path: Path) -> None:
    data = SHIPPED[0].read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - length:-8]
    for cut in (1, length // 3, length // 2, length - 1):
        path = tmp_path / "cut.parquet"
        path.write_bytes(data[:-8 - length] + footer[:cut] + cut.to_bytes(4, "little") + b"PAR1")
        with pytest.raises(FooterError):
            key_value_metadata(path)


def test_a_file_it_refuses_gets_pyarrows_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.parquet"
    path.write_text(json.dumps({"cache": {}}))
    with pytest.raises(DatasetError, match="not a BAT dataset but JSON"):
        read_meta(path)
    path.write_bytes(b"PAR1" + b"\0" * 30)
    with pytest.raises(DatasetError, match="not a Parquet dataset"):
        read_meta(path)


def test_a_parquet_file_without_our_key_is_named(tmp_path: Path) -> None:
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"n": [1, 2]}), path)
    with pytest.raises(DatasetError, match="no BAT metadata"):
        read_meta(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_footer_is_read_or_refused_never_a_crash(tmp_path: Path, data: st.DataObject) -> None:
    """Bytes of a real footer changed at random: a dict of bytes, or a FooterError (no IndexError, no
    RecursionError, no endless loop)."""
    raw = SHIPPED[0].read_bytes()
    length = int.from_bytes(raw[-8:-4], "little")
    footer = bytearray(raw[-8 - length:-8])
    for _ in range(data.draw(st.integers(1, 8))):
        footer[data.draw(st.integers(0, length - 1))] = data.draw(st.integers(0, 255))
    path = tmp_path / "damaged.parquet"
    path.write_bytes(b"PAR1" + bytes(footer) + length.to_bytes(4, "little") + b"PAR1")
    try:
        found = key_value_metadata(path)
    except FooterError:
        return
    assert all(isinstance(k, bytes) and isinstance(v, bytes) for k, v in found.items())
