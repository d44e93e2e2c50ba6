"""The analyses notebook runs top to bottom on the shipped data (small settings)."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "analyses.ipynb"


def run_notebook(nb: nbformat.NotebookNode) -> str:
    """Execute ``nb`` in a fresh kernel from the repository root; the text of every output."""
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def test_analyses_notebook_runs(monkeypatch):
    monkeypatch.setenv("BAT_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    outputs = run_notebook(nbformat.read(NOTEBOOK, as_version=4))
    assert "max |ours - networkx|" in outputs
    assert "reduced space:" in outputs
