"""Outputs of the transfer study: ``summary.md``, ``results.json`` and the transfer-matrix figure.

- ``summary.md``: the design, then per benchmark and target GPU (and per
  split: all other GPUs, from NVIDIA, from AMD) each tuner's median
  evaluations to 1.10 and 1.05 of the target's optimum with their 95 %
  intervals and censored runs, random search's exact median and the gain
  over it, and the methodology score on both axes;
- ``results.json``: the study (splits, sources of every target, campaign
  settings), every row of those tables, per-tuner summaries, the methodology
  view of each split, and every run's metadata;
- ``plots/transfer_matrix.png``: per transfer tuner, a heatmap of source set
  (row) to target (column) coloured by log2 of the tuner's median
  evaluations to 1.10 over random search's exact median: blue where
  transfer helps (fewer evaluations), red where it hurts; each side of the
  colour scale reaches its own extreme (at least a factor 2), so a small loss
  shows beside large gains. A censored median gives a lower bound ("+").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bat.analysis.compare.report import _table
from bat.analysis.compare.transfer import ALL_OTHERS, CENSORING, GOALS, TransferResult, shown, split_name
from bat.analysis.plots import pyplot, save_figure, set_title, styled
from bat.campaign.store import RunRecord
from bat.core import jsonout, quarantine
from bat.core.atomic import write_text


def _interval(r: dict[str, Any], budget: int) -> str:
    text = shown(r["median"], budget)
    if r["ci_low"] is not None:
        text += f" [{shown(r['ci_low'], budget)}, {shown(r['ci_high'], budget)}]"
    return text + (f" ({r['censored']}/{r['runs']} censored)" if r["censored"] else "")


def _gain(r: dict[str, Any], budget: int) -> str:
    if r["gain"] is None:
        return "-"
    return ("<" if r["median"] > budget else "") + f"{r['gain']:.2f}x"


def _score(s: dict[str, Any]) -> str:
    if s["score"] is None:
        return "-"
    ci = f" [{s['ci_low']:+.2f}, {s['ci_high']:+.2f}]" if s["ci_low"] is not None else ""
    return f"{s['score']:+.2f}{ci}"


def markdown(result: TransferResult) -> str:
    """The report of a transfer study."""
    s = result.study
    c = s.splits[0]
    budget = s.budget
    lines = [
        "# Transfer study: tuning a GPU the tuner has never seen",
        "",
        f"- Tuners: {', '.join(f'`{t.label}`' for t in s.tuners)}; floor: `{s.floor or '-'}` (run without a prior, "
        "shared by the splits).",
        f"- {c.repeats} seeds per cell, campaign seed {c.seed}; budget {budget} evaluations; replayed data.",
        "- Splits: " + "; ".join(f"{split_name(x.prior)} ({len(x.targets)} targets)" for x in s.splits)
        + ". The prior is the other GPUs' measured data of the same space (never the target's).",
        "- Evaluations to 1.10 / 1.05: median over seeds of the first evaluation after which the best held is "
        "within that ratio of the target's optimum, with a 95 % percentile-bootstrap interval; " + CENSORING + ".",
        "- Random (exact): random search's exact median without replacement; gain = that / the tuner's median "
        "(< when the tuner's median is censored: an upper bound).",
        "- Methodology score (evaluations and time axes, window = the budget): 0 = random search, 1 = the optimum.",
        "",
        "## Summary (all other GPUs as the prior), mean over targets",
        "",
    ]
    summary = result.summary()
    lines.append(_table(["tuner", *(f"mean median to {g:.2f}" for g in GOALS), "methodology (evaluations)",
                         "methodology (time)"],
                        [[f"`{label}`", *(_mean(e.get(f'mean_median_to_{g:.2f}')) for g in GOALS),
                          _score(e["methodology_evaluations"]) if "methodology_evaluations" in e else "-",
                          _score(e["methodology_time"]) if "methodology_time" in e else "-"]
                         for label, e in summary.items()]))
    families = list(dict.fromkeys(r["benchmark"] for r in result.rows))
    lines += ["", f"Per family: mean over held-out GPUs of the median evaluations to {GOALS[0]:.2f} (all other GPUs "
              "as the prior; censored medians count as budget + 1).", "",
              _table(["tuner", *families],
                     [[f"`{t.label}`", *(_mean(_family_mean(result, t.label, f)) for f in families)]
                      for t in s.tuners])]
    for split in s.splits:
        lines += ["", f"## {split_name(split.prior, title=True)}", ""]
        for bench, gpu in split.targets:
            rows = [r for r in result.rows if r["split"] == split.prior and (r["benchmark"], r["gpu"]) == (bench, gpu)]
            if not rows:
                continue
            sources = ", ".join(rows[0]["sources"]) or "none"
            by = {(r["label"], r["goal"]): r for r in rows}
            table = []
            for t in s.tuners:
                a, b = by.get((t.label, GOALS[0])), by.get((t.label, GOALS[1]))
                if a is None or b is None:
                    continue
                table.append([f"`{t.label}`", _interval(a, budget), _gain(a, budget), _interval(b, budget),
                              _gain(b, budget), _score(a["methodology_evaluations"]), _score(a["methodology_time"])])
            first = by.get((s.tuners[0].label, GOALS[0])) or rows[0]
            other = by.get((s.tuners[0].label, GOALS[1])) or rows[0]
            lines += [f"### {bench} on {gpu} (sources: {sources})", "",
                      f"Random search, exact median: {_num(first['random_exact_median'])} evaluations to 1.10, "
                      f"{_num(other['random_exact_median'])} to 1.05.", "",
                      _table(["tuner", "evals to 1.10", "gain", "evals to 1.05", "gain", "methodology (evals)",
                              "methodology (time)"], table), ""]
    return "\n".join(lines) + "\n"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:g}"


def _mean(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _family_mean(result: TransferResult, label: str, family: str) -> float | None:
    meds = [r["median"] for r in result.goal_rows(GOALS[0])
            if (r["label"], r["benchmark"], r["split"]) == (label, family, ALL_OTHERS)]
    return float(np.mean(meds)) if meds else None


def write_json(path: Path, result: TransferResult, records: list[RunRecord]) -> Path:
    doc = result.to_dict() | {"quarantined": quarantine.seen(), "runs": [{"meta": r.meta} for r in records]}
    return write_text(path, jsonout.dumps(doc, key=None))


@styled
def matrix_figure(result: TransferResult, out: Path) -> Path:
    """``transfer_matrix.png``: per tuner but the floor, source set x target, log2(tuner / random) at 1.10."""
    from matplotlib.colors import TwoSlopeNorm

    s = result.study
    goal = GOALS[0]
    labels = [t.label for t in s.tuners if t.label != s.floor] or [t.label for t in s.tuners]
    splits = [x.prior for x in s.splits]
    targets = list(dict.fromkeys((r["benchmark"], r["gpu"]) for r in result.rows))
    cell = {(r["label"], r["split"], r["benchmark"], r["gpu"]): r for r in result.goal_rows(goal)}
    width = max(6.0, 0.55 * len(targets) + 2.5)
    fig, axes = pyplot().subplots(len(labels), 1, figsize=(width, 1.1 + 0.55 * len(splits) * len(labels)
                                                             + 0.9 * len(labels)), squeeze=False)
    grids = {label: np.full((len(splits), len(targets)), np.nan) for label in labels}
    for (label, sp, b, g), r in cell.items():
        if label in grids and r["random_exact_median"]:
            grids[label][splits.index(sp), targets.index((b, g))] = np.log2(r["median"] / r["random_exact_median"])
    finite = np.concatenate([g[np.isfinite(g)] for g in grids.values()] + [np.zeros(1)])
    # each side scaled to its own extreme (at least a factor 2), so a small hurt shows beside large gains
    norm = TwoSlopeNorm(vcenter=0.0, vmin=min(-1.0, float(finite.min())), vmax=max(1.0, float(finite.max())))
    cmap = pyplot().get_cmap("RdBu_r").with_extremes(bad="0.85")
    image = None
    for ax, label in zip(axes[:, 0], labels, strict=True):
        grid = grids[label]
        for i, sp in enumerate(splits):
            for j, (b, g) in enumerate(targets):
                c = cell.get((label, sp, b, g))
                if c is not None and c["random_exact_median"]:
                    text = f"{c['median'] / c['random_exact_median']:.2g}" + ("+" if c["median"] > s.budget else "")
                    ax.text(j, i, text, ha="center", va="center", fontsize=6)
        image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto")
        ax.set_yticks(range(len(splits)), [split_name(sp) for sp in splits], fontsize=7)
        ax.set_xticks(range(len(targets)), [f"{b}\n{g}" for b, g in targets], fontsize=6, rotation=90)
        set_title(ax, f"{label}: median evaluations to {goal:.2f} x optimum over random search's (exact); "
                      "blue: transfer helps, red: it hurts; +: censored at the budget (at least this); "
                      "gray: no such split")
    if image is not None:
        fig.colorbar(image, ax=axes[:, 0].tolist(), label="log2(tuner / random search)", shrink=0.8)
    return save_figure(fig, out / "transfer_matrix", svg=False)


def write_outputs(out: Path, result: TransferResult, records: list[RunRecord], *, plots: bool = True
                  ) -> dict[str, Path]:
    """``summary.md``, ``results.json`` and (unless ``plots`` is False) ``plots/transfer_matrix.png``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"summary": out / "summary.md", "json": out / "results.json"}
    write_text(paths["summary"], quarantine.markdown_mark() + markdown(result))
    write_json(paths["json"], result, records)
    if plots:
        paths["transfer_matrix"] = matrix_figure(result, out / "plots")
    return paths
