"""Outputs of a comparison: a Markdown summary for a CI job page and a JSON with every number.

``results.json`` holds the campaign (with seeds and budget policy), the
definitions, every cell, every pairwise test, the random-search baseline,
the scores, the gate, one observation per (run, budget) (what a later
``--baseline`` reads) and every run's metadata and full trace (columns as
lists). Missing values are JSON ``null``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pandas as pd

from bat.analysis.compare import assess
from bat.analysis.compare.assess import Analysis
from bat.analysis.compare.methodology import Methodology
from bat.campaign.design import Campaign
from bat.campaign.forked import run_forked
from bat.campaign.store import RunRecord
from bat.core import jsonout, quarantine
from bat.core.atomic import write_text
from bat.run.targets import NOISE_MODES

#: Significant pairwise differences listed in the Markdown (all are in the JSON).
MAX_PAIR_ROWS = 40


def definitions() -> str:
    """The definitions of every number (the docstring of ``bat.analysis.compare.assess``)."""
    return (assess.__doc__ or "").strip()


def write_json(path: Path, campaign: Campaign, analysis: Analysis, records: list[RunRecord]) -> Path:
    gate = analysis.gate
    doc = {
        "campaign": campaign.to_dict(),
        "definitions": definitions(),
        "alpha": analysis.alpha,
        "correction": "Holm over all pairwise tests of the campaign",
        "random_baseline": {k: {str(b): v for b, v in d.items()} for k, d in analysis.random_baseline.items()},
        "scores": analysis.scores,
        "cells": _records(analysis.cells),
        "pairwise": _records(analysis.pairwise),
        "methodology": None if analysis.methodology is None else analysis.methodology.to_dict(),
        "gate": None if gate is None else {
            "baseline": gate.baseline, "alpha": gate.alpha, "cles_threshold": gate.cles_threshold,
            "passed": gate.passed, "cells": _records(gate.cells), "not_in_baseline": gate.missing},
        "quarantined": quarantine.seen(),
        "observations": _records(analysis.observations),
        "runs": [{"meta": r.meta, "trace": {c: r.trace[c].tolist() for c in r.trace.columns}} for r in records],
    }
    return write_text(path, jsonout.dumps(doc, key=None))  # non-finite values (a failed run's time) as null


def markdown(campaign: Campaign, analysis: Analysis) -> str:
    """The summary for a CI job page."""
    c = campaign
    budgets = list(c.budgets)
    measure = ("the final configuration of each run re-measured "
               f"{c.remeasure} times" + (" (on replay: drawn with replacement from the repeated times "
                                         "recorded for it in the dataset, `times_ms`; no GPU measured them)"
                                         if c.backend == "replay" else "") if c.remeasure
               else "the recorded time of each run's best configuration")
    n_pairs, n_sig = len(analysis.pairwise), int(analysis.pairwise["significant"].sum())
    lines = [
        "# Tuner comparison",
        "",
        f"- Tuners: {', '.join(f'`{t.label}`' for t in c.tuners)}; targets: "
        f"{', '.join(f'{b}/{g}' for b, g in c.targets)}; budgets: {', '.join(map(str, budgets))} evaluations.",
        f"- {c.repeats} repeats per cell (n = {c.repeats} per sample in every test), campaign seed {c.seed}; "
        f"backend: {c.backend}{' (recorded data replayed)' if c.backend == 'replay' else ''}.",
        f"- Performance: best known / best found, using {measure}.",
        f"- Tests: two-sided Mann-Whitney U, CLES with ties counting one half, Holm correction over "
        f"{n_pairs} pairwise tests, alpha = {analysis.alpha:g}.",
        "- Scores: 0 = as good as random search, 1 = the optimum in every run.",
        *(f"- {note}" for note in c.notes),
        *(["- Replay noise: each evaluation's objective is " + NOISE_MODES[c.noise] + ", drawn with the run's "
           "seed; runs are judged by the recorded objective of the configuration they chose."]
          if c.noise != "none" else []),
    ]
    m = analysis.methodology
    if m is not None and any(t.check.flagged for t in m.targets):
        lines += ["", "## Data checks: flagged datasets", "",
                  *(f"- **{t.name}**: " + "; ".join(f"{f.check}: {f.message}" for f in t.check.flags)
                    for t in m.targets if t.check.flagged)]
    if analysis.gate is not None:
        lines += ["", *_gate_lines(analysis)]
    if m is not None:
        lines += ["", *methodology_lines(c, m)]
    lines += ["", "## Baseline score: mean relative performance against the exact random-search expectation", "",
              _table(["tuner", "overall", *budgets],
                     [[f"`{lab}`", _f(s["overall"]), *(_f(s[str(b)]) for b in budgets)]
                      for lab, s in analysis.scores.items()])]
    lines += ["", "## Relative performance: median [Q1, Q3]", ""]
    for bench, gpu in c.targets:
        sub = analysis.cells[(analysis.cells["benchmark"] == bench) & (analysis.cells["gpu"] == gpu)]
        exp = analysis.random_baseline.get(f"{bench}/{gpu}", {})
        rows = [[f"`{t.label}`", *(_cell(sub, t.label, b) for b in budgets)] for t in c.tuners]
        if exp:
            rows.append(["random search, exact expectation", *(_f(exp.get(b)) for b in budgets)])
        study = m.target(bench, gpu) if m is not None else None
        flag = " (dataset flagged by the data checks)" if study is not None and study.check.flagged else ""
        lines += [f"### {bench} on {gpu}{flag}", "", _table(["tuner", *budgets], rows), ""]
    lines += ["## Significant pairwise differences", "",
              f"{n_sig} of {n_pairs} pairs differ significantly (Holm-adjusted p < {analysis.alpha:g}).", ""]
    sig = analysis.pairwise[analysis.pairwise["significant"]].sort_values("p_holm")
    if len(sig):
        rows = [[f"{r.benchmark}/{r.gpu}", str(r.budget), f"`{r.a}` vs `{r.b}`", f"{r.cles_a_better:.2f}",
                 f"{r.p_holm:.2g}"] for r in sig.head(MAX_PAIR_ROWS).itertuples()]
        lines += [_table(["target", "budget", "A vs B", "CLES(A better)", "p (Holm)"], rows)]
        if len(sig) > MAX_PAIR_ROWS:
            lines += ["", f"({len(sig) - MAX_PAIR_ROWS} more in results.json)"]
    lines += ["", "## Budget policy", "",
              *(f"- `{lab}`: {how}" for lab, how in c.budget_policy().items()),
              "", "<details><summary>Definitions</summary>", "", definitions(), "", "</details>", ""]
    return "\n".join(lines)


def _interval(s: dict[str, Any]) -> str:
    if s.get("score") is None:
        return "-"
    if s.get("ci_low") is None:
        return f"{s['score']:+.3f}"
    return f"{s['score']:+.3f} [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"


def methodology_lines(c: Campaign, m: Methodology) -> list[str]:
    """The methodology score, success rates, noise-aware optima and simulated-time notes."""
    top = max(c.budgets)
    labels = [t.label for t in c.tuners]
    lines = ["## Methodology score (Willemsen et al., FGCS 2024)", "",
             "s(x) = (random - found) / (random - optimum), averaged over the window; 0 = random search, "
             "1 = the optimum. Evaluations: x = 1.." + str(top) + "; time: 100 steps up to "
             f"{top} x the mean recorded cost of an evaluation. Mean over runs with a 95 % bootstrap interval "
             "(BCa); the aggregate is the mean over targets (interval: each target's runs resampled). "
             "Definitions: `bat.analysis.score`." + (" The methodology asks for at least 100 repeats; these intervals "
                                                 f"rest on {c.repeats}." if c.repeats < 100 else ""), "",
             _table(["tuner", "evaluations (all targets)", "time (all targets)"],
                    [[f"`{lab}`", _interval(m.aggregate(lab, "evaluations")), _interval(m.aggregate(lab, "time"))]
                     for lab in labels]), ""]
    lines += _parallel_lines(c, m)
    rows = []
    for t in m.targets:
        for lab in labels:
            if lab in t.scores:
                sc = {axis: s.summary(m.seed) for axis, s in t.scores[lab].items()}
                rows.append([t.name, f"`{lab}`", _interval(sc["evaluations"]), _interval(sc["time"])])
    lines += [_table(["target", "tuner", "evaluations", "time"], rows), ""]
    what = ("hold a configuration in the noise-aware optimum set" if m.success == "noise"
            else f"hold a configuration within {m.success} x the best recorded time")
    lines += [f"## Success: share of runs that {what}", ""]
    for t in m.targets:
        sub = m.success_rates[(m.success_rates["benchmark"] == t.benchmark) & (m.success_rates["gpu"] == t.gpu)]
        rate = {(r.label, r.budget): f"{r.successes}/{r.runs}" for r in sub.itertuples()}
        n = t.noise
        lines += [f"### {t.name}", "",
                  f"Noise-aware optimum: {n.size} configuration(s) within the noise of the best "
                  f"({n.best_ms:.4g} ms; the slowest member {n.slowest_ms / n.best_ms:.4f} x the best), "
                  f"one-sided Mann-Whitney U on the repeats, alpha {n.alpha:g}; median spread of repeats (CV) "
                  + (f"{n.median_cv:.2%}" if n.median_cv is not None else "n/a") + (f"; {n.note}" if n.note else "")
                  + ". Simulated time: " + t.baseline.cost_note + ".", "",
                  _table(["tuner", *c.budgets], [[f"`{lab}`", *(rate.get((lab, b), "-") for b in c.budgets)]
                                                 for lab in labels]), ""]
    return lines


def _parallel_lines(c: Campaign, m: Methodology) -> list[str]:
    """With several numbers of compile workers: each tuner's time-axis score at each, side by side."""
    ks = sorted({t.compile_workers for t in c.tuners})
    if len(ks) < 2:
        return []
    bases = {t.seed_label: t for t in c.tuners}  # one spec per tuner: what it declares

    def change(b: str) -> str:
        first, last = (m.aggregate(f"{b}@k{k}", "time").get("score") for k in (ks[0], ks[-1]))
        return "-" if first is None or last is None else f"{last - first:+.3f}"

    return ["## Parallel compilation: the time-axis score on each number of compile workers", "",
            f"Every tuner ran on K compile workers and {c.devices} device(s), with the same seeds at every K; "
            "at each K it is scored against random search keeping every slot busy on the same machine "
            "(docs/METHODS.md, item 10a). A tuner that proposes batches gains from more workers, one whose "
            "proposals run ahead of its results gains while they do, one that waits for each result does not "
            f"(its score falls as random search's time shrinks). The last column: the score at K = {ks[-1]} "
            f"minus the score at K = {ks[0]}.", "",
            _table(["tuner", "declares", *(f"K = {k}" for k in ks), "change"],
                   [[f"`{b}`", _declared(t.capabilities), *(_interval(m.aggregate(f"{b}@k{k}", "time")) for k in ks),
                     change(b)] for b, t in bases.items()]), ""]


