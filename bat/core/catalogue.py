"""The registered benchmarks: their names and space files, from the entry-point group, without loading a space.

``bat list`` and the registry read these without the space engine (and so
without NumPy); ``bat.core.benchmark`` builds a benchmark from the space file.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bat.core.errors import SpaceSpecError, UnknownNameError

#: Entry-point group of benchmarks: ``name = "package.module"``, a package holding ``space.json``.
BENCHMARK_GROUP = "bat.benchmarks"


@cache
def _registered() -> dict[str, str]:
    from bat.core.plugins import group

    return {ep.name: ep.module for ep in group(BENCHMARK_GROUP)}


def benchmark_names() -> list[str]:
    """Names of the registered benchmarks (entry-point group ``bat.benchmarks``)."""
    return sorted(_registered())


def benchmark_path(name: str) -> Path:
    """The space file of a registered benchmark: ``space.json`` in its package's directory."""
    import importlib.util

    table = _registered()
    if name not in table:
        raise UnknownNameError("benchmark", name, sorted(table))
    spec = importlib.util.find_spec(table[name])
    dirs = list(spec.submodule_search_locations or []) if spec else []
    if not dirs:
        raise SpaceSpecError(f"benchmark {name}: package {table[name]} has no directory on disk")
    return Path(dirs[0]) / "space.json"


def benchmark_description(name: str) -> str:
    """The ``description`` of a registered benchmark's space file, read without building its space.

    A T1 file (whose description comes from converting it) and a file that does not parse as a JSON object go
    through ``bat.core.spacefile.read_space_json``, which converts the one and names what is wrong with the other.
    """
    from bat.core.limits import MAX_SPACE_BYTES, loads, read_text

    path = benchmark_path(name)
    try:
        raw = loads(read_text(path, MAX_SPACE_BYTES), str(path))
    except ValueError:
        raw = None
    if not isinstance(raw, dict) or isinstance(raw.get("ConfigurationSpace"), dict):
        from bat.core.spacefile import read_space_json

        raw = read_space_json(path)
    return str(raw.get("description", ""))
