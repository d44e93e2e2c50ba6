"""Registries by name, read from entry points: tuners, backends, and the recorded datasets.

Datasets: the packages named in the ``bat.datasets`` group ship read-only
datasets (ours: ``results/``); the user's data folder (bat.core.userdata) holds
imported and recorded ones. Each dataset has an id, ``<root>/<path>``
(``shipped/bat2-kerneltuner/gemm_RTX_3090``, ``data/gemm_A100``); two
datasets of the same (benchmark, GPU) are an error that names both unless
one is chosen by its file or id.

Tuners are registered under the entry-point group ``bat.tuners`` in a
package's metadata (``pyproject.toml``), so an installed third-party package
adds a tuner without touching this repository. An entry point's object is
either a ``Tuner`` subclass (registered under the entry point's name) or a
mapping of variants to ``TunerEntry`` (registered as ``NAME`` for the key
``""`` and ``NAME:KEY`` for the others), whose ``"module:Class"`` strings
keep listing free of tuning libraries. A tuner can also be named by import
path, ``package.module:Class``, or by a scheme, ``SCHEME:TEXT``: the group
``bat.tuner_schemes`` maps a scheme (``exec``) to a Tuner subclass whose
class method ``scheme_arguments(TEXT)`` gives its keyword arguments. Backends (``bat.backends``) map a name to a
factory of targets (bat.run.targets). Entry points are read once per process,
lazily.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bat.core import plugins, quarantine
from bat.core.datasetmeta import DatasetMeta, read_meta, shared_meta
from bat.core.errors import DatasetError, MissingDependencyError, RegistryError, TunerError, UnknownNameError
from bat.core.limits import MAX_DATA_BYTES, regular_file
from bat.core.tuner import Tuner, TunerEntry, parse_tuner_options
from bat.core.userdata import datasets_dir

if TYPE_CHECKING:  # the space engine and the dataset's rows load where a benchmark or a dataset is built
    from bat.core.benchmark import Benchmark
    from bat.core.dataset import Dataset

#: GPU replayed when none is named: the one GPU with complete data for every shipped benchmark.
DEFAULT_GPU = "RTX_3090"
TUNER_GROUP = "bat.tuners"
SCHEME_GROUP = "bat.tuner_schemes"
BACKEND_GROUP = "bat.backends"


# -- tuners --------------------------------------------------------------------------------
@cache
def _tuners() -> dict[str, TunerEntry]:
    table: dict[str, TunerEntry] = {}
    for ep in plugins.group(TUNER_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin is named, not a traceback
            raise RegistryError(f"entry point {ep.name} = {ep.value} ({TUNER_GROUP}) cannot be loaded: "
                                f"{type(exc).__name__}: {exc}") from exc
        if isinstance(obj, type) and issubclass(obj, Tuner):
            table[ep.name] = TunerEntry(ep.value, obj.summary or (obj.__doc__ or "").strip().split("\n")[0],
                                        oracle=obj.oracle is True)
        elif isinstance(obj, Mapping) and all(isinstance(v, TunerEntry) for v in obj.values()):
            for key, entry in obj.items():
                table[f"{ep.name}:{key}" if key else ep.name] = entry
        else:
            raise RegistryError(f"entry point {ep.name} = {ep.value} ({TUNER_GROUP}) is neither a "
                                "bat.core.tuner.Tuner subclass nor a mapping of TunerEntry")
    return table


@cache
def _schemes() -> dict[str, Any]:
    return {ep.name: ep for ep in plugins.group(SCHEME_GROUP)}


def scheme_names() -> list[str]:
    """Every registered tuner scheme (``exec``), sorted."""
    return sorted(_schemes())


def scheme_summary(scheme: str) -> str:
    """The one line of a scheme's tuner class."""
    return _scheme_class(scheme, "")[0].summary


def scheme_of(spec: str) -> str | None:
    """The scheme of ``SCHEME:TEXT`` (a registered name of the same spelling wins), else None."""
    scheme, sep, _ = spec.partition(":")
    return scheme if sep and scheme in _schemes() and spec not in _tuners() else None


def with_arguments(spec: str, args: list[str] | tuple[str, ...]) -> str:
    """``spec`` with program arguments appended (``bat run ... -- ARGS``); only a scheme takes them."""
    if not args:
        return spec
    if scheme_of(spec) is None:
        raise TunerError(f"tuner {spec}: arguments after -- are for a scheme tuner "
                         f"({', '.join(f'{s}:...' for s in scheme_names()) or 'none registered'})")
    return f"{spec} {shlex.join(args)}"


