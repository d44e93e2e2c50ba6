"""A dataset's metadata (where, when and how it was measured) and reading it from a Parquet footer.

The metadata travels in the Parquet schema metadata under the key ``bat``
(``bat.core.dataset`` writes it). ``read_meta`` reads only the footer, with
``bat.core.parquetfooter``, so listing datasets loads neither NumPy nor
pyarrow; a footer that reader does not decode goes to pyarrow, whose error
names what is wrong with the file.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.core.errors import DatasetError, InputLimitError
from bat.core.limits import MAX_DATA_BYTES, loads, regular_file
from bat.core.parquetfooter import FooterError, key_value_metadata

if TYPE_CHECKING:
    from bat.core.benchmark import Benchmark

META_KEY = b"bat"
FORMAT_VERSION = 1


@dataclass
class DatasetMeta:
    """Where, when and how a dataset was measured."""

    benchmark: str
    space_hash: str
    gpu: str
    gpu_name: str = ""
    #: where ``gpu`` and ``gpu_name`` came from (the file's device name, --gpu, the file name, ...)
    gpu_source: str = ""
    problem_size: dict[str, Any] = field(default_factory=dict)
    input_recipe: dict[str, Any] = field(default_factory=dict)
    driver: str = ""
    toolkit: str = ""
    date: str = ""
    source: str = ""
    licence: str = ""
    partial: bool = False
    n_expected: int | None = None
    notes: str = ""
    #: the space file of a benchmark that is not registered under its name (a space the data came with, a
    #: space file given by path, an inferred space), so the dataset needs nothing else; None for a registered one
    space: dict[str, Any] | None = None
    #: where ``space`` was read from ("" when it was inferred or registered)
    space_file: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def vendor(self) -> str:
        """The GPU's vendor ("NVIDIA", "AMD", "" unknown): its facts by id, else its device name's words."""
        from bat.core.gpus import gpu_vendor

        return gpu_vendor(self.gpu, self.gpu_name)

    def to_json(self) -> str:
        return json.dumps({"format_version": FORMAT_VERSION, **asdict(self)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes, where: str = "<metadata>") -> DatasetMeta:
        try:
            raw = loads(text, where)
        except ValueError as exc:  # malformed, or over a limit of bat.core.limits
            raise DatasetError(f"{where}: metadata is not JSON within the limits: {exc}") from None
        if not isinstance(raw, dict):
            raise DatasetError(f"{where}: metadata is a JSON {type(raw).__name__}, not an object")
        raw.pop("format_version", None)
        extra = raw.get("extra")
        if isinstance(extra, dict) and "space" in extra:  # written before the space was a field of its own
            raw["extra"] = {k: v for k, v in extra.items() if k not in ("space", "space_file")}
            raw.setdefault("space", extra["space"])
            raw.setdefault("space_file", extra.get("space_file") or "")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(raw) - known
        if unknown:
            raise DatasetError(f"{where}: unknown metadata keys {sorted(unknown)}")
        missing = {"benchmark", "space_hash", "gpu"} - set(raw)
        if missing:
            raise DatasetError(f"{where}: metadata lacks {sorted(missing)}")
        for key, value in raw.items():  # one key, one JSON type, checked where the file is read
            kinds = _META_TYPES[key]
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise DatasetError(f"{where}: metadata {key!r} is {json.dumps(value)[:60]}, not of type "
                                   f"{' or '.join(k.__name__ for k in kinds)}")
        return cls(**raw)

    @property
    def slice(self) -> dict[str, Any]:
        """Parameters held at one value because the data's source lacked them (``bat import --fix``): the
        dataset covers that slice of its space; empty for a dataset of the whole space."""
        fixed = self.extra.get("slice")
        return dict(fixed) if isinstance(fixed, dict) else {}

    def remember(self, bench: Benchmark) -> DatasetMeta:
        """Keep ``bench``'s space file (and where it came from) unless it is registered under its name."""
        from bat.core.benchmark import is_registered

        if not is_registered(bench):
            self.space, self.space_file = bench.raw, str(bench.path.resolve())
        return self

    def load_benchmark(self) -> Benchmark:
        """The benchmark of this dataset: the space stored with it, or the registered benchmark's."""
        from bat.core.benchmark import benchmark_from_dict, load_benchmark

        if self.space is not None:
            return benchmark_from_dict(self.space, Path(self.space_file or f"dataset {self.benchmark}/{self.gpu}"))
        return load_benchmark(self.benchmark)


