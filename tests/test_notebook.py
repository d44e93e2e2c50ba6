"""The analyses notebook runs top to bottom on the shipped data (small settings)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "analyses.ipynb"


def test_analyses_notebook_runs(monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="nbformat is in the dev group")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is in the dev group")
    from analysis.data import benchmarks_with_data

    if "pnpoly" not in benchmarks_with_data():
        pytest.skip("no shipped pnpoly dataset in results/ (the notebook walks through it)")
    monkeypatch.setenv("BAT_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "max |ours - networkx|" in outputs
    assert "reduced space:" in outputs
