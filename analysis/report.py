"""Run every analysis on one benchmark's datasets and write the report (Markdown, figures, JSON).

``analyze_benchmark`` computes the numbers and draws the figures of one
benchmark; ``write_report`` writes ``report.md`` and ``results.json`` (every
number, with the definitions used) for one or more benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analysis import plots, published
from analysis.centrality import VARIANTS, dataset_centrality, missing_count, proportion_of_centrality
from analysis.convergence import (
    default_budgets,
    evaluations_to_reach,
    random_search_curve,
    trace_curve,
    traces_by_tuner,
)
from analysis.data import BenchmarkData, ok_times
from analysis.distribution import distribution
from analysis.ffg import NEIGHBOURHOODS
from analysis.importance import permutation_importance, reduced_parameters
from analysis.model import ModelSettings
from analysis.portability import portability_matrix
from analysis.sizes import size_row
from analysis.speedup import DEFINITIONS, max_speedup_over_median
from analysis.surrogate import surrogate_fitness
from bat.errors import UnknownNameError

Progress = Callable[[str, float], None]


@dataclass
class AnalyzeSettings:
    """Choices of one report run (all written into the JSON)."""

    speedup_definition: str = "all"
    centrality_variant: str = "published"
    neighbourhood: str = "adjacent"
    importance: bool = True
    pfi_repeats: int = 3
    pfi_max_rows: int | None = None
    model: ModelSettings = field(default_factory=ModelSettings)
    surrogate_for_partial: bool = True
    trace_paths: Sequence[Path] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        for kind, value, valid in (("speedup definition", self.speedup_definition, DEFINITIONS),
                                   ("centrality variant", self.centrality_variant, VARIANTS),
                                   ("neighbourhood", self.neighbourhood, NEIGHBOURHOODS)):
            if value not in valid:
                raise UnknownNameError(kind, value, list(valid))

    def to_dict(self) -> dict[str, Any]:
        return {"speedup_definition": self.speedup_definition,
                "centrality_variant": self.centrality_variant, "neighbourhood": self.neighbourhood,
                "importance": self.importance, "pfi_repeats": self.pfi_repeats,
                "pfi_max_rows": self.pfi_max_rows, "model": self.model.to_dict(),
                "surrogate_for_partial": self.surrogate_for_partial,
                "traces": [str(p) for p in self.trace_paths], "seed": self.seed}


def _quiet(_step: str, _fraction: float) -> None:
    return None


def analyze_benchmark(data: BenchmarkData, settings: AnalyzeSettings, figures: Path,
                      progress: Progress = _quiet) -> dict[str, Any]:
    """Every analysis of one benchmark; figures go to ``figures``; returns every number."""
    rng = np.random.default_rng(settings.seed)
    b, gpus = data.benchmark, data.gpus
    out: dict[str, Any] = {"benchmark": b, "gpus": {g: data.gpu_name(g) for g in gpus},
                           "figures": {}, "checks": []}
    figs = out["figures"]

    progress("distribution", 0.0)
    dists = {g: distribution(d) for g, d in data.datasets.items()}
    out["distribution"] = {g: d.summary() for g, d in dists.items()}
    figs["distribution"] = plots.plot_distribution(
        b, {data.gpu_name(g): d for g, d in dists.items()}, figures / f"{b}_distribution")

    out["speedup"] = {"default_definition": settings.speedup_definition, "definitions": DEFINITIONS,
                      "values": {}}
    for g, d in data.datasets.items():
        both = {k: max_speedup_over_median(d, k).to_dict() for k in DEFINITIONS}
        out["speedup"]["values"][g] = both
        check = published.check_speedup(b, g, both["all"]["value"])
        if check:
            out["checks"].append(check)

    out["convergence"] = {}
    for i, (g, d) in enumerate(data.datasets.items()):
        progress("convergence", i / len(gpus))
        times = ok_times(d)
        curve = random_search_curve(times)
        entry: dict[str, Any] = {"random_search": curve.to_dict(),
                                 "evaluations_to_90pct": evaluations_to_reach(times, 0.90),
                                 "evaluations_to_95pct": evaluations_to_reach(times, 0.95),
                                 "reach_rule": "smallest n with expected relative performance >= target",
                                 "tuners": {}}
        curves = [curve]
        for tuner, frames in traces_by_tuner(settings.trace_paths, b, g).items():
            tc = trace_curve(tuner, frames, float(times.min()), default_budgets(len(times)))
            entry["tuners"][tuner] = tc.to_dict()
            curves.append(tc)
        out["convergence"][g] = entry
        figs[f"convergence_{g}"] = plots.plot_convergence(
            f"{b} on {data.gpu_name(g)}: convergence", curves, figures / f"{b}_convergence_{g}")

    out["centrality"] = {}
    cents = {}
    for i, (g, d) in enumerate(data.datasets.items()):
        progress("centrality", i / len(gpus))
        c = dataset_centrality(d, data.space, settings.centrality_variant, settings.neighbourhood)
        cents[g] = c
        entry = {"measured": c.to_dict()}
        if settings.surrogate_for_partial and missing_count(d, data.space) > 0:
            s = surrogate_fitness(d, data.space, rng, settings=settings.model)
            sc = proportion_of_centrality(s.fitness, settings.centrality_variant, settings.neighbourhood)
            entry["surrogate"] = {**sc.to_dict(), "estimate": s.describe(), "cv_r2": s.cv_r2}
        out["centrality"][g] = entry
    figs["centrality"] = plots.plot_centrality(
        b, {data.gpu_name(g): c for g, c in cents.items()}, figures / f"{b}_centrality")

    reduced = None
    if settings.importance:
        imps = {}
        for i, (g, d) in enumerate(data.datasets.items()):
            imps[g] = permutation_importance(
                d, data.space, rng, repeats=settings.pfi_repeats, settings=settings.model,
                max_rows=settings.pfi_max_rows,
                progress=lambda f, i=i: progress("importance", (i + f) / len(gpus)))
        out["importance"] = {g: imp.to_dict() for g, imp in imps.items()}
        reduced = reduced_parameters(imps)
        figs["importance"] = plots.plot_importance(
            b, {data.gpu_name(g): imp for g, imp in imps.items()}, figures / f"{b}_importance")

    progress("portability", 0.0)
    port = portability_matrix(data.datasets)
    out["portability"] = port.to_dict()
    for i, r in enumerate(port.gpus):
        for j, c in enumerate(port.gpus):
            check = published.check_portability(b, r, c, port.matrix[i, j])
            if check:
                out["checks"].append(check)
    figs["portability"] = plots.plot_portability(b, port, figures / f"{b}_portability", out["gpus"])

    progress("sizes", 0.0)
    out["sizes"] = size_row(data.space, data.datasets, reduced).to_dict()
    progress("done", 1.0)
    return out


def _fmt(v: Any, digits: int = 3) -> str:
    return f"{v:.{digits}f}" if isinstance(v, float) and np.isfinite(v) else str(v)


def _markdown(results: list[dict[str, Any]], settings: AnalyzeSettings, out: Path) -> str:
    definition = settings.speedup_definition
    lines = ["# BAT analysis report", "",
             f"Settings: `{json.dumps(settings.to_dict())}`", "",
             "## Max speedup over median", "",
             f"Definition used: **{definition}**: {DEFINITIONS[definition]}. "
             "The other definition is in results.json.", "",
             "![speedup](figures/speedup.png)", ""]
    checks = [c for r in results for c in r["checks"]]
    if checks:
        lines += ["## Checks against published values", "", "| value | published | ours | |",
                  "|---|---|---|---|"]
        lines += [f"| {c['what']} | {c['published']} | {c['ours']} | "
                  f"{'matches' if c['matches'] else '**does not come out**'} |" for c in checks]
        lines += ["", "GEMM: the paper's GEMM values are not in this project's spec; "
                  "none is checked.", ""]
    for r in results:
        b = r["benchmark"]
        rel = lambda p: Path(p).relative_to(out).as_posix()  # noqa: E731
        lines += [f"## {b}", "", "| GPU | valid | speedup (" + definition + ") | "
                  "random search: evals to 90 % | to 95 % |", "|---|---|---|---|---|"]
        for g, name in r["gpus"].items():
            conv = r["convergence"][g]
            lines.append(f"| {name} | {r['distribution'][g]['n_valid']} | "
                         f"{_fmt(r['speedup']['values'][g][definition]['value'])} | "
                         f"{conv['evaluations_to_90pct']} | {conv['evaluations_to_95pct']} |")
        lines += ["", "Convergence: exact expectation of random search without replacement "
                  "(order statistics) with the exact interquartile band.", ""]
        lines += [f"![{k}]({rel(p)})" for k, p in r["figures"].items()] + [""]
        lines += ["Proportion of centrality at p = 0, 0.05, 0.10, 0.15:", ""]
        for g, c in r["centrality"].items():
            m = c["measured"]
            at = [_fmt(m["proportion"][k]) for k in (0, 5, 10, 15)]
            lines.append(f"- {g} ({m['variant']}, {m['neighbourhood']}; {m['n_nodes']} nodes, "
                         f"{m['n_local_minima']} local minima): {', '.join(at)}"
                         + "".join(f"; {n}" for n in m["notes"]))
            if "surrogate" in c:
                s = c["surrogate"]
                at = [_fmt(s["proportion"][k]) for k in (0, 5, 10, 15)]
                lines.append(f"  - surrogate landscape ({s['estimate']}): {', '.join(at)}")
        if "importance" in r:
            lines += ["", "Permutation feature importance (CatBoost; CV R^2 per GPU: "
                      + ", ".join(f"{g} {_fmt(v['cv_r2'])}" for g, v in r["importance"].items())
                      + f"). Reduced space: {r['sizes']['reduced_parameters']}."]
        s = r["sizes"]
        reduced = ("reduced {reduced}, reduced constrained {reduced_constrained}".format(**s)
                   if s["reduced"] is not None else "reduced sizes not computed (no importance run)")
        lines += ["", "Sizes: cardinality {cardinality}, constrained {constrained}, valid per GPU "
                  "{valid}, ".format(**s) + reduced + ".", ""]
        lines += ["Portability (tuned on row, run on column, %): "
                  + "; ".join(f"{k} {_fmt(v * 100, 1) if isinstance(v, float) else v}"
                              for k, v in r["portability"]["cells"].items()), ""]
    return "\n".join(lines)


def write_report(results: list[dict[str, Any]], settings: AnalyzeSettings, out: Path) -> Path:
    """Write report.md, results.json and the cross-benchmark figure; returns report.md."""
    out.mkdir(parents=True, exist_ok=True)
    definition = settings.speedup_definition
    values = {r["benchmark"]: {g: v[definition]["value"] for g, v in r["speedup"]["values"].items()}
              for r in results}
    plots.plot_speedup(values, f"{definition}: {DEFINITIONS[definition]}", out / "figures" / "speedup")
    payload = {"settings": settings.to_dict(), "benchmarks": results}
    (out / "results.json").write_text(json.dumps(payload, indent=1, default=_json_default))
    path = out / "report.md"
    path.write_text(_markdown(results, settings, out))
    return path


def _json_default(v: Any) -> Any:
    if isinstance(v, Path):
        return v.as_posix()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot write {type(v).__name__} to JSON")
