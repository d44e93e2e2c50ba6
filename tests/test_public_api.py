"""The public API of ``bat``: every declared name resolves, nothing loads until used, figures are Figures."""

from __future__ import annotations

import subprocess
import sys

import pytest

import bat


def test_every_public_name_resolves_to_what_its_module_defines():
    import importlib

    for name in bat.__all__:
        module = importlib.import_module(bat._EXPORTS[name])
        assert getattr(bat, name) is getattr(module, name), name
    assert set(bat.__all__) <= set(dir(bat))


def test_an_unknown_name_lists_the_api():
    with pytest.raises(AttributeError, match=r"the public API is: .*run_tuner"):
        bat.not_a_thing  # noqa: B018


def test_import_bat_loads_nothing_heavy():
    code = ("import sys, bat; heavy = [m for m in ('numpy', 'pandas', 'pyarrow', 'analysis', 'bat.core.problem', "
            "'matplotlib', 'optuna') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_figures_are_returned_not_written(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    monkeypatch.chdir(tmp_path)
    data = bat.load_benchmark_data("pnpoly", ["RTX_3090", "RTX_Titan"])
    fig = bat.distribution_figure("pnpoly", {g: bat.distribution(d) for g, d in data.datasets.items()})
    assert isinstance(fig, Figure) and len(fig.axes) == 1 and not list(tmp_path.iterdir())
    port = bat.portability_figure("pnpoly", bat.portability_matrix(data.datasets))
    assert isinstance(port, Figure)


def test_load_dataset_by_benchmark_or_path():
    ds = bat.load_dataset("pnpoly", "RTX_Titan")
    assert ds.meta.gpu == "RTX_Titan"
    assert bat.load_dataset(bat.find_dataset("pnpoly", "RTX_Titan").path).name == ds.name
