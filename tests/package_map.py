"""The ``bat`` namespace as pyproject.toml maps it onto the repository's folders (``bat.analysis`` from ``analysis/``).

Read from ``[tool.setuptools]`` (``package-dir`` and ``packages``), the one
place the mapping is declared; the architecture test, the packaging test and
docs/layout.py walk the namespace through it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def package_dirs() -> dict[str, str]:
    """Package name -> its folder, relative to the repository, for the packages mapped explicitly."""
    return dict(_setuptools()["package-dir"])


def declared_packages() -> list[str]:
    """Every package the distribution installs, as pyproject.toml lists them."""
    return list(_setuptools()["packages"])


def folder_of(package: str) -> Path:
    """The folder of ``package``: the folder of its longest mapped prefix, then the rest of its name."""
    mapping = package_dirs()
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in mapping:
            return ROOT / mapping[prefix] / Path(*parts[n:])
    raise KeyError(f"{package} is under no mapped folder of pyproject.toml")


def modules() -> Iterator[tuple[str, Path]]:
    """Every module of the declared packages by dotted name (a package by its ``__init__.py``), sorted."""
    for package in sorted(declared_packages()):
        folder = folder_of(package)
        for path in sorted(folder.glob("*.py")):
            yield (package if path.name == "__init__.py" else f"{package}.{path.stem}"), path


def folders_with_files(suffixes: tuple[str, ...]) -> list[str]:
    """Dotted names of every folder under a mapped root that holds a file with one of ``suffixes`` (code or data),
    skipping folders whose names are no Python identifiers (the datasets' source folders)."""
    out = set()
    for package, top in package_dirs().items():
        for path in (ROOT / top).rglob("*"):
            rel = path.parent.relative_to(ROOT / top)
            if path.suffix in suffixes and "__pycache__" not in rel.parts and all(p.isidentifier() for p in rel.parts):
                out.add(".".join((package, *rel.parts)))
    return sorted(out)


def static_tree(dest: Path) -> Path:
    """The namespace as one folder, for tools that read files rather than import (grimp, type checkers): ``dest/bat``
    holds a link to each entry of ``bat/`` and to each mapped folder at its package's place. Returns ``dest``."""
    top = dest / "bat"
    top.mkdir(parents=True)
    for entry in (ROOT / "bat").iterdir():
        if entry.name != "__pycache__":
            (top / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for package, folder in package_dirs().items():
        if package != "bat":
            (dest / Path(*package.split("."))).symlink_to(ROOT / folder, target_is_directory=True)
    return dest
