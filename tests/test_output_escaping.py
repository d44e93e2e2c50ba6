"""Issue 32, class 1: text from outside is never markup, neither rich's nor matplotlib's mathtext.

The mechanism is one output layer (bat.cli.output: every value of a message is escaped, the
template is the code's; bat.analysis.plots.styled: figures drawn without mathtext); these tests
feed it names nobody listed: a data folder, a GPU name in an imported cache, a parameter value.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bat.cli import EXIT_OK, main
from bat.cli.console import console
from bat.cli.output import markup

NASTY = "Odd [/] $\\x$ [bold]GPU[/bold] [link=x]"


@given(st.text(max_size=40))
@settings(max_examples=200, deadline=None)
def test_any_value_prints_as_written(value):
    with console.capture() as captured:
        console.print(markup("[bold]{}[/]: {}", value, value), highlight=False, soft_wrap=True)
    printed = captured.get()
    if value.isprintable():
        assert printed == f"{value}: {value}\n"
    else:
        assert printed.count("\n") == 1


def test_format_specs_still_apply_before_escaping():
    assert markup("{:.2f} [b]{:>5}[/]", 1.2345, "[x]") == "1.23 [b]  \\[x][/]"


@pytest.fixture
def odd_cache(tmp_path: Path, capsys) -> Path:
    """A Kernel Tuner cache of pnpoly whose device name is markup and mathtext."""
    plain = tmp_path / "c.json"
    assert main(["export", "pnpoly_RTX_3090", "--to", "kernel_tuner", "--out", str(plain)]) == EXIT_OK
    data = json.loads(plain.read_text())
    data["device_name"] = NASTY
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    capsys.readouterr()
    return odd


@pytest.mark.slow
def test_a_data_folder_and_a_gpu_name_with_markup_and_mathtext(odd_cache: Path, tmp_path: Path, capsys,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = ["--data-dir", "d[/]$x$"]
    assert main([*data, "import", str(odd_cache), "-b", "pnpoly", "--gpu", "ODD"]) == EXIT_OK
    assert "d[/]$x$/datasets/pnpoly_ODD.parquet" in capsys.readouterr().out
    assert main([*data, "list", "gpus"]) == EXIT_OK
    assert NASTY in capsys.readouterr().out
    assert main([*data, "list", "datasets"]) == EXIT_OK
    assert main([*data, "run", "-t", "reference:random", "--dataset", "pnpoly_ODD", "-n", "5"]) == EXIT_OK
    out = capsys.readouterr().out
    assert NASTY in out and "d[/]$x$/runs/" in out
    assert main([*data, "analyze", "--dataset", "pnpoly_ODD", "--no-importance", "-o", "rep"]) == EXIT_OK
    assert (tmp_path / "rep" / "report.md").exists()


def test_figures_draw_mathtext_and_markup_from_data_as_written():
    from bat.analysis.plots import speedup_figure

    fig = speedup_figure({"b$\\x$": {NASTY: 1.5, "RTX_3090": 2.0}}, "$\\frac{a}{$")  # not valid mathtext
    fig.savefig(io.BytesIO(), format="png")  # a plain savefig: no mathtext parse error
    texts = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
    assert any(NASTY in t for t in texts)
