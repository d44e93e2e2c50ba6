"""Shared fixtures: the published files the tests read, all inside the repository.

``tests/fixtures/published/`` holds copies of published files in their
original formats (see its PROVENANCE.md); tests read the imported datasets
from ``results/``. A missing file is a failure, never a skip. Compile results
are cached by source hash (bat.toolchain.nvrtc) for every test, xdist worker and later run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "fixtures" / "published"
#: the top-level packages loaded once pytest had collected the tests, before any ran (tests/test_collection.py)
LOADED_BY_COLLECTION = pytest.StashKey[frozenset[str]]()


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
    """Compile results are shared by tests, xdist workers and later runs (bat.toolchain.nvrtc's cache)."""
    if getattr(config, "cache", None) is not None:
        os.environ.setdefault("BAT_NVRTC_CACHE", str(config.cache.mkdir("bat-nvrtc")))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting cost in imports: the packages loaded so far, kept for tests/test_collection.py."""
    session.config.stash[LOADED_BY_COLLECTION] = frozenset(name.partition(".")[0] for name in sys.modules)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first: run in parallel (pytest-xdist) they then overlap the many quick ones."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
