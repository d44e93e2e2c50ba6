"""Atomic file output: every file BAT writes appears whole under its name, or not at all.

``publish`` is the one way a file is written: the writer fills a temporary
file in the destination's folder (a unique name: ``.<name>.<pid>.<random>.tmp``,
so concurrent writers never share one), which is then renamed over the
destination (``overwrite``), linked to it only if the name is still free
(``overwrite=False``: an existing file is never replaced, even by a racing
writer), or linked to the first free numbered name ``<stem>-2<suffix>``, ...
(``numbered``). A writer that fails, or a process killed while writing,
leaves at most its temporary file, never a torn destination; temporary files
start with a dot and end in ``.tmp``.

Hand-written because the standard library has the parts (``os.replace``,
``os.link``, ``O_EXCL``) but no function that combines them, and the usual
helpers (``tempfile.mkstemp``) create files readable by the owner only.
Renames make a file whole against a crash of the process (``kill -9``), not
against a power cut: nothing here calls ``fsync`` (the recording journal does).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from bat.core.errors import OutputError
from bat.core.limits import check_kind

#: Numbered names tried after the plain one (``-2`` .. ``-9999``).
MAX_NUMBER = 9999


def temporary_path(path: str | Path) -> Path:
    """A new, empty file beside ``path`` with a name no other writer uses (mode as the umask allows)."""
    path = Path(path)
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        return tmp


def publish(path: str | Path, write: Callable[[Path], object], *, overwrite: bool = True,
            numbered: bool = False) -> Path:
    """Call ``write(tmp)`` to fill a temporary file, then give it its name; return that name.

    ``overwrite=False`` raises OutputError when ``path`` exists;
    ``numbered`` takes the first free name of ``path``, ``<stem>-2<suffix>``, ...
    instead. The destination's folder is created when missing.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path}: is a folder; give a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        write(tmp)
        if overwrite and not numbered:
            os.replace(tmp, path)
            return path
        for candidate in _candidates(path) if numbered else (path,):
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                continue
            return candidate
        raise OutputError(f"{path}: exists; give another name, or --force to replace it" if not numbered
                                else f"{path}: it and its numbered names up to -{MAX_NUMBER} exist")
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def check_output(path: str | Path, *, overwrite: bool = True, what: str = "output") -> Path:
    """Fail now, writing nothing, if ``publish`` could not write ``path`` later.

    Raises OutputError when ``path`` is a folder, exists and ``overwrite`` is
    false, or lies below a file or a folder this process may not write.
    """
    path = Path(path)
    check_kind(path, folder_ok=True)
    if path.is_dir():
        raise OutputError(f"{what} {path}: is a folder; give a file name")
    if path.exists() and not overwrite:
        raise OutputError(f"{what} {path}: exists; give another name, or --force to replace it")
    _check_folder(path.parent, what, path)
    return path


def check_output_folder(folder: str | Path, *, what: str = "output folder") -> Path:
    """Fail now if ``folder`` is a file or could not be created or written by this process."""
    folder = Path(folder)
    check_kind(folder, folder_ok=True)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{what} {folder}: is a file, not a folder")
    _check_folder(folder, what, folder)
    return folder


def _check_folder(folder: Path, what: str, path: Path) -> None:
    """The nearest existing ancestor of ``folder`` (itself included) is a folder we may write."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"{what} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path}: no permission to write in {existing}")


def write_text(path: str | Path, text: str, *, overwrite: bool = True) -> Path:
    """``publish`` a UTF-8 text file."""
    return publish(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), overwrite=overwrite)


def _candidates(path: Path) -> Iterator[Path]:
    yield path
    for k in range(2, MAX_NUMBER + 1):
        yield path.with_name(f"{path.stem}-{k}{path.suffix}")
