"""The Markdown of ``bat analyze``: every number of results.json a reader needs, with its definition.

A dataset flagged by the data checks (``bat.data.checks``) is marked
wherever it appears (tables and lists), and the reasons are listed once.
Settings, sizes and portability are tables; a GPU is named as in the figures
(its name, from the dataset) everywhere; text from data goes into a table
cell through ``_cell`` (one line, ``|`` escaped), never as a Python repr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bat.analysis.convergence import DEFINITIONS as CONVERGENCE
from bat.analysis.noise import TEST as NOISE_TEST
from bat.analysis.speedup import DEFINITIONS as SPEEDUP

FLAG = " ⚠"


def _fmt(v: Any, digits: int = 3) -> str:
    return f"{v:.{digits}f}" if isinstance(v, float) and np.isfinite(v) else str(v)


def _cell(v: Any) -> str:
    """A value as a Markdown table cell: lists joined, None as -, on one line, ``|`` escaped."""
    if v is None:
        v = "-"
    elif isinstance(v, list | tuple):
        v = ", ".join(map(str, v)) or "-"
    elif isinstance(v, bool):
        v = "yes" if v else "no"
    return " ".join(str(v).split()).replace("|", "\\|")


def _flat(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested settings as (dotted key, value) rows."""
    rows: list[tuple[str, Any]] = []
    for k, v in d.items():
        rows += _flat(v, f"{prefix}{k}.") if isinstance(v, dict) else [(f"{prefix}{k}", v)]
    return rows


def settings_table(settings: dict[str, Any]) -> list[str]:
    """The analysis settings as a two-column table."""
    return ["| setting | value |", "|---|---|", *(f"| {_cell(k)} | {_cell(v)} |" for k, v in _flat(settings))]


def portability_table(cells: dict[str, Any], names: dict[str, str]) -> list[str]:
    """The portability matrix (tuned on row, run on column, %) as a table; a reason where a cell is empty."""
    gpus = list(names)
    lines = ["| tuned on \\ run on | " + " | ".join(_cell(names[c]) for c in gpus) + " |",
             "|---|" + "---|" * len(gpus)]
    for r in gpus:
        row = [cells.get(f"{r}->{c}") for c in gpus]
        lines.append(f"| {_cell(names[r])} | " + " | ".join(
            _fmt(v * 100, 1) if isinstance(v, float) else _cell(v) for v in row) + " |")
    return lines


def _stopping(s: dict[str, Any]) -> str:
    """How a centrality's PageRank stopped: rule, iterations, residual, error bound of the proportions."""
    state = "" if s["converged"] else ", NOT converged"
    return (f"PageRank rule {s['rule']} (tol {s['tol']:g}), {s['iterations']} iterations, residual "
            f"{s['residual']:.2g}{state}, proportions within {s['proportion_error_bound']:.2g}")


def centrality_lines(centrality: dict[str, Any], mark: dict[str, str],
                     names: dict[str, str] | None = None) -> list[str]:
    """One item per GPU (and its surrogate landscape): proportions and how PageRank stopped."""
    lines = []
    for g, c in centrality.items():
        m = c["measured"]
        at = [_fmt(m["proportion"][k]) for k in (0, 5, 10, 15)]
        lines.append(f"- {(names or {}).get(g, g)}{mark[g]} ({m['variant']}, {m['neighbourhood']}; "
                     f"{m['n_nodes']} nodes, "
                     f"{m['n_local_minima']} local minima; {_stopping(m['stopping'])}): {', '.join(at)}"
                     + "".join(f"; {n}" for n in m["notes"]))
        if "surrogate" in c:
            s = c["surrogate"]
            at = [_fmt(s["proportion"][k]) for k in (0, 5, 10, 15)]
            lines.append(f"  - surrogate landscape ({s['estimate']}; {_stopping(s['stopping'])}): {', '.join(at)}")
    return lines


def _interval(s: dict[str, Any]) -> str:
    if s.get("score") is None:
        return "-"
    ci = f" [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]" if s.get("ci_low") is not None else ""
    return f"{s['score']:+.3f}{ci}"


