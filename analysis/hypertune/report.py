"""The hypertune report: Markdown with the numbers of ``hypertune.json`` and three figures.

Figures (PNG, drawn and saved like every figure of bat.analysis.plots): the
training score of each tried setting with its interval, in the order of their scores; the best setting against the
defaults on the training and the held-out sets; and the same per dataset
(benchmark on a GPU) of both sets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bat.analysis.plots import bar_style, legend_beside, pyplot, save_figure, styled

#: the bars of the best setting and of the defaults in every figure (colour and hatch: apart in grey print too)
BEST, DEFAULTS = bar_style(0), bar_style(1)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _ci(d: dict[str, Any]) -> str:
    return f"{_fmt(d['score'])} [{_fmt(d['ci_low'])}, {_fmt(d['ci_high'])}]"


def write_report(out: Path, body: dict[str, Any]) -> dict[str, Path]:
    """``report.md`` and ``figures/*.png`` in ``out``; their paths by name."""
    from bat.core.atomic import write_text

    figures = out / "figures"
    figures.mkdir(exist_ok=True)
    paths = {"settings_plot": figures / "settings.png", "final_plot": figures / "best_vs_defaults.png",
             "per_dataset_plot": figures / "per_dataset.png", "report": out / "report.md"}
    _settings_plot(body, paths["settings_plot"])
    _final_plot(body, paths["final_plot"])
    _per_dataset_plot(body, paths["per_dataset_plot"])
    plan, final = body["plan"], body["final"]
    gap = final["generalisation_gap"]
    lines = [
        f"# Hypertune of {plan['tuner']}", "",
        f"Search: {plan['searcher_tuner']} over {len(plan['params'])} option(s), {len(body['tried'])} settings tried "
        f"(the defaults included); each setting: {plan['repeats']} runs per training dataset at budget "
        f"{plan['budget']}, seed {plan['seed']}. Score: {plan['score']}.", "",
        f"Split: {plan['split']['how']}.", "",
        f"- training ({len(plan['split']['train'])}): {', '.join(plan['split']['train'])}",
        f"- held out ({len(plan['split']['heldout'])}): {', '.join(plan['split']['heldout'])}", "",
        f"Best setting: `{body['best']}`; defaults: `{body['defaults']}`.", "",
        f"## Best against the defaults ({plan['final_repeats']} fresh runs per dataset, seed {plan['seed'] + 1})", "",
        "| set | best | defaults | improvement (paired) |", "|---|---|---|---|",
    ]
    for name in ("train", "heldout"):
        f = final[name]
        lines.append(f"| {name} | {_ci(f['best'])} | {_ci(f['defaults'])} | {_ci(f['improvement'])} |")
    verdict = _verdict(final["heldout"]["improvement"])
    lines += ["", f"Generalisation gap (training improvement minus held-out improvement): {_fmt(gap)}.",
              f"Held-out verdict: {verdict}.", "",
              "![best against defaults](figures/best_vs_defaults.png)", "",
              "## Per dataset", "", "| dataset | set | best | defaults |", "|---|---|---|---|"]
    for name in ("train", "heldout"):
        f = final[name]
        for ds, runs in sorted(f["best"]["per_target"].items()):
            base = f["defaults"]["per_target"].get(ds, [])
            lines.append(f"| {ds} | {name} | {_fmt(float(np.mean(runs)))} | "
                         f"{_fmt(float(np.mean(base)) if base else None)} |")
    if body.get("hub"):
        hub = body["hub"]
        lines += ["", "## Against the FAIR Benchmark Hub's brute force", "",
                  f"{hub['shared_settings']} of the hub's {hub['hub_settings']} settings of {hub['strategy']} "
                  f"scored here too; Spearman's rank correlation of the two scores: {_fmt(hub['spearman'])} "
                  f"(p {_fmt(hub['p_value'])}; none below 3 shared settings).", "",
                  f"- this hypertune's score: {hub['ours']}",
                  f"- the hub's ({hub['file']}): {hub['hub']}"]
    lines += ["", "![per dataset](figures/per_dataset.png)", "", "## Settings tried (training score)", "",
              "| rank | setting | score [95 % CI] |", "|---|---|---|"]
    for i, t in enumerate(body["tried"], 1):
        failed = f" (failed: {t['error']})" if t.get("error") else ""
        lines.append(f"| {i} | `{t['setting']}` | {_ci(t)}{failed} |")
    lines += ["", "![settings](figures/settings.png)", ""]
    write_text(paths["report"], "\n".join(lines))
    return paths


def _verdict(imp: dict[str, Any]) -> str:
    lo, hi = imp["ci_low"], imp["ci_high"]
    if lo is None or hi is None:
        return "no interval (too few runs)"
    if lo > 0:
        return "the tuned settings improve on the defaults (interval above 0)"
    if hi < 0:
        return "the tuned settings are worse than the defaults (interval below 0)"
    return "no significant difference (interval contains 0): the tuned settings do not generalise measurably"


def _errorbars(values: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    y = np.array([v["score"] if v["score"] is not None else np.nan for v in values], dtype=float)
    lo = np.array([v["ci_low"] if v["ci_low"] is not None else s for v, s in zip(values, y, strict=True)], float)
    hi = np.array([v["ci_high"] if v["ci_high"] is not None else s for v, s in zip(values, y, strict=True)], float)
    return y, np.vstack([np.maximum(0, y - lo), np.maximum(0, hi - y)])


@styled
def _settings_plot(body: dict[str, Any], path: Path) -> None:
    tried = body["tried"]
    y, err = _errorbars(tried)
    from matplotlib.ticker import MaxNLocator

    fig, ax = pyplot().subplots(figsize=(max(5, 0.18 * len(tried) + 2), 3.5))
    ranks = np.arange(1, len(tried) + 1)
    is_default = np.array([t["setting"] == body["defaults"] for t in tried], dtype=bool)
    for style, keep, label in ((BEST, ~is_default, "a tried setting"), (DEFAULTS, is_default, "the defaults")):
        if keep.any():
            ax.bar(ranks[keep], y[keep], yerr=err[:, keep], capsize=2, label=label, **style)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlim(0.4, len(tried) + 0.6)
    ax.axhline(0.0, color="black", lw=0.8)
    legend_beside(ax)
    ax.set_xlabel("setting's rank by training score (1: best)")
    ax.set_ylabel("methodology score")
    ax.set_title(f"{body['plan']['tuner']}: settings tried")
    save_figure(fig, path, svg=False)


@styled
def _final_plot(body: dict[str, Any], path: Path) -> None:
    fig, ax = pyplot().subplots(figsize=(5, 3.5))
    for i, name in enumerate(("train", "heldout")):
        f = body["final"][name]
        y, err = _errorbars([f["best"], f["defaults"]])
        for k, (style, label) in enumerate(((BEST, "best setting"), (DEFAULTS, "defaults"))):
            ax.bar(i + (k - 0.5) * 0.4, y[k], width=0.38, yerr=err[:, k:k + 1], capsize=3,
                   label=label if i == 0 else None, **style)
    ax.set_xticks([0, 1], ["training", "held out"])
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_ylabel("methodology score")
    legend_beside(ax)
    ax.set_title(f"{body['plan']['tuner']}: best vs defaults")
    save_figure(fig, path, svg=False)


@styled
def _per_dataset_plot(body: dict[str, Any], path: Path) -> None:
    names, best, base = [], [], []
    for name in ("train", "heldout"):
        f = body["final"][name]
        for ds, runs in sorted(f["best"]["per_target"].items()):
            names.append(f"{ds}\n({'held out' if name == 'heldout' else 'training'})")
            best.append(float(np.mean(runs)))
            base.append(float(np.mean(f["defaults"]["per_target"].get(ds, [np.nan]))))
    x = np.arange(len(names))
    fig, ax = pyplot().subplots(figsize=(max(5, 0.9 * len(names) + 1), 4))
    ax.bar(x - 0.2, best, width=0.38, label="best setting", **BEST)
    ax.bar(x + 0.2, base, width=0.38, label="defaults", **DEFAULTS)
    ax.set_xticks(x, names, rotation=60, ha="right", fontsize=7)
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_ylabel("methodology score (mean over runs)")
    ax.set_title(f"{body['plan']['tuner']}: best setting and defaults per dataset")
    legend_beside(ax)
    save_figure(fig, path, svg=False)
