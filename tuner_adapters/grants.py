"""What an isolated tuner may read: Python, BAT's code and the tuner's own code; never a folder of data.

The tuner's code is granted as narrowly as Python can import it: a module
that is one file is granted as that file, a package as its folder, and the
child imports it through a folder of links in its scratch folder (``code/``,
first on its ``PYTHONPATH``), so the folder the module sits in (often the
user's working folder, beside ``bat-data/``) is not readable. A granted
folder that holds data (a ``.parquet`` file, the user's data folder or the
shipped datasets) is refused with one line (a BatError: exit 2) before any
run. An ``exec:`` program is granted as its own file, with the files and
folders named on its command line under the same rule.

Python's bytecode cache folder, when one is set (``sys.pycache_prefix``,
from ``PYTHONPYCACHEPREFIX``), is granted too, read only, and named to the
tuner's process (bat.tuner_adapters.isolated): it holds the compiled code of
the modules Python loaded, so the tuner's process reads them instead of
compiling every module it imports from source (an installation without
``__pycache__`` folders, written by no process when ``PYTHONDONTWRITEBYTECODE``
is set: importing SMAC from source took 6.1 CPU s here, from the cache 2.4 s). A cache folder
inside a data folder, or holding one, is not granted.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

from bat.core.errors import BatError
from bat.core.userdata import data_dir
from bat.registry import tuner_class
from bat.tuner_adapters.sandbox import SYSTEM_READ, package_code, python_paths

#: a file that makes a folder a data folder
DATA_SUFFIXES = (".parquet",)


@dataclass(frozen=True)
class CodeGrant:
    """The read-only paths of an isolated tuner, and the links (name -> real path) of its import folder."""

    read: tuple[str, ...]
    links: tuple[tuple[str, str], ...] = ()


def _base() -> list[str]:
    """System folders, Python, BAT's code (a program may use BAT's protocol client) and the bytecode cache."""
    return [*SYSTEM_READ, *python_paths(), *package_code("bat"), *filter(None, [bytecode_cache()])]


def bytecode_cache() -> str | None:
    """The real path of Python's bytecode cache folder (``sys.pycache_prefix``) when one is set, exists, and is
    neither inside a data folder nor holds one; else None."""
    prefix = sys.pycache_prefix
    if not prefix or not os.path.isdir(prefix):
        return None
    real = os.path.realpath(prefix)
    if any(_beneath(real, [data]) or _beneath(data, [real]) for data in _data_folders()):
        return None
    return real


def _data_folders() -> list[str]:
    """The real paths of the user's data folder and of ``BAT_RESULTS`` where it is set."""
    return [os.path.realpath(f) for f in (str(data_dir()), os.environ.get("BAT_RESULTS")) if f is not None]


def python_tuner(spec: str) -> CodeGrant:
    """The grant of the Python tuner class ``spec`` (a registered name or ``module:Class``)."""
    base = _base()
    cls, _ = tuner_class(spec)
    top_name = cls.__module__.split(".")[0]
    top = sys.modules[top_name]
    where = [os.path.realpath(p) for p in getattr(top, "__path__", ())]
    if not where and (file := getattr(top, "__file__", None)):
        where = [os.path.realpath(file)]
    mine = [p for p in where if not _beneath(p, base)]  # the tuner's own code, outside Python and BAT
    for path in mine:
        refuse_data(path, f"tuner {spec}")
    links = tuple((top_name + ("" if os.path.isdir(p) else ".py"), p) for p in mine[:1])
    return CodeGrant(read=(*base, *mine), links=links)


def exec_program(argv: list[str], spec: str) -> CodeGrant:
    """The grant of an ``exec:`` program: system folders, Python, BAT's code, the program file and the paths
    its command line names."""
    program = os.path.realpath(shutil.which(argv[0]) or argv[0])
    read = _base()
    for path in [program, *(os.path.realpath(a) for a in argv[1:] if os.path.exists(a))]:
        if not _beneath(path, read):
            refuse_data(path, f"tuner {spec}")
            read.append(path)
    return CodeGrant(read=tuple(read))


def refuse_data(path: str, what: str) -> None:
    """A BatError when the folder ``path`` holds data (see the module docstring); nothing for a file."""
    if not os.path.isdir(path):
        return
    for real in _data_folders():
        if _beneath(real, [path]):
            raise BatError(f"{what}: its code folder {path} holds the data folder {real}; an isolated tuner is "
                           "granted its whole code folder, so move the code (or the data) elsewhere")
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if found := next((f for f in files if f.endswith(DATA_SUFFIXES)), None):
            raise BatError(f"{what}: its code folder {path} holds data ({os.path.join(root, found)}); an "
                           "isolated tuner is granted its whole code folder, so move the data elsewhere")


def _beneath(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)