def _valid_specs() -> list[str]:
    return [*tuner_names(), "package.module:Class", "module:Class", *(f"{s}:..." for s in scheme_names())]


def tuner_names() -> list[str]:
    """Every registered tuner name, sorted."""
    return sorted(_tuners())


def tuner_entry(name: str) -> TunerEntry:
    """The registered variant ``name`` (UnknownNameError listing the valid names)."""
    table = _tuners()
    if name not in table:
        raise UnknownNameError("tuner", name, _valid_specs())
    return table[name]


def is_import_path(spec: str) -> bool:
    """True for ``package.module:Class`` or ``module:Class`` (a tuner given by where it lives, not by name).

    ``module:Class`` is a module on the path (a single file); a registered family's prefix
    (``optuna:...``) stays a name, so a misspelt variant is an unknown name.
    """
    module, sep, attr = spec.partition(":")
    if not (sep and attr.isidentifier() and all(p.isidentifier() for p in module.split("."))):
        return False
    family = "." not in module and any(n.startswith(module + ":") or n == module for n in _tuners())
    return spec not in _tuners() and not family


def tuner_class(spec: str) -> tuple[type[Tuner], dict[str, Any]]:
    """The class of a registered name or an import path, and the arguments of the variant."""
    if spec in _tuners():
        entry = tuner_entry(spec)
        target, kwargs, lib = entry.target, dict(entry.kwargs), entry.requires
    elif (scheme := scheme_of(spec)) is not None:
        return _scheme_class(scheme, spec.partition(":")[2])
    elif is_import_path(spec):
        target, kwargs, lib = spec, {}, ""
    else:
        raise UnknownNameError("tuner", spec, _valid_specs())
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        where = "" if lib else f"; looked for in {_looked_in()}"
        raise MissingDependencyError(f"tuner {spec} needs {lib or module_name}, which cannot be imported "
                                     f"({exc}){where}") from exc
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Tuner)):
        raise RegistryError(f"tuner {spec}: {target} is not a bat.core.tuner.Tuner subclass")
    return cls, kwargs


