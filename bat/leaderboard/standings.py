"""The numbers a leaderboard shows, derived from its sources alone: rankings, drill-downs, tuners and targets.

``derive`` is a pure function of the sources (``bat.leaderboard.sources``):
the site's ``standings.json`` is its output, every page is drawn from it, and
``bat leaderboard --verify`` derives it again from the stored results.

The methodology score (``bat.analysis.score``) of a tuner on a target, and
its 95 % interval, are those its results folder computed. A group of targets
(all of them, a benchmark family, a GPU) scores a tuner by the mean of its
target scores over the targets it ran. The interval of that mean: when every
target comes from one folder and that folder's aggregate covers exactly
those targets, the folder's own bootstrap interval (``exact``); otherwise a
normal approximation, each target's interval read as mean +- z * se and the
targets independent (``normal``), said next to the number.

A transfer study (``bat.leaderboard.transfer``) is not merged into these
rankings: its tuners were given other GPUs' data as a prior. ``transfer``
holds, per study and per split (the prior rule), its own ranking by the
study's methodology score over the split's held-out targets (the study's
bootstrap interval), and per held-out target the scores, the median
evaluations to each goal and the gain over random search's exact median, as
the study computed them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bat.leaderboard.curves import curves, ecdf
from bat.leaderboard.sources import AXES, Source, campaigns, owners, target_key

Interval = dict[str, Any]
_Z = 1.959963984540054  # the two-sided 95 % quantile of the standard normal


def _combine(parts: list[dict[str, Any]]) -> Interval:
    """The mean of target scores with the normal approximation of its interval (``None`` bounds if unknown)."""
    scores = [p["score"] for p in parts if p.get("score") is not None]
    if not scores:
        return {"score": None, "ci_low": None, "ci_high": None, "targets": 0, "interval": "none"}
    mean = sum(scores) / len(scores)
    known = [p for p in parts if p.get("score") is not None]
    if any(p.get("ci_low") is None or p.get("ci_high") is None for p in known):
        return {"score": mean, "ci_low": None, "ci_high": None, "targets": len(scores), "interval": "none"}
    se = math.sqrt(sum(((p["ci_high"] - p["ci_low"]) / (2 * _Z)) ** 2 for p in known)) / len(known)
    return {"score": mean, "ci_low": mean - _Z * se, "ci_high": mean + _Z * se, "targets": len(scores),
            "interval": "normal"}


def _group(sources: Sequence[Source], cells: dict[tuple[str, str, str], dict[str, Any]],
           owner: dict[tuple[str, str, str], int], label: str, targets: list[str]) -> dict[str, Interval]:
    """``label``'s score on each axis over ``targets`` (those it ran)."""
    mine = [t for t in targets if (label, *target_key(t)) in cells]
    homes = {owner[(label, *target_key(t))] for t in mine}
    out = {}
    for axis in AXES:
        if len(homes) == 1:
            doc = sources[next(iter(homes))].doc
            ran = [n for n, t in doc["methodology"]["targets"].items() if label in t["scores"]]
            agg = doc["methodology"].get("aggregate", {}).get(label, {}).get(axis)
            if sorted(ran) == sorted(mine) and agg is not None:
                out[axis] = {"score": agg.get("score"), "ci_low": agg.get("ci_low"), "ci_high": agg.get("ci_high"),
                             "targets": len(mine), "interval": "exact"}
                continue
        out[axis] = _combine([cells[(label, *target_key(t))][axis] for t in mine])
    return out


def _ranking(labels: list[str], scores: dict[str, dict[str, Interval]]) -> list[dict[str, Any]]:
    """Rows by the score on evaluations, best first (no score last), then by the time axis and the label;
    ``rank_time`` is the rank by the time axis first."""
    def key(first: str, second: str) -> Any:
        def order(label: str) -> tuple[Any, ...]:
            a, b = scores[label][first]["score"], scores[label][second]["score"]
            return (a is None, -(a or 0.0), b is None, -(b or 0.0), label)
        return order

    by_time = {label: i for i, label in enumerate(sorted(labels, key=key("time", "evaluations")), start=1)}
    return [{"rank": i, "rank_time": by_time[label], "tuner": label, **scores[label]}
            for i, label in enumerate(sorted(labels, key=key("evaluations", "time")), start=1)]


