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


def readme_cell() -> str:
    """The Python block of the README's "In a notebook" section."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## In a notebook", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_cell_plots_a_tuners_convergence_against_random_search():
    cell = readme_cell()
    assert 5 <= len(cell.strip().splitlines()) <= 12
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    run_notebook(nb)
    results = [o for o in nb.cells[0].outputs if o["output_type"] == "execute_result"]
    assert len(results) == 1 and "image/png" in results[0]["data"]  # the Figure, displayed once
    assert "Figure" in results[0]["data"]["text/plain"]