def _declared(capabilities: dict[str, bool]) -> str:
    """What a tuner declares about keeping evaluations in flight (bat.core.tuner), in words."""
    if capabilities.get("proposes_batches"):
        return "proposes batches"
    return "runs ahead of its results" if capabilities.get("runs_ahead") else "waits for each result"


def write_iohprofiler(out: Path, campaign: Campaign, m: Methodology) -> Path:
    """The campaign's runs at its largest budget in the IOHprofiler format (``bat.analysis.iohprofiler``)."""
    from bat.analysis.iohprofiler import Function, write_campaign

    functions: list[Function] = []
    runs: dict[str, dict[int, Any]] = {}
    for i, t in enumerate(m.targets, start=1):
        functions.append(Function(i, f"{t.benchmark}_{t.gpu}", len(t.dataset.parameters), t.baseline.f_fail))
        for label, curves in t.curves.items():
            runs.setdefault(label, {})[i] = curves
    comment = (f"BAT campaign seed {campaign.seed}, {campaign.repeats} repeats, backend {campaign.backend}; "
               "f(x): recorded kernel time (ms) of the configuration held as best, minimised; one evaluation = "
               "one distinct configuration")
    write_campaign(out, functions, runs, comment)
    return out


def _gate_lines(analysis: Analysis) -> list[str]:
    g = analysis.gate
    assert g is not None
    verdict = ("PASSED" if g.passed else "FAILED: no cell compared" if g.cells.empty
               else f"FAILED: {len(g.regressed)} cell(s) regressed")
    lines = [f"## Gate against `{g.baseline}`: {verdict}", "",
             f"A cell regresses when Holm-adjusted p < {g.alpha:g} (over {len(g.cells)} cells) and "
             f"CLES(current better than baseline) < {g.cles_threshold:g}. Cells compared:"]
    rows = [[f"`{r.label}`", f"{r.benchmark}/{r.gpu}", r.budget, f"{r.median:.3f}",
             f"{r.median_baseline:.3f}", f"{r.cles_better:.2f}", f"{r.p_holm:.2g}",
             "**regressed**" if r.regressed else "ok"]
            for r in g.cells.itertuples()]
    lines += ["", _table(["tuner", "target", "budget", "median", "baseline median", "CLES", "p (Holm)",
                          "verdict"], rows)]
    if g.missing:
        lines += ["", f"Not in the baseline (not gated): {', '.join(g.missing)}."]
    return lines


