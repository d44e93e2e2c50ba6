"""Shared fixtures: the published files the tests read, all inside the repository.

``tests/fixtures/published/`` holds copies of published files in their
original formats (see its PROVENANCE.md); tests read the imported datasets
from ``results/``. A missing file is a failure, never a skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "fixtures" / "published"


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