def markdown(results: list[dict[str, Any]], settings: dict[str, Any], out: Path) -> str:
    """The whole report."""
    speedup, definition = settings["speedup_definition"], settings["convergence_definition"]
    other = "mean" if definition == "median" else "median"
    lines = ["# BAT analysis report", "", "## Settings", "", *settings_table(settings), ""]
    flagged = [(r["benchmark"], g, c) for r in results for g, c in r["data_checks"].items() if c["flagged"]]
    if flagged:
        lines += ["## Flagged datasets (data checks)", "",
                  f"Marked{FLAG} wherever they appear. Ratios within a flagged dataset (speedups, portability "
                  "percentages, convergence) still hold; absolute times compared across GPUs do not.", ""]
        names = {(r["benchmark"], g): n for r in results for g, n in r["gpus"].items()}
        lines += [f"- **{b} on {names[b, g]}**: " + "; ".join(f"{f['check']}: {f['message']}" for f in c["findings"]
                                                             if f["flagged"]) for b, g, c in flagged]
        lines += [""]
    lines += ["## Max speedup over median", "",
              f"Definition used: **{speedup}**: {SPEEDUP[speedup]}. The other definition is in results.json.", "",
              "![speedup](figures/speedup.png)", ""]
    checks = [c for r in results for c in r["checks"]]
    if checks:
        lines += ["## Checks against published values", "", "| value | published | ours | |", "|---|---|---|---|"]
        lines += [f"| {_cell(c['what'])} | {_cell(c['published'])} | {_cell(c['ours'])} | "
                  f"{'matches' if c['matches'] else '**does not come out**'} |" for c in checks]
        lines += ["", "GEMM is not checked: the published values used here (analysis/published.py) do not "
                      "include GEMM's.", ""]
    for r in results:
        lines += _benchmark(r, speedup, definition, other, out)
    return "\n".join(lines)