def _looked_in() -> str:
    """Where Python looks for a module named by a tuner's import path, in a few words."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    given = f"PYTHONPATH ({', '.join(entries)})" if entries else "PYTHONPATH (not set)"
    return f"{given} and the packages installed in {sys.prefix}"


def _scheme_class(scheme: str, text: str) -> tuple[type[Tuner], dict[str, Any]]:
    ep = _schemes()[scheme]
    try:
        cls = ep.load()
    except ImportError as exc:
        raise MissingDependencyError(f"tuner scheme {scheme}: cannot be loaded: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Tuner) and hasattr(cls, "scheme_arguments")):
        raise RegistryError(f"entry point {ep.name} = {ep.value} ({SCHEME_GROUP}) is not a bat.core.tuner.Tuner "
                            "subclass with a scheme_arguments class method")
    return cls, dict(cls.scheme_arguments(text))


def make_tuner(spec: str, options: list[str] | tuple[str, ...] = (), **overrides: Any) -> Tuner:
    """A fresh tuner from a registered name or an import path.

    ``options`` are ``KEY=VALUE`` strings (``--tuner-option``), checked against the class's
    declared hyper-parameters; ``overrides`` are keyword arguments from code. Both replace the
    variant's own arguments.
    """
    cls, kwargs = tuner_class(spec)
    kwargs = parse_tuner_options(cls, list(options), variant=kwargs)
    kwargs.update(overrides)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # a hyper-parameter its __post_init__ refuses
        raise TunerError(f"tuner {spec}: {exc}") from exc


# -- backends ------------------------------------------------------------------------------
@cache
def _backends() -> dict[str, Any]:
    return {ep.name: ep for ep in plugins.group(BACKEND_GROUP)}


def backend_names() -> list[str]:
    return sorted(_backends())


def backend_provider(name: str) -> Any:
    """The provider registered as backend ``name`` (bat.run.targets.BackendProvider: make, offer, why)."""
    table = _backends()
    if name not in table:
        raise UnknownNameError("backend", name, ["auto", *sorted(table)])
    try:
        provider = table[name].load()
    except ImportError as exc:
        raise MissingDependencyError(f"backend {name} cannot be loaded: {exc}") from exc
    except Exception as exc:  # a broken plugin is named, not a traceback
        raise RegistryError(f"entry point {name} = {table[name].value} ({BACKEND_GROUP}) cannot be loaded: "
                            f"{type(exc).__name__}: {exc}") from exc
    if not all(callable(getattr(provider, attr, None)) for attr in ("make", "offer")):
        raise RegistryError(f"entry point {name} = {table[name].value} ({BACKEND_GROUP}) is not a backend "
                            "provider (it needs make(bench, request) and offer(bench, request))")
    return provider


# -- datasets ------------------------------------------------------------------------------
#: Entry-point group of shipped datasets: ``name = "package"``, a package whose folder holds .parquet files.
DATASET_GROUP = "bat.datasets"
#: Label of the user's data folder in dataset ids.
USER_ROOT = "data"


@cache
def _shipped() -> tuple[tuple[str, Path], ...]:
    roots = []
    for ep in plugins.group(DATASET_GROUP):
        spec = importlib.util.find_spec(ep.value)
        dirs = list(spec.submodule_search_locations or []) if spec else []
        if not dirs:
            raise RegistryError(f"entry point {ep.name} = {ep.value} ({DATASET_GROUP}) is not a package on disk")
        roots.append((ep.name, Path(dirs[0]).resolve()))  # in a checkout, results/ rather than its link
    return tuple(sorted(roots))


def shipped_roots() -> list[tuple[str, Path]]:
    """(label, folder) of the read-only datasets installed with packages (``BAT_RESULTS`` replaces them)."""
    env = os.environ.get("BAT_RESULTS")
    if env and not Path(env).is_dir():  # it replaces the shipped data: naming no folder is an error, not "no data"
        raise DatasetError(f"BAT_RESULTS {env}: not a folder (it replaces the shipped datasets)")
    return [("shipped", Path(env))] if env else list(_shipped())


def dataset_roots() -> list[tuple[str, Path]]:
    """Every folder searched for datasets: the shipped ones, then the user's data folder."""
    return [*shipped_roots(), (USER_ROOT, datasets_dir())]


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset file with its metadata and its id (``<root label>/<path in the root, no suffix>``)."""

    path: Path
    meta: DatasetMeta
    id: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.meta.benchmark, self.meta.gpu)


def _entries_in(label: str, root: Path, read: Callable[[Path], DatasetMeta]) -> list[DatasetEntry]:
    if not root.is_dir():
        return []
    return [DatasetEntry(p, read(p), f"{label}/{p.relative_to(root).with_suffix('').as_posix()}")
            for p in sorted(root.rglob("*.parquet")) if p.is_file()]  # a FIFO or a folder is no dataset


def dataset_entries(root: Path | None = None, *, shared: bool = False) -> list[DatasetEntry]:
    """Every dataset (or those under ``root``), sorted by benchmark and GPU; a file is listed once.
    ``shared``: each entry's metadata is the one kept per file version (``shared_meta``), not a copy of its
    own, for a caller that only reads it."""
    roots = [("custom", root)] if root is not None else dataset_roots()
    every = [e for label, folder in roots for e in _entries_in(label, folder, shared_meta if shared else read_meta)]
    # a file under two roots (a link, a root inside another) is listed once, the first time: the same real path
    # is the same file, so only paths to one file (device, inode) are resolved to tell them apart
    files = [_file_id(e.path) for e in every]
    twice = {f for f, n in Counter(files).items() if n > 1}
    seen: dict[object, DatasetEntry] = {}
    for e, f in zip(every, files, strict=True):
        seen.setdefault(e.path.resolve() if f in twice else f, e)
    return sorted(seen.values(), key=lambda e: (*e.key, e.id))


def _file_id(path: Path) -> object:
    """The file at ``path`` (device, inode); its real path where it is gone since it was listed."""
    try:
        st = path.stat()
    except OSError:
        return path.resolve()
    return st.st_dev, st.st_ino


def _one(entries: list[DatasetEntry], what: str) -> DatasetEntry:
    if len(entries) > 1:
        raise DatasetError(f"{len(entries)} datasets of {what}: {', '.join(str(e.path) for e in entries)}; "
                           f"choose one with --dataset FILE|ID (ids: {', '.join(e.id for e in entries)})")
    return entries[0]


def _noted(entry: DatasetEntry) -> DatasetEntry:
    """``entry``, the dataset a command draws on: its quarantined rows noted for the output (bat.core.quarantine)."""
    quarantine.note(str(entry.path), quarantine.count(entry.meta.extra))
    return entry


def find_dataset(benchmark: str, gpu: str | None = None, root: Path | None = None, *,
                 space_hash: str | None = None) -> DatasetEntry:
    """The one dataset of ``benchmark`` on ``gpu`` (default: DEFAULT_GPU, else the first GPU).

    With ``space_hash``, datasets are matched by the space they were recorded on, whatever
    their benchmark's name. Two datasets that match are an error naming both.
    """
    return _noted(_find_dataset(benchmark, gpu, root, space_hash=space_hash))


def _find_dataset(benchmark: str, gpu: str | None = None, root: Path | None = None, *,
                  space_hash: str | None = None) -> DatasetEntry:
    every = dataset_entries(root)
    if space_hash is None:
        entries = [e for e in every if e.meta.benchmark == benchmark]
        what = f"benchmark {benchmark!r}"
    else:
        entries = [e for e in every if e.meta.space_hash == space_hash]
        what = f"the space of {benchmark} (space hash {space_hash[:12]})"
    if not entries:
        have = sorted({e.meta.benchmark for e in every})
        hint = ""
        if space_hash is not None and (same := [e for e in every if e.meta.benchmark == benchmark]):
            hint = (f"; datasets of a benchmark named {benchmark} were recorded on another space: "
                    f"{', '.join(e.id for e in same)} (replay one with --dataset FILE|ID)")
        where = root or ", ".join(str(r) for _, r in dataset_roots())
        raise DatasetError(f"no recorded dataset for {what} in {where}{hint}; "
                           f"benchmarks with data: {', '.join(have) or '(none)'}")
    gpus = sorted({e.meta.gpu for e in entries})
    if gpu is None:
        gpu = DEFAULT_GPU if DEFAULT_GPU in gpus else gpus[0]
    chosen = [e for e in entries if e.meta.gpu == gpu]
    if not chosen:
        raise UnknownNameError(f"GPU for {benchmark}", gpu, gpus)
    return _one(chosen, f"{benchmark} on {gpu}")


def resolve_dataset(ref: str | Path) -> DatasetEntry:
    """A dataset named by its file or its id (or the end of an id that names one dataset: ``gemm_A100``)."""
    return _noted(_resolve_dataset(ref))


def _resolve_dataset(ref: str | Path) -> DatasetEntry:
    path = Path(ref)
    if os.path.lexists(path) and not path.is_file() and not path.is_dir():  # a FIFO, a device: named as such
        regular_file(path, MAX_DATA_BYTES)
    if path.is_file():
        for e in dataset_entries():
            if e.path.resolve() == path.resolve():
                return e
        return DatasetEntry(path, read_meta(path), str(path))
    text = str(ref).strip("/")
    every = dataset_entries()
    exact = [e for e in every if e.id == text]
    matches = exact or [e for e in every if e.id.endswith("/" + text)]
    if matches:
        return _one(matches, f"id {text!r}")
    if path.suffix == ".parquet":
        raise DatasetError(f"{ref}: no such dataset file")
    raise UnknownNameError("dataset", text, [e.id for e in every])


def resolve_benchmark(name_or_path: str | Path, gpu: str | None = None) -> Benchmark:
    """A benchmark as the command line names it: registered, a space file by path, or the name of
    imported datasets (whose stored space is used; ``gpu`` picks among them)."""
    from bat.core.benchmark import load_benchmark

    try:
        return load_benchmark(name_or_path)
    except UnknownNameError:
        if not any(e.meta.benchmark == str(name_or_path) for e in dataset_entries(shared=True)):
            raise
    return _find_dataset(str(name_or_path), gpu).meta.load_benchmark()  # its space, not its data


def datasets_of(bench: Benchmark) -> list[DatasetEntry]:
    """Every dataset recorded on ``bench``'s space (matched by space hash, whatever its name)."""
    return [e for e in dataset_entries() if e.meta.space_hash == bench.space.space_hash]


def load_dataset(ref: str | Path, gpu: str | None = None) -> Dataset:
    """A dataset by file or id (``resolve_dataset``), or the one of a benchmark on ``gpu`` (``find_dataset``)."""
    from bat.core.dataset import Dataset

    if gpu is None and (Path(ref).is_file() or Path(ref).suffix == ".parquet"
                        or any(e.id == str(ref).strip("/") or e.id.endswith("/" + str(ref).strip("/"))
                               for e in dataset_entries(shared=True))):
        return Dataset.load(resolve_dataset(ref).path)
    return Dataset.load(find_dataset(str(ref), gpu).path)
