"""Shared fixtures: the published data directory and small spaces built from dicts."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
BAT2 = SHARED / "bat2-kerneltuner"
KTT = SHARED / "ktt-coulomb"


@pytest.fixture(scope="session")
def bat2_dir() -> Path:
    if not BAT2.exists():
        pytest.skip(f"published data not found at {BAT2} (it lies beside the checkout in ../shared)")
    return BAT2


@pytest.fixture(scope="session")
def ktt_dir() -> Path:
    if not KTT.exists():
        pytest.skip(f"published data not found at {KTT} (it lies beside the checkout in ../shared)")
    return KTT


@pytest.fixture(autouse=True)
def _user_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own empty data folder (imports, recordings and run traces go there)."""
    monkeypatch.setenv("BAT_DATA_DIR", str(tmp_path_factory.mktemp("bat-data")))