def _cell(cells: pd.DataFrame, label: str, budget: int) -> str:
    row = cells[(cells["label"] == label) & (cells["budget"] == budget)]
    if row.empty:
        return "-"
    r = row.iloc[0]
    return f"{r['median']:.3f} [{r['q1']:.3f}, {r['q3']:.3f}]"


def _table(header: list[Any], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(out)


def _f(v: float | None) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _records(frame: pd.DataFrame) -> list[dict[Hashable, Any]]:
    return frame.to_dict(orient="records")


def write_outputs(out: Path, campaign: Campaign, analysis: Analysis, records: list[RunRecord], *,
                  plots: bool = True, processes: int = 1) -> dict[str, Path]:
    """``summary.md``, ``results.json``, ``iohprofiler/`` and (unless ``plots`` is False) ``plots/*.png``.

    With ``processes`` > 1 the figures are drawn on that many forked processes (``forked.run_forked``) while
    this one writes the rest: the same files.
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = {"summary": out / "summary.md", "json": out / "results.json"}
    m = analysis.methodology
    jobs: list[Callable[[], list[Path]]] = []
    if plots:
        from bat.analysis.compare.methodology import AXES
        from bat.analysis.compare.plots import convergence_names, convergence_plots, random_bands
        from bat.analysis.compare.score_plots import ecdf_plots, score_plots

        random_bands(campaign)  # computed here once, not in each process
        where = out / "plots"
        jobs += [functools.partial(convergence_plots, campaign, records, where, [name])
                 for name in convergence_names(campaign)]
        if m is not None:
            m.hitting_times()
            jobs += [functools.partial(draw, m, where, [axis]) for draw in (score_plots, ecdf_plots) for axis in AXES]

    def the_rest() -> None:
        write_text(paths["summary"], quarantine.markdown_mark() + markdown(campaign, analysis))
        write_json(paths["json"], campaign, analysis, records)
        if m is not None:
            paths["iohprofiler"] = write_iohprofiler(out / "iohprofiler", campaign, m)

    figures, _ = run_forked(jobs, processes, the_rest)
    for p in (p for drawn in figures for p in drawn):
        paths[p.stem] = p
    return paths
