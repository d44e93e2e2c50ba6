"""The analyses notebook runs top to bottom on the shipped data (small settings), where Jupyter runs it
(its own folder as the working directory), through the public API only."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "analyses.ipynb"


def run_notebook(nb: nbformat.NotebookNode, where: Path = NOTEBOOK.parent) -> str:
    """Execute ``nb`` in a fresh kernel whose working directory is ``where`` (Jupyter's: the notebook's
    folder, where the repository's top-level folders are not importable); the text of every output."""
    import nbclient  # Jupyter's client loads here, not when pytest collects this file

    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(where)}}).execute()
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_analyses_notebook_runs(monkeypatch):
    monkeypatch.setenv("BAT_NOTEBOOK_SMALL", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    outputs = run_notebook(nb)
    assert "max |ours - networkx|" in outputs
    assert "reduced space:" in outputs
    figures = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(figures) >= 8  # distributions, convergence, centrality, importance, portability


def test_the_notebook_uses_the_public_api_only():
    """Imports: ``bat`` and the standard data libraries; every ``bat.<name>`` it uses is in ``bat.__all__``."""
    import bat

    tree = ast.parse("\n".join(c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
                               if c.cell_type == "code"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"bat", "os", "numpy", "pandas"}, imported
    used = {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "bat"}
    assert used and used <= set(bat.__all__), used - set(bat.__all__)


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
