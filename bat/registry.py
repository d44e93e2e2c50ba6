"""Registries by name, read from entry points: tuners, backends, and the recorded datasets.

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
factory of targets (bat.targets). Entry points are read once per process,
lazily.
"""

from __future__ import annotations

import importlib
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from bat.dataset import Dataset, DatasetMeta
from bat.errors import DatasetError, MissingDependencyError, RegistryError, TunerError, UnknownNameError
from bat.tuner import Tuner, TunerEntry, parse_tuner_options

#: GPU replayed when none is named: the one GPU with complete data for every shipped benchmark.
DEFAULT_GPU = "RTX_3090"
TUNER_GROUP = "bat.tuners"
SCHEME_GROUP = "bat.tuner_schemes"
BACKEND_GROUP = "bat.backends"


# -- tuners --------------------------------------------------------------------------------
@cache
def _tuners() -> dict[str, TunerEntry]:
    table: dict[str, TunerEntry] = {}
    for ep in entry_points(group=TUNER_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin is named, not a traceback
            raise RegistryError(f"entry point {ep.name} = {ep.value} ({TUNER_GROUP}) cannot be loaded: "
                                f"{type(exc).__name__}: {exc}") from exc
        if isinstance(obj, type) and issubclass(obj, Tuner):
            table[ep.name] = TunerEntry(ep.value, obj.summary or (obj.__doc__ or "").strip().split("\n")[0])
        elif isinstance(obj, Mapping) and all(isinstance(v, TunerEntry) for v in obj.values()):
            for key, entry in obj.items():
                table[f"{ep.name}:{key}" if key else ep.name] = entry
        else:
            raise RegistryError(f"entry point {ep.name} = {ep.value} ({TUNER_GROUP}) is neither a "
                                "bat.tuner.Tuner subclass nor a mapping of TunerEntry")
    return table


@cache
def _schemes() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=SCHEME_GROUP)}


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
    return [*tuner_names(), "package.module:Class", *(f"{s}:..." for s in scheme_names())]


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
    """True for ``package.module:Class`` (a tuner given by where it lives, not by name)."""
    module, sep, attr = spec.partition(":")
    return bool(sep and attr and "." in module and spec not in _tuners())


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
        raise MissingDependencyError(f"tuner {spec} needs {lib or module_name}, which cannot be imported "
                                     f"({exc})") from exc
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Tuner)):
        raise RegistryError(f"tuner {spec}: {target} is not a bat.tuner.Tuner subclass")
    return cls, kwargs


def _scheme_class(scheme: str, text: str) -> tuple[type[Tuner], dict[str, Any]]:
    ep = _schemes()[scheme]
    try:
        cls = ep.load()
    except ImportError as exc:
        raise MissingDependencyError(f"tuner scheme {scheme}: cannot be loaded: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Tuner) and hasattr(cls, "scheme_arguments")):
        raise RegistryError(f"entry point {ep.name} = {ep.value} ({SCHEME_GROUP}) is not a bat.tuner.Tuner "
                            "subclass with a scheme_arguments class method")
    return cls, dict(cls.scheme_arguments(text))


def make_tuner(spec: str, options: list[str] | tuple[str, ...] = (), **overrides: Any) -> Tuner:
    """A fresh tuner from a registered name or an import path.

    ``options`` are ``KEY=VALUE`` strings (``--tuner-option``), checked against the class's
    declared hyper-parameters; ``overrides`` are keyword arguments from code. Both replace the
    variant's own arguments.
    """
    cls, kwargs = tuner_class(spec)
    kwargs.update(parse_tuner_options(cls, list(options)))
    kwargs.update(overrides)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # a hyper-parameter its __post_init__ refuses
        raise TunerError(f"tuner {spec}: {exc}") from exc


# -- backends ------------------------------------------------------------------------------
@cache
def _backends() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=BACKEND_GROUP)}


def backend_names() -> list[str]:
    return sorted(_backends())


def backend_factory(name: str) -> Any:
    """The target factory registered as backend ``name`` (bat.targets.TargetFactory)."""
    table = _backends()
    if name not in table:
        raise UnknownNameError("backend", name, ["auto", *sorted(table)])
    try:
        return table[name].load()
    except ImportError as exc:
        raise MissingDependencyError(f"backend {name} cannot be loaded: {exc}") from exc


# -- datasets ------------------------------------------------------------------------------
def results_dir() -> Path:
    """Where recorded datasets live (``BAT_RESULTS`` overrides the repository's ``results/``)."""
    env = os.environ.get("BAT_RESULTS")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "results"


@dataclass(frozen=True)
class DatasetEntry:
    path: Path
    meta: DatasetMeta

    @property
    def key(self) -> tuple[str, str]:
        return (self.meta.benchmark, self.meta.gpu)


def dataset_entries(root: Path | None = None) -> list[DatasetEntry]:
    """Every dataset under ``root`` (default: ``results_dir()``), sorted by benchmark and GPU."""
    root = root or results_dir()
    entries = [DatasetEntry(p, Dataset.read_meta(p)) for p in sorted(root.rglob("*.parquet"))]
    return sorted(entries, key=lambda e: e.key)


def gpus_for(benchmark: str, root: Path | None = None) -> list[str]:
    return [e.meta.gpu for e in dataset_entries(root) if e.meta.benchmark == benchmark]


def find_dataset(benchmark: str, gpu: str | None = None, root: Path | None = None) -> DatasetEntry:
    """The dataset of ``benchmark`` on ``gpu`` (default: DEFAULT_GPU, else the first one)."""
    entries = [e for e in dataset_entries(root) if e.meta.benchmark == benchmark]
    if not entries:
        have = sorted({e.meta.benchmark for e in dataset_entries(root)})
        raise DatasetError(
            f"no recorded dataset for benchmark {benchmark!r} in {root or results_dir()}; "
            f"benchmarks with data: {', '.join(have) or '(none)'}"
        )
    gpus = [e.meta.gpu for e in entries]
    if gpu is None:
        gpu = DEFAULT_GPU if DEFAULT_GPU in gpus else gpus[0]
    for e in entries:
        if e.meta.gpu == gpu:
            return e
    raise UnknownNameError(f"GPU for {benchmark}", gpu, gpus)
