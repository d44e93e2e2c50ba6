"""Files for the bad-input battery (bad_input_cases.py): the repository's own space files and data, changed.

Each builder returns either the text of a file or a function that writes one
at a given path (for Parquet and compressed files).
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PNPOLY_DATA = ROOT / "results" / "bat2-kerneltuner" / "pnpoly_RTX_3090.parquet"
Builder = Callable[[Path], None]


def _space() -> dict[str, Any]:
    return json.loads((ROOT / "benchmarks" / "pnpoly" / "space.json").read_text())


def space(change: Callable[[dict[str, Any]], Any]) -> str:
    """The pnpoly space file with ``change`` applied (kernel and launch dropped: none of them matters)."""
    raw = _space()
    raw.pop("kernel")
    raw.pop("launch")
    change(raw)
    return json.dumps(raw)


def constraint(expr: Any) -> str:
    return space(lambda s: s.update(constraints=[{"expr": expr, "why": "test"}]))


def command(section: Any) -> str:
    return space(lambda s: s.update(command=section))


def run_command(**changes: Any) -> str:
    return command({"run": "true", "objective": "wall", **changes})


def dataset(change: Callable[[Any], Any]) -> Builder:
    """A copy of the pnpoly RTX 3090 dataset with ``change(dataset)`` applied."""
    def build(path: Path) -> None:
        from bat.core.dataset import Dataset

        ds = Dataset.load(PNPOLY_DATA)
        change(ds)
        ds.save(path)
    return build


def parquet_without(column: str) -> Builder:
    def build(path: Path) -> None:
        import pyarrow.parquet as pq

        table = pq.read_table(PNPOLY_DATA)
        pq.write_table(table.drop_columns([column]), path)
    return build


def parquet_column(column: str, value: Any) -> Builder:
    """The pnpoly dataset with every row of ``column`` set to ``value`` (any Arrow type), its metadata kept."""
    def build(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pq.read_table(PNPOLY_DATA)
        values = value(table.num_rows) if callable(value) else [value] * table.num_rows
        changed = table.set_column(table.schema.get_field_index(column), column, pa.array(values))
        pq.write_table(changed.replace_schema_metadata(table.schema.metadata), path)
    return build


def cache(change: Callable[[dict[str, Any]], Any] = lambda c: None, *, gz: bool = False,
          truncate: int | None = None) -> Builder:
    """The pnpoly data as a Kernel Tuner cache, changed, optionally gzip-compressed and cut short."""
    def build(path: Path) -> None:
        from bat.core.dataset import Dataset
        from bat.formats.kerneltuner import to_cache

        raw = to_cache(Dataset.load(PNPOLY_DATA))
        raw["cache"] = dict(list(raw["cache"].items())[:20])
        change(raw)
        data = json.dumps(raw).encode()
        if gz:
            data = gzip.compress(data)
        path.write_bytes(data[:truncate] if truncate else data)
    return build


def t4(change: Callable[[dict[str, Any]], Any]) -> Builder:
    def build(path: Path) -> None:
        from bat.core.dataset import Dataset
        from bat.formats.t4 import to_t4

        raw = to_t4(Dataset.load(PNPOLY_DATA))
        raw["results"] = raw["results"][:20]
        change(raw)
        path.write_text(json.dumps(raw))
    return build


def ktt(change: Callable[[dict[str, Any]], Any]) -> Builder:
    def build(path: Path) -> None:
        src = ROOT / "results" / "ktt-coulomb" / "coulomb_RTX_2080_Ti.parquet"
        from bat.core.dataset import Dataset
        from bat.formats.ktt import to_ktt

        raw = to_ktt(Dataset.load(src))
        raw["Results"] = raw["Results"][:10]
        change(raw)
        path.write_text(json.dumps(raw))
    return build


def baseline(change: Callable[[list[dict[str, Any]]], Any]) -> str:
    obs = [{"label": "r", "benchmark": "pnpoly", "gpu": "RTX_3090", "budget": 10, "perf": 0.5, "repeat": r}
           for r in range(3)]
    change(obs)
    return json.dumps({"observations": obs})


def copy_of(src: Path) -> Builder:
    return lambda path: shutil.copy(src, path)


def setitem(path: str, value: Any) -> Callable[[Any], None]:
    """Set ``a.b[0].c`` in a nested structure (a change for the builders)."""
    def change(raw: Any) -> None:
        *head, last = _path(path)
        target = raw
        for key in head:
            target = target[key]
        target[last] = value
    return change


def delitem(path: str) -> Callable[[Any], None]:
    def change(raw: Any) -> None:
        *head, last = _path(path)
        target = raw
        for key in head:
            target = target[key]
        del target[last]
    return change


def _path(text: str) -> list[Any]:
    return [int(p) if p.lstrip("-").isdigit() else p for p in text.replace("[", ".").replace("]", "").split(".")]


def first_cache_record(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    return lambda raw: change(next(iter(raw["cache"].values())))


def set_meta(**values: Any) -> Callable[[Any], None]:
    return lambda ds: [setattr(ds.meta, k, v) for k, v in values.items()]


def t1(change: Callable[[dict[str, Any]], Any]) -> str:
    """The hotspot T1 test file (tests/fixtures/t1) with ``change`` applied."""
    raw = json.loads((ROOT / "tests" / "fixtures" / "t1" / "hotspot_milo.T1.json").read_text())
    change(raw)
    return json.dumps(raw)
