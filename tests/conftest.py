"""Shared fixtures: the published files the tests read, all inside the repository.

``tests/fixtures/published/`` holds copies of published files in their
original formats (see its PROVENANCE.md); tests read the imported datasets
from ``results/``. A missing file is a failure, never a skip. Compile results
are cached by source hash (bat.toolchain.nvrtc) for every test, xdist worker and later run.

Tests write only in their temporary folders and in pytest's cache folder (``.pytest_cache``; with
``-p no:cacheprovider``, a temporary folder removed after the run): each test's data folder
(``BAT_DATA_DIR``), and the caches of the tools under test (compiled kernels, the emulator's builds,
matplotlib's font list, IPython's profile and Jupyter's connection files, Hypothesis's examples), and
Python's own bytecode (``PYTHONPYCACHEPREFIX``, written there even where ``PYTHONDONTWRITEBYTECODE`` is
set: a clean install has no ``__pycache__``, and every process the tests start, ``bat`` commands, pool
workers and isolated tuners, compiled each module it imported from source again). A run
that wrote anywhere else in the repository, or in the folders of ``$HOME`` where those tools write by
default, fails, naming what it wrote (tests/outside_writes.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from blas_pin import pin_openblas

pin_openblas()  # before anything imports NumPy (tests/blas_pin.py)

import pytest  # noqa: E402
from outside_writes import snapshot, written  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: each test's CPU seconds, measured by bench/slow_marks.py (--table): the order tests start in, and their slow marks
CPU_TABLE = ROOT / "tests" / "cpu_seconds.json"
#: CPU seconds above which a test is marked slow (bench/slow_marks.py, tests/test_slow_marks.py)
SLOW_CPU_S = 10.0
PUBLISHED = ROOT / "tests" / "fixtures" / "published"
#: the top-level packages loaded once pytest had collected the tests, before any ran (tests/test_collection.py)
LOADED_BY_COLLECTION = pytest.StashKey[frozenset[str]]()
#: what the repository and $HOME held before the first test (the run's controller only)
BEFORE_RUN = pytest.StashKey[tuple]()
#: variables that tell a tool where to write, and the cache folder each gets
TOOL_FOLDERS = {"BAT_NVRTC_CACHE": "bat-nvrtc", "BAT_EMULATION_CACHE": "bat-emulated", "MPLCONFIGDIR": "matplotlib",
                "IPYTHONDIR": "ipython", "JUPYTER_RUNTIME_DIR": "jupyter-runtime",
                "HYPOTHESIS_STORAGE_DIRECTORY": "hypothesis", "PYTHONPYCACHEPREFIX": "pycache"}


def _present(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing from the repository", pytrace=False)
    return path


@pytest.fixture(scope="session")
def published_dir() -> Path:
    """Published Kernel Tuner caches and KTT/T4 files (tests/fixtures/published)."""
    return _present(PUBLISHED)


@pytest.fixture(autouse=True)
def _user_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own empty data folder (imports, recordings and run traces go there)."""
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path_factory.mktemp("bat-data")))


def pytest_terminal_summary(terminalreporter) -> None:
    """Say how many rows of the bad-input battery ran (tests/test_bad_inputs.py)."""
    reports = [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])
               if "test_bad_inputs.py::test_bad_input[" in getattr(r, "nodeid", "") and r.when == "call"]
    if reports:
        passed = sum(r.passed for r in reports)
        terminalreporter.write_line(f"bad-input battery: {len(reports)} cases, {passed} passed")


def pytest_configure(config: pytest.Config) -> None:
    """The tools' caches in pytest's cache folder, shared by tests, xdist workers (which inherit the
    variables) and later runs; without pytest's cache, in one temporary folder for the run. pytest-xdist
    hands out the tests in the order collection gives them (pytest_collection_modifyitems), not with the
    groups of most tests first."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if all(name in os.environ for name in TOOL_FOLDERS):
        return
    if getattr(config, "cache", None) is not None:
        folders = {name: str(config.cache.mkdir(folder)) for name, folder in TOOL_FOLDERS.items()}
    else:
        base = tempfile.mkdtemp(prefix="bat-test-caches-")
        config.add_cleanup(lambda: shutil.rmtree(base, ignore_errors=True))
        folders = {name: os.path.join(base, folder) for name, folder in TOOL_FOLDERS.items()}
    for name, folder in folders.items():
        os.environ.setdefault(name, folder)
    # this process compiles into the bytecode folder from now on, the processes it starts from their start
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = os.environ["PYTHONPYCACHEPREFIX"], False


def _controller(config: pytest.Config) -> bool:
    """This process runs the session (not an xdist worker)."""
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    """What the repository and $HOME hold before any test runs."""
    if _controller(session.config):
        session.config.stash[BEFORE_RUN] = snapshot(ROOT, Path.home())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A run that wrote outside its temporary folders fails, naming what it wrote."""
    if not _controller(session.config) or BEFORE_RUN not in session.config.stash:
        return
    found = written(session.config.stash[BEFORE_RUN], snapshot(ROOT, Path.home()))
    if found:
        print("\ntests wrote outside their temporary folders (tests/outside_writes.py):", *found, sep="\n  ",
              file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting cost in imports: the packages loaded so far, kept for tests/test_collection.py."""
    session.config.stash[LOADED_BY_COLLECTION] = frozenset(name.partition(".")[0] for name in sys.modules)


def cpu_table() -> dict[str, float]:
    """Each measured test's CPU seconds (tests/cpu_seconds.json)."""
    return json.loads(CPU_TABLE.read_text())


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which names each test's group in its id
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest tests first, so that in parallel (pytest-xdist) they overlap the many quick ones and no
    worker ends the run alone on a long test. A test's length is its measured CPU seconds (tests not yet
    measured: the slow mark's threshold if marked slow, else none); the tests of an ``xdist_group`` run on
    one worker, one after the other, so they start as one, by their sum.

    A test file whose tests name no group is a group of its own: its tests then run on one worker in their
    order, and what they share (a module's fixtures, the caches its first test warms) is made once, where
    spread over both workers it was made on each, and made again when other files' tests ran between."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    measured = cpu_table()

    def seconds(item: pytest.Item) -> float:
        return measured.get(item.nodeid, SLOW_CPU_S if item.get_closest_marker("slow") else 0.0)

    def group(item: pytest.Item) -> str:
        marker = item.get_closest_marker("xdist_group")
        return f"group:{marker.args[0] if marker.args else marker.kwargs['name']}" if marker else item.nodeid

    length: dict[str, float] = {}
    for item in items:
        length[group(item)] = length.get(group(item), 0.0) + seconds(item)
    items.sort(key=lambda item: -length[group(item)])
