"""Every field of every JSON input, given a value of every other type (issue 43, class 1, walked, not drawn).

The fuzzer (fuzz_harness.py) draws random mutations; this walk is exhaustive over a small valid file of
each JSON format (space, T1, Kernel Tuner cache plain and gzip, T4, KTT, compare baseline, a hub brute force
for ``hypertune --hub``, a ``--tuner-options`` file): each field at
every level, and the whole document, is replaced in turn by each value of ``SWAPS`` (null, a boolean, a
text, numbers of each kind, an empty and a nested list, a nested object) or dropped, and the
file is also cut short at several points and given empty. Each input goes through the fuzzer's own check
for its format, so the property is the fuzzer's: accepted with a result that reads back, or refused in
one line with exit 2 and nothing written; never an internal error.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fuzz_harness import Format, _apply, _gz, formats

#: a value of each JSON type, and the numbers readers get wrong (0, negative, fractional, huge)
SWAPS: list[Any] = [None, True, "x", 0, -1, 0.5, 1e300, [], [[1, "a"]], {"a": {"b": 1}}]
#: formats whose examples are JSON documents (the others are Parquet metadata, protocol lines, command lines)
JSON_FORMATS = ("space", "t1", "kerneltuner", "kerneltuner-gz", "t4", "ktt", "baseline", "hub", "tuner-options")
#: children of a list or of a map of records walked (records are alike: the first stands for the rest)
FIRST = 1
#: an object of more than this many objects is a map of records (a cache's), not a document's sections
RECORDS = 4


def _fields(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Paths to every field: all keys of an object, the first ``FIRST`` items of a list or of an object whose
    values are all objects (a map of records)."""
    out = [prefix]
    if isinstance(doc, dict):
        items = list(doc.items())
        if len(items) > RECORDS and all(isinstance(v, dict) for _, v in items):
            items = items[:FIRST]
        for key, value in items:
            out += _fields(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc[:FIRST]):
            out += _fields(value, (*prefix, i))
    return out


def _base(name: str) -> Any:
    from fuzz_harness import baseline_base, cache_base, ktt_base, space_base, t1_base, t4_base

    return {"space": space_base, "t1": t1_base, "kerneltuner": cache_base, "kerneltuner-gz": cache_base,
            "t4": t4_base, "ktt": ktt_base, "baseline": baseline_base, "hub": _hub_base,
            "tuner-options": _options_base}[name]()


HUB = Path(__file__).parent / "fixtures" / "benchmark_hub" / "extra" / "hyperparamtuning_paper_bruteforce_pso.json"


def _hub_base() -> Any:
    return json.loads(HUB.read_text())


def _options_base() -> Any:
    from bat.core.hyperparams import OPTIONS_FORMAT

    return {"format": OPTIONS_FORMAT, "tuner": "reference:random", "options": {"batch": 1}}


def _check_hub(data: bytes, folder: Path) -> None:
    """``bat hypertune --hub``'s reader: returns, or raises a one-line BatError."""
    from fuzz_harness import library_call

    from bat.analysis.hypertune.hub import read_hub
    from bat.analysis.hypertune.space import declared

    (folder / "hub.json").write_bytes(data)
    library_call(lambda: read_hub(folder / "hub.json", "kernel_tuner:pso", declared("kernel_tuner:pso")), "hub")


def _check_options_file(data: bytes, folder: Path) -> None:
    """``bat run --tuner-options``: a run, or one line and nothing written."""
    from fuzz_harness import run_cli

    run_cli(folder, {"o.json": data}, ["run", "-t", "reference:random", "-b", "pnpoly", "-n", "3",
                                       "--tuner-options", "o.json", "-o", "r.parquet"])


def _shrunk(name: str) -> Any:
    """The base, a T1 file cut to its first three parameters (and the conditions among them)."""
    doc = _base(name)
    if name == "t1":
        params = doc["ConfigurationSpace"]["TuningParameters"]
        doc["ConfigurationSpace"]["TuningParameters"] = params[:3]
        names = {p["Name"] for p in params[:3]}
        doc["ConfigurationSpace"]["Conditions"] = [c for c in doc["ConfigurationSpace"].get("Conditions", [])
                                                   if set(c.get("Parameters", [])) <= names]
    return doc