def _by_budget(targets: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per evaluation budget: each tuner's mean over targets of its cell's score against random search and
    of its median relative performance, best score first (no score last)."""
    cells: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for t in targets.values():
        for c in t["budget_cells"]:
            cells.setdefault((c["budget"], c["label"]), []).append(c)
    out: dict[str, list[dict[str, Any]]] = {}
    for budget in sorted({b for b, _ in cells}):
        rows: list[dict[str, Any]] = []
        for label in sorted({lab for b, lab in cells if b == budget}):
            mine = cells[(budget, label)]
            scores = [c["score"] for c in mine if c.get("score") is not None]
            medians = [c["median"] for c in mine if c.get("median") is not None]
            rows.append({"tuner": label, "targets": len(mine),
                         "score": sum(scores) / len(scores) if scores else None,
                         "median": sum(medians) / len(medians) if medians else None})
        rows.sort(key=lambda r: (r["score"] is None, -(r["score"] or 0.0), r["tuner"]))
        out[str(budget)] = [{"rank": i, **r} for i, r in enumerate(rows, start=1)]
    return out


def derive(sources: Sequence[Source], datasets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every number of the site, from ``sources`` and the facts of their ``datasets`` (per target, as
    ``bat.leaderboard.provenance`` finds them); SourceError on a conflict between the sources."""
    owner = owners(sources)
    cells: dict[tuple[str, str, str], dict[str, Any]] = {}
    targets: dict[str, dict[str, Any]] = {}
    tuners: dict[str, dict[str, Any]] = {}
    for i, s in enumerate(sources):
        if s.transfer:
            continue
        campaign, sealed = s.doc["campaign"], s.doc.get("sealed")
        for t in campaign["tuners"]:
            entry = tuners.setdefault(t["label"], {"spec": t["spec"], "options": t["options"], "sources": [],
                                                   "isolated": [], "sealed": []})
            entry["sources"].append(s.name)
            entry["isolated"].append(bool(campaign.get("isolate")))
            code = None if sealed is None else sealed.get("tuners", {}).get(t["label"])
            entry["sealed"].append(None if code is None or sealed is None else {
                "code_digest": code["code_digest"], "library": code["library"],
                "library_version": code["library_version"], "bat_version": sealed["bat_version"]})
        for name, target in s.doc["methodology"]["targets"].items():
            benchmark, gpu = target_key(name)
            for label, axes in target["scores"].items():
                if owner[(label, benchmark, gpu)] == i:
                    cells[(label, benchmark, gpu)] = {axis: {k: axes[axis].get(k) for k in ("score", "ci_low",
                                                                                            "ci_high", "runs")}
                                                      for axis in AXES}
            if name not in targets:
                targets[name] = {"benchmark": benchmark, "gpu": gpu, "source": s.name,
                                 "backend": campaign.get("backend"), "repeats": campaign["repeats"],
                                 "budgets": campaign["budgets"],
                                 **{k: target.get(k) for k in ("evaluation_window", "time_window_s",
                                                               "simulated_time", "noise_aware_optimum",
                                                               "data_checks")},
                                 "budget_cells": [], "success": [], "convergence": {}, "ecdf": {},
                                 "recorded_dataset": (sealed or {}).get("datasets", {}).get(name),
                                 "dataset": datasets.get(name, {"found": False, "why": "not looked up"})}
            mine = [r for r in s.doc["runs"] if (r["meta"]["benchmark"], r["meta"]["gpu"]) == (benchmark, gpu)
                    and owner.get((r["meta"]["label"], benchmark, gpu)) == i]
            targets[name]["convergence"].update(curves(mine, max(campaign["budgets"])))
            hits = [h for h in s.doc["methodology"].get("hitting_times", [])
                    if (h.get("benchmark"), h.get("gpu")) == (benchmark, gpu)
                    and owner.get((h.get("label"), benchmark, gpu)) == i]
            targets[name]["ecdf"].update(ecdf(hits, max(campaign["budgets"])))
        for row in s.doc["cells"]:
            key = (row.get("label"), row.get("benchmark"), row.get("gpu"))
            if owner.get(key) == i:
                targets[f"{key[1]}/{key[2]}"]["budget_cells"].append(
                    {k: row.get(k) for k in ("label", "budget", "n", "median", "q1", "q3", "score")})
        for row in s.doc["methodology"].get("success_rates", []):
            key = (row.get("label"), row.get("benchmark"), row.get("gpu"))
            if owner.get(key) == i:
                targets[f"{key[1]}/{key[2]}"]["success"].append(
                    {k: row.get(k) for k in ("label", "budget", "runs", "successes")})
    labels = sorted(tuners)
    names = sorted(targets)

    def ranking(subset: list[str]) -> list[dict[str, Any]]:
        ran = [lab for lab in labels if any((lab, *target_key(t)) in cells for t in subset)]
        return _ranking(ran, {lab: _group(sources, cells, owner, lab, subset) for lab in ran})

    families = sorted({targets[t]["benchmark"] for t in names})
    gpus = sorted({targets[t]["gpu"] for t in names})
    for name, target in targets.items():
        target["scores"] = _ranking([lab for lab in labels if (lab, *target_key(name)) in cells],
                                    {lab: cells[(lab, *target_key(name))] for lab in labels
                                     if (lab, *target_key(name)) in cells})
    for label, entry in tuners.items():
        entry["targets"] = [{"target": t, **cells[(label, *target_key(t))]} for t in names
                            if (label, *target_key(t)) in cells]
    return {
        "sources": [{"name": s.name, "sha256": s.sha256, "tuners": [t["label"] for t in s.doc["campaign"]["tuners"]],
                     "targets": sorted(s.doc["methodology"]["targets"])} for s in campaigns(sources)],
        "overall": ranking(names),
        "benchmarks": {f: ranking([t for t in names if targets[t]["benchmark"] == f]) for f in families},
        "gpus": {g: ranking([t for t in names if targets[t]["gpu"] == g]) for g in gpus},
        "budgets": _by_budget(targets),
        "targets": targets,
        "tuners": tuners,
        "transfer": [_transfer(s) for s in sources if s.transfer],
    }


_GOAL_FIELDS = ("goal", "runs", "median", "ci_low", "ci_high", "censored", "random_exact_median", "gain")


def _transfer(source: Source) -> dict[str, Any]:
    """One transfer study's numbers: per split its ranking over the held-out targets and each target's scores
    and evaluations to the goals (the module docstring)."""
    doc = source.doc
    study = doc["study"]
    splits = []
    for split in study["splits"]:
        m = doc["methodology"].get(split["prior"])
        if m is None:  # no target of this split had data
            continue
        ran = {lab: [n for n, t in m["targets"].items() if lab in t["scores"]] for lab in m["aggregate"]}
        ranking = _ranking(sorted(ran), {lab: {axis: {**{k: m["aggregate"][lab][axis].get(k)
                                                         for k in ("score", "ci_low", "ci_high")},
                                                      "targets": len(ran[lab]), "interval": "exact"}
                                               for axis in AXES} for lab in ran})
        targets = []
        for t in split["targets"]:
            name = f"{t['benchmark']}/{t['gpu']}"
            scores = m["targets"].get(name, {}).get("scores", {})
            rows = [r for r in doc["rows"] if (r["split"], r["benchmark"], r["gpu"]) == (split["prior"],
                                                                                          t["benchmark"], t["gpu"])]
            targets.append({
                "target": name, "sources": t["sources"],
                "scores": _ranking(sorted(scores), {lab: {axis: {k: sc[axis].get(k) for k in ("score", "ci_low",
                                                                                             "ci_high", "runs")}
                                                          for axis in AXES} for lab, sc in scores.items()}),
                "goals": {lab: [{k: r[k] for k in _GOAL_FIELDS} for r in rows if r["label"] == lab]
                          for lab in sorted({r["label"] for r in rows})}})
        splits.append({"prior": split["prior"], "name": split["name"], "ranking": ranking, "targets": targets})
    return {"source": source.name, "sha256": source.sha256, "floor": study["floor"], "budget": study["budget"],
            "repeats": study["campaign"]["repeats"], "goals": doc["goals"], "censoring": doc["censoring"],
            "tuners": [{"label": t["label"], "spec": t["spec"], "options": t["options"],
                        "prior": t["label"] != study["floor"]} for t in study["campaign"]["tuners"]],
            "splits": splits}