def _benchmark(r: dict[str, Any], speedup: str, definition: str, other: str, out: Path) -> list[str]:
    b = r["benchmark"]
    names = r["gpus"]
    mark = {g: FLAG if g in r["flagged"] else "" for g in names}
    lines = [f"## {b}", "",
             f"| GPU | vendor | valid | speedup ({speedup}) | over default | n90 ({definition}) | "
             f"n95 ({definition}) | n90 ({other}) | n95 ({other}) | noise-aware optimum |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for g, name in r["gpus"].items():
        reach = r["convergence"][g]["evaluations_to_reach"]
        n = r["noise"][g]
        over_default = r["speedup"]["over_default"][g]["value"]
        lines.append(f"| {_cell(name)}{mark[g]} | {_cell(r['vendors'][g] or '?')} | "
                     f"{r['distribution'][g]['n_valid']} | "
                     f"{_fmt(r['speedup']['values'][g][speedup]['value'])} | "
                     f"{_fmt(over_default) if over_default is not None else 'n/a'} | {reach[definition]['90']} | "
                     f"{reach[definition]['95']} | {reach[other]['90']} | {reach[other]['95']} | "
                     f"{n['size']} within {n['slowest_over_best']:.4f} x the best |")
    no_default = {r["speedup"]["over_default"][g]["reason"] for g in r["gpus"]} - {""}
    if no_default:
        lines += ["", "Over default: the best configuration's speedup over the space's default configuration; "
                  "n/a: " + "; ".join(sorted(no_default)) + "."]
    lines += ["", f"n90/n95: evaluations random search needs until its exact {definition} relative performance "
                  f"reaches 90 % / 95 % ({CONVERGENCE[definition]}); the {other} is given beside it. Both exact "
                  "(hypergeometric order statistics, drawing without replacement from the valid configurations).",
              "", f"Noise-aware optimum ({NOISE_TEST}, alpha {next(iter(r['noise'].values()))['alpha']:g}): "
                  "the configurations the test cannot tell apart from the best one; per GPU: "
              + "; ".join(f"{names[g]}{mark[g]} {n['size']} configuration(s), median spread of repeats (CV) "
                          + (f"{n['median_cv_of_repeats']:.2%}" if n["median_cv_of_repeats"] is not None else "n/a")
                          + f", random search draws one after {n['random_search_evaluations_to_hit']['median']} "
                            f"evaluations (median)" + (f" ({n['note']})" if n["note"] else "")
                          for g, n in r["noise"].items()) + ".", ""]
    if r.get("frameworks"):
        lines += ["Other frameworks' data of these GPUs (docs/METHODS.md, 9a; "
                  "`bat.analysis.frameworks`):", "", *(f"- {line.strip()}" for c in r["frameworks"]
                                                       for line in c["lines"]), ""]
    tuner_rows = [(g, t, v) for g, c in r["convergence"].items() for t, v in c["tuners"].items()]
    if tuner_rows:
        lines += [f"Tuner traces (sample {definition} over runs):", "", "| GPU | tuner | runs' n90 | n95 |",
                  "|---|---|---|---|"]
        lines += [f"| {_cell(names[g])}{mark[g]} | {_cell(t)} | "
                  f"{v['evaluations_to_reach'][definition]['90'] or 'not reached'} | "
                  f"{v['evaluations_to_reach'][definition]['95'] or 'not reached'} |" for g, t, v in tuner_rows]
        lines += [""]
    meth = r["methodology"]
    if meth["per_gpu"]:
        lines += ["Methodology score (0 = random search, 1 = the optimum; 95 % bootstrap interval over traces; "
                  "`bat.analysis.score`):", "", "| GPU | tuner | evaluations | time |", "|---|---|---|---|"]
        for g, e in meth["per_gpu"].items():
            lines += [f"| {_cell(names[g])}{mark[g]} | {_cell(t)} | {_interval(s['evaluations'])} | "
                      f"{_interval(s['time'])} |"
                      for t, s in e["tuners"].items()]
        lines += [f"| all GPUs | {_cell(t)} | {_interval(s['evaluations'])} | {_interval(s['time'])} |"
                  for t, s in meth["aggregate_over_gpus"].items()]
        lines += ["", "Simulated time: " + "; ".join(f"{names[g]}: {e['simulated_time']}"
                                                       for g, e in meth["per_gpu"].items()) + ".", ""]
    lines += [f"![{k}]({Path(p).relative_to(out).as_posix()})" for k, p in r["figures"].items()] + [""]
    lines += ["Proportion of centrality at p = 0, 0.05, 0.10, 0.15:", ""]
    lines += centrality_lines(r["centrality"], mark, names)
    if "importance" in r:
        lines += ["", "Permutation feature importance (CatBoost; CV R^2 per GPU: "
                  + ", ".join(f"{names[g]} {_fmt(v['cv_r2'])}" for g, v in r["importance"].items())
                  + f"). Reduced space: {_cell(r['sizes']['reduced_parameters'])}."]
    s = r["sizes"]
    lines += ["", "Sizes:", "", "| size | configurations |", "|---|---|",
              f"| cardinality | {s['cardinality']} |", f"| constrained | {s['constrained']} |",
              *(f"| valid on {_cell(names.get(g, g))} | {v} |" for g, v in s["valid"].items()),
              *([f"| reduced ({_cell(s['reduced_parameters'])}) | {s['reduced']} |",
                 f"| reduced, constrained | {s['reduced_constrained']} |"] if s["reduced"] is not None
                else ["| reduced | not computed (no importance run) |"]), ""]
    if len(r["gpus"]) < 2:
        lines += ["Portability: data on one GPU only, nothing to compare (no figure).", ""]
    else:
        lines += ["Portability (tuned on the row's GPU, run on the column's: % of the column's best):", "",
                  *portability_table(r["portability"]["cells"], names), ""]
        across = r["portability"].get("across_vendors") or {}
        if across:
            lines += ["Across vendors (tuned on one vendor's GPU, run on the other's): " + "; ".join(
                f"{k.replace('->', ' to ')}: mean {_fmt(v['mean'] * 100, 1)} %, worst {_fmt(v['worst'] * 100, 1)} %"
                if v["mean"] is not None else f"{k.replace('->', ' to ')}: no cell measured"
                for k, v in across.items()) + " (empty cells: "
                + ", ".join(f"{k} {v['empty']} of {v['cells']}" for k, v in across.items()) + ").", ""]
    return lines