def _inputs(name: str) -> list[tuple[str, bytes]]:
    base = _shrunk(name)
    encode = (lambda d: _gz(json.dumps(d).encode())) if name.endswith("-gz") else (lambda d: json.dumps(d).encode())
    out = []
    for path in _fields(base):
        for value in SWAPS:
            out.append((f"{list(path)}={value!r}", encode(_apply(copy.deepcopy(base), path, "set", value))))
        if path:
            out.append((f"{list(path)} dropped", encode(_apply(copy.deepcopy(base), path, "drop", None))))
    whole = encode(base)
    out += [(f"cut at {n} of {len(whole)} bytes", whole[:n]) for n in sorted({0, 1, len(whole) // 3,
                                                                              len(whole) // 2, len(whole) - 1})]
    return out


#: the fuzzer's formats, and two JSON inputs it does not draw (a hub brute force, a tuner options file)
FORMATS: dict[str, Format] = {f.name: f for f in formats()} | {
    "hub": Format("hub", lambda: None, _check_hub),  # type: ignore[arg-type,return-value]
    "tuner-options": Format("tuner-options", lambda: None, _check_options_file),  # type: ignore[arg-type,return-value]
}


def test_the_walk_reaches_every_level():
    paths = _fields(_shrunk("kerneltuner"))
    assert () in paths and ("cache",) in paths
    assert max(len(p) for p in paths) >= 3  # a record's field inside the cache
    assert set(JSON_FORMATS) <= set(FORMATS)


@pytest.mark.slow
@pytest.mark.parametrize("name", JSON_FORMATS)
def test_every_field_of_every_type_is_read_or_refused_in_one_line(name: str, tmp_path: Path) -> None:
    check = FORMATS[name].check
    failures = []
    for i, (what, data) in enumerate(_inputs(name)):
        folder = tmp_path / str(i)
        folder.mkdir()
        try:
            check(data, folder)
        except AssertionError as exc:
            failures.append(f"{what}: {str(exc).splitlines()[0][:300]}")
    assert not failures, f"{len(failures)} inputs broke the property:\n" + "\n".join(failures[:20])


#: an Arrow column of each kind, ``n`` rows long
ARROW_KINDS: dict[str, Any] = {
    "null": lambda pa, n: pa.nulls(n), "text": lambda pa, n: pa.array(["x"] * n),
    "int": lambda pa, n: pa.array([1] * n), "negative": lambda pa, n: pa.array([-1.5] * n),
    "infinite": lambda pa, n: pa.array([float("inf")] * n), "bool": lambda pa, n: pa.array([True] * n),
    "list of text": lambda pa, n: pa.array([["a"]] * n), "nested list": lambda pa, n: pa.array([[[1.0]]] * n),
    "struct": lambda pa, n: pa.array([{"a": 1}] * n),
    "half empty": lambda pa, n: pa.array([None if i % 2 else "ok" for i in range(n)]),
}


def _dataset_with(column: str, kind: str) -> bytes:
    """The pnpoly dataset (cut to 64 rows) with every row of ``column`` of the Arrow ``kind``, its metadata kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bad_input_builders import PNPOLY_DATA

    table = pq.read_table(PNPOLY_DATA)
    meta = table.schema.metadata
    table = table.slice(0, 64)
    table = table.set_column(table.schema.get_field_index(column), column, ARROW_KINDS[kind](pa, table.num_rows))
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    return sink.getvalue().to_pybytes()


@pytest.mark.slow
def test_every_dataset_column_of_every_arrow_type_is_read_or_refused_in_one_line(tmp_path: Path) -> None:
    """A dataset is typed on read (bat.core.dataset.check_column_types): a column of any other type, a negative
    or infinite compile or benchmark time, a nested extra column, are one line; nothing reaches arithmetic."""
    import pyarrow.parquet as pq
    from bad_input_builders import PNPOLY_DATA
    from fuzz_harness import library_call, run_cli

    from bat.core.dataset import Dataset

    failures = []
    for column in pq.read_schema(PNPOLY_DATA).names:
        for kind in ARROW_KINDS:
            folder = tmp_path / f"{column}-{kind}".replace(" ", "-")
            folder.mkdir()
            data = _dataset_with(column, kind)
            (folder / "lib.parquet").write_bytes(data)
            try:
                library_call(lambda f=folder: Dataset.load(f / "lib.parquet"), f"{column} {kind}")
                run_cli(folder, {"d.parquet": data},
                        ["run", "-t", "reference:random", "-b", "pnpoly", "--dataset", "d.parquet", "-n", "5",
                         "-o", "r.parquet"])
            except AssertionError as exc:
                failures.append(f"{column} as {kind}: {str(exc).splitlines()[0][:300]}")
    assert not failures, f"{len(failures)} columns broke the property:\n" + "\n".join(failures[:20])


def test_a_dataset_listing_its_configurations_twice_is_analysed(tmp_path, monkeypatch, capsys):
    """Every row one configuration (its tile_size column made constant): the duplicates are quarantined and the
    portability matrix reads the first row of each (it compared a Series with a text: an internal error)."""
    from bat.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    (tmp_path / "d.parquet").write_bytes(_dataset_with("tile_size", "int"))
    code = main(["analyze", "--dataset", "d.parquet", "--no-importance", "-o", "an"])
    out, err = capsys.readouterr()
    assert code in (0, 3), err
    assert "internal error" not in err and "quarantined" in out


def test_every_trace_column_of_every_arrow_type_is_read_or_refused_in_one_line(tmp_path, monkeypatch, capsys):
    """A trace is typed on read too (bat.core.trace.check_trace_columns), for bat analyze --trace and a
    campaign's stored runs: a column of another type, a measured time no GPU gives, is one line."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from fuzz_harness import library_call

    from bat.cli import main
    from bat.core.errors import DatasetError
    from bat.core.trace import read_trace

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path / "bat-data"))
    assert main(["run", "-t", "reference:random", "-b", "pnpoly", "-n", "8", "-o", "t.parquet"]) == 0
    capsys.readouterr()
    table = pq.read_table(tmp_path / "t.parquet")
    for column in table.column_names:
        for kind, make in ARROW_KINDS.items():
            changed = table.set_column(table.schema.get_field_index(column), column, make(pa, table.num_rows))
            path = tmp_path / f"{column}-{kind}.parquet".replace(" ", "-")
            pq.write_table(changed.replace_schema_metadata(table.schema.metadata), path)
            library_call(lambda p=path: read_trace(p), f"trace {column} {kind}")
    for column, kind in (("charged", "text"), ("objective_ms", "negative"), ("best_so_far_ms", "infinite"),
                         ("step", "list of text"), ("status", "null")):
        with pytest.raises(DatasetError, match=column):
            read_trace(tmp_path / f"{column}-{kind}.parquet".replace(" ", "-"))
