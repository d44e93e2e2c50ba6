"""Every figure of ``bat analyze`` and ``bat compare`` survives a plain ``savefig()``, nothing overlaps,
GPUs are named the same in every figure, and ``--format`` adds PDF (or SVG) beside the PNG.

The figures are caught where they are saved (``save_figure``), then saved again as a user would,
with no bounding-box option: every title and axis label must lie inside the canvas, and no
panel's title or label may overlap another panel.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest

from bat.cli import EXIT_OK, main

NAMES = {"RTX_3090": "NVIDIA GeForce RTX 3090", "RTX_3060_laptop": "NVIDIA GeForce RTX 3060 Laptop GPU"}


def texts_of(fig) -> list[tuple[object, object]]:
    """(axes or None, Text) of every title, suptitle and axis label with text."""
    found = [(None, fig._suptitle)] if fig._suptitle is not None else []
    for ax in fig.axes:
        if ax.get_visible():
            found += [(ax, t) for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)
                      if t.get_visible() and t.get_text()]
    return found


def ink(t, renderer):
    """A text's box without the blank ascent/descent margins a font box carries (3 px a side)."""
    return t.get_window_extent(renderer).expanded(1.0, 1.0).padded(-3)


def check_layout(fig, name: str) -> None:
    fig.savefig(io.BytesIO(), format="png")  # the plain call a user makes
    renderer = fig._get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    texts = texts_of(fig)
    for _, t in texts:
        box = t.get_window_extent(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
            f"{name}: {t.get_text()!r} is cut off by a plain savefig()"
    boxes = {ax: ax.get_tightbbox(renderer).padded(-3) for ax in fig.axes if ax.get_visible()}
    for ax, t in texts:
        for other, box in boxes.items():
            if other is not ax and ax is not None:
                assert not ink(t, renderer).overlaps(box), \
                    f"{name}: {t.get_text()!r} overlaps another panel"
    for (a, t), (b, u) in itertools.combinations(texts, 2):
        if a is not b:
            assert not ink(t, renderer).overlaps(ink(u, renderer)), \
                f"{name}: {t.get_text()!r} overlaps {u.get_text()!r}"


@pytest.fixture
def caught(monkeypatch) -> dict[str, object]:
    """Every figure saved, by file name, checked first."""
    # matplotlib loads here, not when pytest collects this file
    import bat.analysis.compare.plots as compare_plots
    import bat.analysis.compare.score_plots as score_plots
    import bat.analysis.plots as plots

    figures: dict[str, object] = {}
    real = plots.save_figure

    def save(fig, path: Path, **kwargs):
        check_layout(fig, path.name)
        figures[path.name] = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
        return real(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", save)
    # every module that took save_figure by name is patched, and imported before (a module first imported
    # under the patch would keep the checking copy for the rest of the process)
    for module in (compare_plots, score_plots):
        monkeypatch.setattr(module, "save_figure", save)
    return figures


@pytest.mark.slow
def test_analyze_figures(caught, tmp_path: Path, capsys):
    out = tmp_path / "rep"
    assert main(["analyze", "-b", "pnpoly", "--gpus", "RTX_3090", "--gpus", "RTX_3060_laptop", "--iterations", "20",
                 "--repeats", "2", "-o", str(out), "--format", "pdf,svg"]) == EXIT_OK
    assert {"pnpoly_distribution", "pnpoly_centrality", "pnpoly_importance", "pnpoly_portability",
            "speedup"} <= set(caught)
    for name in caught:
        assert {(out / "figures" / name).with_suffix(s).exists() for s in (".png", ".pdf", ".svg")} == {True}, name
    joined = " ".join(" ".join(t) for t in caught.values())
    for name, texts in caught.items():  # ids never: names
        assert not [t for t in texts if "RTX_3090" in t or "RTX_3060_laptop" in t], name
    assert all(n in joined for n in NAMES.values())
    report = (out / "report.md").read_text()
    assert "| setting | value |" in report and "{'" not in report and '{"' not in report
    assert "| tuned on \\ run on |" in report


@pytest.mark.slow
def test_compare_figures_name_gpus_as_analyze_does(caught, tmp_path: Path, capsys):
    assert main(["compare", "-t", "reference:random", "-b", "pnpoly,gemm", "--gpus", "RTX_3090,RTX_3060_laptop",
                 "--budgets", "5,10", "-r", "3", "-o", str(tmp_path / "c"), "--format", "pdf"]) == EXIT_OK
    overlay = caught["overlay"]
    assert any(f"pnpoly on {NAMES['RTX_3090']}" in t for t in overlay)
    assert not any("RTX_3090" in t for t in overlay)
    assert (tmp_path / "c" / "plots" / "overlay.pdf").exists() or list((tmp_path / "c").rglob("overlay.pdf"))