#: the JSON types of DatasetMeta's fields, as from_json accepts them
_META_TYPES: dict[str, tuple[type, ...]] = {
    **{name: (str,) for name in ("benchmark", "space_hash", "gpu", "gpu_name", "gpu_source", "driver", "toolkit",
                                 "date", "source", "licence", "notes", "space_file")},
    "problem_size": (dict,), "input_recipe": (dict,), "extra": (dict,), "partial": (bool,),
    "n_expected": (int, type(None)), "space": (dict, type(None)),
}


def read_meta(path: str | Path) -> DatasetMeta:
    """Metadata only, without reading the rows (a file's footer is decoded once per version of the file; each
    call gets a copy of its own)."""
    meta = shared_meta(path)
    return replace(meta, problem_size=_json_copy(meta.problem_size), input_recipe=_json_copy(meta.input_recipe),
                   space=_json_copy(meta.space), extra=_json_copy(meta.extra))


def shared_meta(path: str | Path) -> DatasetMeta:
    """``read_meta`` without the copy: the metadata kept for this version of the file, shared by every
    caller, for readers that never change it (listing, matching peers)."""
    path = Path(path)
    check_regular(path)
    st = path.stat()
    return _decoded(str(path), (os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))


def _json_copy(value: Any) -> Any:
    """A copy of a decoded JSON value (dicts, lists and scalars): a deep copy, at a fraction of its cost."""
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


@functools.lru_cache(maxsize=1024)
def _decoded(path: str, version: tuple[str, int, int, int, int]) -> DatasetMeta:
    """The metadata of the file ``path`` at ``version`` (its real path, device, inode, size and modification
    time): every import checks its dataset against each registered one, and decoding their footers again each
    time was most of its cost."""
    try:
        footer = key_value_metadata(Path(path))
    except FooterError:
        footer = _arrow_metadata(Path(path))
    if META_KEY not in footer:
        raise DatasetError(f"{path}: no BAT metadata (key 'bat') in the Parquet schema")
    return DatasetMeta.from_json(footer[META_KEY], path)


def _arrow_metadata(path: Path) -> dict[bytes, bytes]:
    """The schema metadata as pyarrow reads it, or the DatasetError that says why it cannot."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return dict(pq.read_schema(path).metadata or {})
    except (pa.ArrowInvalid, OSError) as exc:
        raise not_parquet(path, exc) from exc


#: the first bytes of a Parquet file, and of the JSON and gzip files other tools write
_PARQUET, _GZIP = b"PAR1", b"\x1f\x8b"


def is_parquet(path: Path) -> bool:
    """Does ``path`` start as a Parquet file does?"""
    with path.open("rb") as f:
        return f.read(4) == _PARQUET


def not_parquet(path: Path, exc: Exception) -> DatasetError:
    """The error for a file that Arrow cannot read as Parquet, saying what it looks like instead."""
    with path.open("rb") as f:
        head = f.read(64)
    if head.startswith(_GZIP) or head.lstrip()[:1] in (b"{", b"["):
        return DatasetError(f"{path}: not a BAT dataset but JSON (a Kernel Tuner cache, a T4 or KTT file?): "
                            f"bat import {path} makes a dataset of it (bat run --dataset imports it by itself)")
    return DatasetError(f"{path}: not a Parquet dataset ({exc})")


def check_regular(path: Path) -> None:
    """A dataset file is a regular file within MAX_DATA_BYTES (a FIFO named *.parquet would block)."""
    try:
        regular_file(path, MAX_DATA_BYTES)
    except InputLimitError as exc:
        raise DatasetError(str(exc)) from None
