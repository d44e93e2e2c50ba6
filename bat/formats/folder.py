"""A folder of measurements in the FAIR Benchmark Hub's layout (``<kernel>/<GPU>.json.gz``), imported at once.

Each ``*.json`` or ``*.json.gz`` file of the folder holds one GPU's data, and
the GPU is the file name up to its first dot (``MI250X.json.gz`` -> MI250X),
whatever the file says inside (the hub's MI250X caches name no device). The
hub ships some caches twice, as the cache and as its T4 conversion
(``A100_T4.json.gz``): a ``<GPU>_T4`` file beside ``<GPU>``'s is that twin and
is skipped (its rows equal the cache's); alone, it is that GPU's data. The
space is ``benchmark`` (a registered name, or a space or T1 file by path),
else the registered benchmark named like the folder. Every file is read and
checked against the space before anything is written. A ``source`` given
gets the file's name appended (``..., file convolution_milo/A100.json.gz``), so one bad file (not
a cache, other parameters than the space's) fails the folder and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bat.core.benchmark import benchmark_names, load_benchmark
from bat.core.errors import DatasetError
from bat.core.userdata import safe_name
from bat.formats.importing import Imported, import_file

T4_SUFFIX = "_T4"
DATA_SUFFIXES = (".json.gz", ".json")


@dataclass
class FolderImport:
    """The datasets of one folder, with what was skipped or ignored and why."""

    imported: list[Imported]
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _stem(path: Path) -> str | None:
    for suffix in DATA_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return None


def folder_benchmark(folder: Path, benchmark: str | None) -> str:
    """The space of a folder's data: ``benchmark`` as given, else the registered benchmark named like the folder."""
    if benchmark:
        load_benchmark(benchmark)  # an unknown name or a bad space file fails before any file is read
        return benchmark
    if folder.name in benchmark_names():
        return folder.name
    raise DatasetError(f"{folder}: no benchmark is named {folder.name!r}; give the space the data was tuned on "
                       "with --benchmark NAME or --benchmark KERNEL.json (its T1 file)")


def import_folder(folder: str | Path, *, benchmark: str | None = None, source: str = "",
                  licence: str = "", allow_suspect: bool = False) -> FolderImport:
    """Import every GPU's file of ``folder`` against one space (see the module docstring)."""
    folder = Path(folder)
    space = folder_benchmark(folder, benchmark)
    stems = {path: _stem(path) for path in sorted(folder.iterdir()) if path.is_file()}
    data = {path: stem for path, stem in stems.items() if stem}
    if not data:
        raise DatasetError(f"{folder}: no .json or .json.gz files to import")
    gpus = set(data.values())
    result = FolderImport([])
    result.skipped += [f"{p.name}: not .json or .json.gz, ignored" for p, s in stems.items() if not s]
    for path, stem in data.items():
        if stem.endswith(T4_SUFFIX) and stem[: -len(T4_SUFFIX)] in gpus:
            result.skipped.append(f"{path.name}: the T4 twin of {stem[: -len(T4_SUFFIX)]}'s cache, not imported again")
            continue
        gpu = safe_name(stem.removesuffix(T4_SUFFIX), f"{path}: the GPU from the file name")
        imp = import_file(path, benchmark=space, gpu=gpu, source=f"{source}, file {folder.name}/{path.name}"
                          if source else "", licence=licence,
                          gpu_source=f"the file name {path.name}", allow_suspect=allow_suspect)
        result.imported.append(imp)
        result.warnings += imp.warnings
    return result
