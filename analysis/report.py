"""Run every analysis on one benchmark's datasets and write the report (Markdown, figures, JSON).

``analyze_benchmark`` computes the numbers and draws the figures of one
benchmark; ``write_report`` writes ``report.md`` (``bat.analysis.report_md``)
and ``results.json`` (every number, with the definitions used) for one or
more benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import numpy as np

from bat.analysis import convergence as conv
from bat.analysis import plots, published
from bat.analysis.centrality import (
    RULE_CHOICES,
    VARIANTS,
    dataset_centrality,
    missing_count,
    proportion_of_centrality,
)
from bat.analysis.data import BenchmarkData, ok_times
from bat.analysis.distribution import distribution
from bat.analysis.ffg import NEIGHBOURHOODS
from bat.analysis.frameworks import other_frameworks
from bat.analysis.importance import permutation_importance, reduced_parameters
from bat.analysis.model import ModelSettings
from bat.analysis.noise import noise_set
from bat.analysis.pagerank_rule import StopRule
from bat.analysis.portability import portability_matrix
from bat.analysis.report_md import markdown
from bat.analysis.score import aggregate, run_curve, score_runs, target_baseline
from bat.analysis.sizes import size_row
from bat.analysis.speedup import DEFINITIONS, Definition, max_speedup_over_median, speedup_over_default
from bat.analysis.surrogate import surrogate_fitness
from bat.core import quarantine
from bat.core.atomic import write_text
from bat.core.errors import UnknownNameError
from bat.data.checks import check_dataset, merge_peers, peers_of, registry_peers

Progress = Callable[[str, float], None]
TARGETS = {"90": 0.90, "95": 0.95}


@dataclass
class AnalyzeSettings:
    """Choices of one report run (all written into the JSON)."""

    speedup_definition: str = "all"
    convergence_definition: str = "median"
    centrality_variant: str = "published"
    neighbourhood: str = "adjacent"
    #: PageRank stopping rule: "auto" (the paper's where it gives a value, l1 elsewhere), "l1" or "networkx"
    centrality_rule: str = "auto"
    importance: bool = True
    pfi_repeats: int = 3
    pfi_max_rows: int | None = None
    model: ModelSettings = field(default_factory=ModelSettings)
    surrogate_for_partial: bool = True
    trace_paths: Sequence[Path] = ()
    noise_alpha: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        for kind, value, valid in (("speedup definition", self.speedup_definition, DEFINITIONS),
                                   ("convergence definition", self.convergence_definition, conv.DEFINITIONS),
                                   ("centrality variant", self.centrality_variant, VARIANTS),
                                   ("centrality stopping rule", self.centrality_rule, RULE_CHOICES),
                                   ("neighbourhood", self.neighbourhood, NEIGHBOURHOODS)):
            if value not in valid:
                raise UnknownNameError(kind, value, list(valid))

    def to_dict(self) -> dict[str, Any]:
        return {"speedup_definition": self.speedup_definition,
                "convergence_definition": self.convergence_definition,
                "centrality_variant": self.centrality_variant, "neighbourhood": self.neighbourhood,
                "centrality_rule": self.centrality_rule,
                "importance": self.importance, "pfi_repeats": self.pfi_repeats,
                "pfi_max_rows": self.pfi_max_rows, "model": self.model.to_dict(),
                "surrogate_for_partial": self.surrogate_for_partial,
                "traces": [str(p) for p in self.trace_paths], "noise_alpha": self.noise_alpha,
                "seed": self.seed}


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

    progress("data checks", 0.0)
    peers = merge_peers(peers_of(data.datasets.values()), registry_peers(b))
    out["data_checks"] = {g: check_dataset(d, data.space, peers).to_dict() for g, d in data.datasets.items()}
    out["flagged"] = [g for g, c in out["data_checks"].items() if c["flagged"]]
    out["noise"] = {g: noise_set(d, settings.noise_alpha).to_dict() for g, d in data.datasets.items()}
    out["frameworks"] = [{**c.to_dict(), "lines": c.lines()} for c in other_frameworks(data.datasets)]

    progress("distribution", 0.0)
    dists = {g: distribution(d) for g, d in data.datasets.items()}
    out["distribution"] = {g: d.summary() for g, d in dists.items()}
    figs["distribution"] = plots.plot_distribution(
        b, {data.gpu_name(g): d for g, d in dists.items()}, figures / f"{b}_distribution")

    out["speedup"] = {"default_definition": settings.speedup_definition, "definitions": DEFINITIONS,
                      "values": {}}
    for g, d in data.datasets.items():
        speedups = {k: max_speedup_over_median(d, k) for k in get_args(Definition)}
        out["speedup"]["values"][g] = {k: s.to_dict() for k, s in speedups.items()}
        check = published.check_speedup(b, g, speedups["all"].value)
        if check:
            out["checks"].append(check)
    out["speedup"]["over_default"] = {g: speedup_over_default(d, d.meta.load_benchmark().raw.get("default")).to_dict()
                                      for g, d in data.datasets.items()}
    out["vendors"] = {g: data.vendor(g) for g in gpus}
    impact = {data.gpu_name(g): {"over_median": out["speedup"]["values"][g][settings.speedup_definition]["value"],
                                 "over_default": out["speedup"]["over_default"][g]["value"]} for g in gpus}
    figs["tuning_impact"] = plots.plot_tuning_impact(
        b, impact, {data.gpu_name(g): v for g, v in out["vendors"].items()}, figures / f"{b}_tuning_impact")

    out["convergence"] = {}
    for i, g in enumerate(data.datasets):
        progress("convergence", i / len(gpus))
        out["convergence"][g] = _convergence(data, g, settings, figures, figs)

    out["methodology"] = _methodology(data, settings)

    out["centrality"] = {}
    cents = {}
    # "auto": dataset_centrality picks the paper's rule where the paper gives a value; a surrogate
    # landscape is this project's, so it gets l1
    rule = None if settings.centrality_rule == "auto" else StopRule(settings.centrality_rule)
    for i, (g, d) in enumerate(data.datasets.items()):
        progress("centrality", i / len(gpus))
        c = dataset_centrality(d, data.space, settings.centrality_variant, settings.neighbourhood, rule)
        cents[g] = c
        entry = {"measured": c.to_dict()}
        if settings.surrogate_for_partial and missing_count(d, data.space) > 0:
            s = surrogate_fitness(d, data.space, rng, settings=settings.model)
            sc = proportion_of_centrality(s.fitness, settings.centrality_variant, settings.neighbourhood,
                                          rule=rule or StopRule("l1"))
            entry["surrogate"] = {**sc.to_dict(), "estimate": s.describe(), "cv_r2": s.cv_r2}
        out["centrality"][g] = entry
    figs["centrality"] = plots.plot_centrality(
        b, {data.gpu_name(g): c for g, c in cents.items()}, figures / f"{b}_centrality")

    reduced = None
    if settings.importance:
        imps = {}
        for i, (g, d) in enumerate(data.datasets.items()):
            def share(f: float, i: int = i) -> None:
                progress("importance", (i + f) / len(gpus))

            imps[g] = permutation_importance(
                d, data.space, rng, repeats=settings.pfi_repeats, settings=settings.model,
                max_rows=settings.pfi_max_rows, progress=share)
        out["importance"] = {g: imp.to_dict() for g, imp in imps.items()}
        reduced = reduced_parameters(imps)
        figs["importance"] = plots.plot_importance(
            b, {data.gpu_name(g): imp for g, imp in imps.items()}, figures / f"{b}_importance")

    progress("portability", 0.0)
    port = portability_matrix(data.datasets, {g: data.vendor(g) for g in gpus})
    out["portability"] = port.to_dict()
    for i, row_gpu in enumerate(port.gpus):
        for j, column_gpu in enumerate(port.gpus):
            check = published.check_portability(b, row_gpu, column_gpu, port.matrix[i, j])
            if check:
                out["checks"].append(check)
    figure = plots.plot_portability(b, port, figures / f"{b}_portability", out["gpus"])
    if figure is not None:
        figs["portability"] = figure

    progress("sizes", 0.0)
    out["sizes"] = size_row(data.space, data.datasets, reduced).to_dict()
    progress("done", 1.0)
    return out


def _convergence(data: BenchmarkData, g: str, settings: AnalyzeSettings, figures: Path,
                 figs: dict[str, Path]) -> dict[str, Any]:
    """Random search exactly under both definitions, tuner traces, n90/n95 under both; one figure."""
    b, definition = data.benchmark, settings.convergence_definition
    times = ok_times(data.datasets[g])
    curve = conv.random_search_curve(times, definition=definition)
    entry: dict[str, Any] = {
        "definition": definition, "definitions": conv.DEFINITIONS, "random_search": curve.to_dict(),
        "random_search_other": conv.random_search_curve(
            times, definition="mean" if definition == "median" else "median").to_dict(),
        "evaluations_to_reach": {d: {k: conv.evaluations_to_reach(times, t, d) for k, t in TARGETS.items()}
                                 for d in conv.DEFINITIONS},
        "reach_rule": "smallest n whose exact median (or mean) relative performance reaches the target",
        "tuners": {}}
    dense = np.unique(np.geomspace(1, len(times), 40).round().astype(int)).tolist()
    curves = [conv.random_search_curve(times, dense, definition)]  # the figure's line, denser than the table
    best = float(times.min())
    for tuner, frames in conv.traces_by_tuner(settings.trace_paths, b, g).items():
        tc = conv.trace_curve(tuner, frames, best, conv.default_budgets(len(times)), definition)
        entry["tuners"][tuner] = {**tc.to_dict(), "evaluations_to_reach": {
            d: {k: conv.trace_evaluations_to_reach(frames, best, t, d) for k, t in TARGETS.items()}
            for d in conv.DEFINITIONS}}
        every = range(1, max(conv.charged_lengths(frames)) + 1)
        curves.append(conv.trace_curve(tuner, frames, best, every, definition))
    figs[f"convergence_{g}"] = plots.plot_convergence(
        f"{b} on {data.gpu_name(g)}: convergence ({definition} over runs)", curves, figures / f"{b}_convergence_{g}")
    return entry


def _methodology(data: BenchmarkData, settings: AnalyzeSettings) -> dict[str, Any]:
    """The methodology score of every tuner with traces (``bat.analysis.score``), per GPU and aggregated."""
    per_gpu: dict[str, Any] = {}
    run_scores: dict[str, dict[str, list[np.ndarray]]] = {}
    for g, d in data.datasets.items():
        groups = conv.traces_by_tuner(settings.trace_paths, data.benchmark, g)
        if not groups:
            continue
        base = target_baseline(d, data.space)
        curves = {t: [run_curve(f, d, base.f_fail) for f in frames] for t, frames in groups.items()}
        window = min(len(c.best) for runs in curves.values() for c in runs)
        if window == 0:
            continue
        seconds = window * base.mean_cost
        orderings = base.orderings(seconds, seed=settings.seed)
        per_gpu[g] = {"evaluation_window": window, "time_window_s": seconds, "simulated_time": base.cost_note,
                      "tuners": {}}
        for t, runs in curves.items():
            axes = score_runs(base, runs, window, seconds, orderings)
            per_gpu[g]["tuners"][t] = {a: s.summary(settings.seed) for a, s in axes.items()}
            for a, s in axes.items():
                run_scores.setdefault(t, {}).setdefault(a, []).append(s.run_scores)
    agg = {t: {a: aggregate(v, settings.seed) for a, v in axes.items()} for t, axes in run_scores.items()}
    return {"per_gpu": per_gpu, "aggregate_over_gpus": agg,
            "definition": "bat.analysis.score: (random - found) / (random - optimum) over the window of the "
                          "shortest trace; 95 % bootstrap intervals over traces"}


def write_report(results: list[dict[str, Any]], settings: AnalyzeSettings, out: Path) -> Path:
    """Write report.md, results.json and the cross-benchmark figure; returns report.md."""
    out.mkdir(parents=True, exist_ok=True)
    definition = settings.speedup_definition
    values = {r["benchmark"]: {r["gpus"][g]: v[definition]["value"] for g, v in r["speedup"]["values"].items()}
              for r in results}  # GPUs by name, as in every other figure
    plots.plot_speedup(values, f"{definition}: {DEFINITIONS[definition]}", out / "figures" / "speedup")
    payload = {"settings": settings.to_dict(), "benchmarks": results, "quarantined": quarantine.seen()}
    write_text(out / "results.json", json.dumps(payload, indent=1, default=_json_default))
    return write_text(out / "report.md", quarantine.markdown_mark() + markdown(results, settings.to_dict(), out))


def _json_default(v: Any) -> Any:
    if isinstance(v, Path):
        return v.as_posix()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot write {type(v).__name__} to JSON")
