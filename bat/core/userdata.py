"""The user's data folder, file names made only of safe names, and the rule that the install stays read-only.

Imports, recordings and run traces go to a folder the user owns:
``--data-dir`` (``bat --data-dir DIR COMMAND``), else the environment
variable ``BAT_DATA_DIR``, else ``./bat-data`` in the current directory (per
project, visible, like ``git``'s folder; nothing is written to a hidden
per-user place). Inside it: ``datasets/`` (scanned by ``bat list datasets``
and every command that looks datasets up), ``spaces/`` (imported T1 spaces),
``runs/`` (``bat run`` traces) and ``recorded-small/`` (small-size
recordings, never replayed).

A name that becomes part of a file name (benchmark, GPU) must consist of
letters, digits, ``_``, ``-`` and ``.``, not starting with a dot; anything
else is an error naming the field it came from, so no name can reach outside
the folder. GPU ids derived from free-text device names are sanitised instead.
Nothing is ever written inside an installed (non-editable) copy of BAT.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

from bat.core.errors import DatasetError, InputLimitError, UnsafeNameError
from bat.core.limits import check_kind

ENV = "BAT_DATA_DIR"
DEFAULT = "bat-data"
_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_.-]+")


def data_dir() -> Path:
    """The user's data folder (absolute): ``BAT_DATA_DIR``, else ``./bat-data``. It need not exist yet (it is
    made on the first write); one that exists and is not a folder (a file, ``/dev/zero``) is an error, never
    read as a folder with no data."""
    given = os.environ.get(ENV) or DEFAULT
    check_folder_kind(given)
    path = Path(given).resolve()
    if path.exists() and not path.is_dir():
        raise DatasetError(f"{ENV} or --data-dir {path}: not a folder (your data folder: imports, recordings "
                           "and run traces go there)")
    return path


def check_folder_kind(given: str | Path) -> None:
    """A data folder named by ``BAT_DATA_DIR`` or ``--data-dir`` is absent or a folder (or a link to one): a FIFO,
    a device or a loop of links is one line naming the variable (before ``resolve()``, which a loop ends in a
    RuntimeError)."""
    try:
        check_kind(given, folder_ok=True)
    except InputLimitError as exc:
        raise DatasetError(f"{ENV} or --data-dir {given}: not a folder ({exc})") from None


def datasets_dir() -> Path:
    return data_dir() / "datasets"


def spaces_dir() -> Path:
    return data_dir() / "spaces"


def runs_dir() -> Path:
    return data_dir() / "runs"


def safe_name(value: str, field: str) -> str:
    """``value`` when it may be part of a file name; UnsafeNameError naming ``field`` otherwise."""
    if not isinstance(value, str) or not _SAFE.fullmatch(value):
        raise UnsafeNameError(f"{field} {value!r} cannot be part of a file name: use letters, digits, "
                              "'_', '-' and '.' (not first)")
    return value


def derived_name(text: str) -> str:
    """A safe name from free text (a device name): unsafe runs become '_', edges trimmed; '' if none is left."""
    return _UNSAFE_RUN.sub("_", text).strip("._-")


def dataset_file(benchmark: str, gpu: str, *, folder: Path | None = None,
                 fields: tuple[str, str] = ("benchmark", "GPU")) -> Path:
    """``<folder>/<benchmark>_<gpu>.parquet`` (default folder: the data folder's datasets/)."""
    name = f"{safe_name(benchmark, fields[0])}_{safe_name(gpu, fields[1])}.parquet"
    return (folder or datasets_dir()) / name


#: the distribution that installs the ``bat`` namespace (the name ``bat`` on PyPI is another project's)
DISTRIBUTION = "bat-autotune"


@cache
def _installed_dirs() -> tuple[Path, ...]:
    """Top-level folders of an installed (non-editable) BAT distribution; none for a source checkout."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        return ()
    direct = dist.read_text("direct_url.json")
    if direct and json.loads(direct).get("dir_info", {}).get("editable"):
        return ()
    tops = {Path(str(f)).parts[0] for f in dist.files or () if len(Path(str(f)).parts) > 1}
    tops = {t for t in tops if not t.endswith((".dist-info", ".egg-info")) and t != ".."}
    return tuple(sorted(Path(str(dist.locate_file(t))).resolve() for t in tops))


def check_writable(path: str | Path) -> Path:
    """``path``, unless it lies inside an installed copy of BAT (UnsafeNameError naming both)."""
    check_kind(path, folder_ok=True)  # a loop of symbolic links would end resolve() in a RuntimeError
    target = Path(path).resolve()
    for root in _installed_dirs():
        if target == root or root in target.parents:
            raise UnsafeNameError(f"{path}: inside the installed package at {root}, which is read-only; "
                                  f"write to the data folder ({data_dir()}) or another place")
    return Path(path)
