"""A campaign seen as the field reports it: methodology score, success on the optimum, fixed targets, data checks.

Per replayed target (benchmark on a GPU) this gathers its random-search
baseline (``bat.analysis.score``), its noise-aware optimum (``bat.analysis.noise``),
its data checks (``bat.data.checks``) and, per tuner, the curves of the runs
made at the campaign's largest budget. From those:

- the methodology score on evaluations (window 1..largest budget) and on
  simulated time (window (0, largest budget x mean recorded cost of an
  evaluation of the space]; on K compile workers or G devices, random
  search's mean clock there, bat.analysis.score), per target with a
  bootstrap interval, and aggregated over targets;
- success: the share of runs whose configuration held after b evaluations
  is in the noise-aware optimum set (``success = "noise"``, the default) or
  within a ratio of the optimum (``success = "1.05"``: recorded time <= 1.05
  x the best), at every budget of the campaign (runs made for that budget,
  or prefixes of runs of budget-agnostic tuners);
- fixed-target running times of every run (``bat.analysis.ecdf``).

Live targets have no recorded data and get none of this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bat.analysis.ecdf import Ladder, hitting
from bat.analysis.noise import NoiseSet, noise_set
from bat.analysis.score import (
    AxisScore,
    Baseline,
    Ordering,
    RunCurve,
    aggregate,
    run_curve,
    score_runs,
    target_baseline,
)
from bat.campaign.design import Campaign, CampaignError
from bat.campaign.store import RunRecord
from bat.core.dataset import Dataset
from bat.core.schedule import Parallelism
from bat.data.checks import DataCheck, check_dataset, registry_peers

AXES = ("evaluations", "time")


#: the loosest --success ratio: a run within 10x the best recorded time (a larger one says nothing of a tuner)
MAX_SUCCESS_RATIO = 10.0


def parse_success(text: str) -> str:
    """``noise`` or a ratio > 1 (as text), the definition of a successful run."""
    if text == "noise":
        return text
    try:
        ratio = float(text)
    except ValueError:
        ratio = 0.0
    if not 1.0 < ratio <= MAX_SUCCESS_RATIO:  # inf, or 1e300, would count every run a success
        raise CampaignError(f"--success must be 'noise' or a ratio above 1 and at most {MAX_SUCCESS_RATIO:g} "
                            f"such as 1.05, got {text!r}")
    return f"{ratio:g}"


@dataclass
class TargetStudy:
    """Everything about one replayed target of a campaign."""

    benchmark: str
    gpu: str
    dataset: Dataset
    baseline: Baseline
    noise: NoiseSet
    check: DataCheck
    evaluations: int
    seconds: float
    orderings: list[Ordering]
    curves: dict[str, list[RunCurve]] = field(default_factory=dict)  # label -> runs at the largest budget
    scores: dict[str, dict[str, AxisScore]] = field(default_factory=dict)
    #: compile workers -> the time window and random-search orderings on that many (1: seconds, orderings)
    parallel: dict[int, tuple[float, list[Ordering]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.benchmark}/{self.gpu}"

    def time_axis(self, compile_workers: int, devices: int, seed: int) -> tuple[float, list[Ordering]]:
        """The time window and the random-search orderings on ``compile_workers`` workers and ``devices``."""
        if compile_workers == devices == 1:
            return self.seconds, self.orderings
        if compile_workers not in self.parallel:
            self.parallel[compile_workers] = self.baseline.parallel_orderings(
                self.evaluations, Parallelism(compile_workers, devices), seed=seed)
        return self.parallel[compile_workers]

    @property
    def ladder(self) -> Ladder:
        return Ladder(self.baseline.f_opt, self.noise.rows)

    def succeeded(self, run: RunCurve, budget: int, success: str) -> bool:
        """Does ``run`` hold, after ``budget`` evaluations, a configuration that counts as a success?"""
        if len(run.best) == 0:
            return False
        k = min(budget, len(run.best)) - 1
        if success == "noise":
            return bool(np.isin(run.held[k], self.noise.rows))
        return bool(run.held[k] >= 0 and run.best[k] <= float(success) * self.baseline.f_opt * (1 + 1e-12))


@dataclass
class Methodology:
    """The per-target studies of a campaign, with the definition of success."""

    targets: list[TargetStudy]
    success: str
    success_rates: pd.DataFrame
    seed: int = 0
    _hits: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def target(self, benchmark: str, gpu: str) -> TargetStudy | None:
        return next((t for t in self.targets if (t.benchmark, t.gpu) == (benchmark, gpu)), None)

    def aggregate(self, label: str, axis: str) -> dict[str, Any]:
        """The mean over targets of ``label``'s score on ``axis``, with its bootstrap interval."""
        return aggregate([t.scores[label][axis].run_scores for t in self.targets if label in t.scores],
                         self.seed)

    def hitting_times(self) -> pd.DataFrame:
        """One row per (tuner, target, run, fixed target): evaluations and seconds to reach it (NaN: never)."""
        if self._hits is None:
            self._hits = self._hitting_times()
        return self._hits

    def _hitting_times(self) -> pd.DataFrame:
        rows = []
        for t in self.targets:
            ladder = t.ladder
            for label, runs in t.curves.items():
                for r, run in enumerate(runs):
                    for goal, (evals, secs) in hitting(run, ladder).items():
                        rows.append({"label": label, "benchmark": t.benchmark, "gpu": t.gpu, "run": r,
                                     "target": goal, "evaluations": evals, "seconds": secs})
        return pd.DataFrame(rows, columns=["label", "benchmark", "gpu", "run", "target", "evaluations", "seconds"])

    def to_dict(self) -> dict[str, Any]:
        labels = sorted({label for t in self.targets for label in t.scores})
        return {
            "success": self.success,
            "aggregate": {label: {axis: self.aggregate(label, axis) for axis in AXES} for label in labels},
            "targets": {t.name: {
                "evaluation_window": t.evaluations, "time_window_s": t.seconds,
                "time_windows_s": {str(k): w for k, (w, _) in sorted({1: (t.seconds, ()), **t.parallel}.items())},
                "simulated_time": t.baseline.cost_note, "noise_aware_optimum": t.noise.to_dict(),
                "data_checks": t.check.to_dict(),
                "scores": {label: {axis: s.summary(self.seed) for axis, s in sc.items()}
                           for label, sc in t.scores.items()},
            } for t in self.targets},
            "success_rates": self.success_rates.to_dict(orient="records"),
            "hitting_times": self.hitting_times().to_dict(orient="records"),
        }


#: the parts of a TargetStudy that need no run, per (target, largest budget, seed, noise alpha)
_PARTS: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}


def target_parts(campaign: Campaign, bench: str, gpu: str, noise_alpha: float = 0.05) -> tuple[Any, ...] | None:
    """A target's dataset, random-search baseline, noise-aware optimum, data checks, window and orderings.

    None for a target without recorded data. Computed once per process (they depend on the dataset
    only), so ``warm_up`` can compute them while the runs go.
    """
    from bat.campaign.execute import load_target

    dataset = campaign.dataset_for(bench, gpu)
    top = max(campaign.budgets)
    key = (bench, gpu, campaign.backend, dataset, top, campaign.seed, noise_alpha)
    if key not in _PARTS:
        target = load_target(bench, gpu, campaign.backend, dataset)
        data = target.dataset
        if data is None:
            _PARTS[key] = None
        else:
            base = target_baseline(data, target.space)
            # the time axis ends where the evaluation axis does: a budget beyond the space's size adds
            # nothing random search could still find (and an empty window past it)
            seconds = min(top, len(base.values)) * base.mean_cost
            if len(data.frame):  # build the row index that run curves look configurations up in
                data.row_of(data.frame.iloc[0][list(data.parameters)].to_dict())
            _PARTS[key] = (data, base, noise_set(data, noise_alpha), check_dataset(data, target.space,
                                                                                registry_peers(bench)),
                           top, seconds, base.orderings(seconds, seed=campaign.seed))
    return _PARTS[key]


def study(campaign: Campaign, records: Sequence[RunRecord], *, success: str = "noise",
          noise_alpha: float = 0.05) -> Methodology | None:
    """The methodology view of a finished campaign (None for a live campaign: nothing is recorded)."""
    if campaign.backend != "replay":
        return None
    success = parse_success(success)
    top = max(campaign.budgets)
    targets, rates = [], []
    for bench, gpu in campaign.targets:
        parts = target_parts(campaign, bench, gpu, noise_alpha)
        if parts is None:
            continue
        st = TargetStudy(bench, gpu, *parts)
        data, base = st.dataset, st.baseline
        mine = [r for r in records if (r.meta["benchmark"], r.meta["gpu"]) == (bench, gpu)]
        curves = {r.run_id: run_curve(r.trace, data, base.f_fail) for r in mine}
        for t in campaign.tuners:
            at_top = [curves[r.run_id] for r in mine if r.meta["label"] == t.label and max(r.meta["budgets"]) == top]
            if at_top:
                st.curves[t.label] = at_top
                window, orderings = st.time_axis(t.compile_workers, campaign.devices, campaign.seed)
                st.scores[t.label] = score_runs(base, at_top, top, window, orderings)
            for b in campaign.budgets:
                runs = [curves[r.run_id] for r in mine if r.meta["label"] == t.label and b in r.meta["budgets"]]
                if runs:
                    wins = sum(st.succeeded(run, b, success) for run in runs)
                    rates.append({"label": t.label, "benchmark": bench, "gpu": gpu, "budget": b, "runs": len(runs),
                                  "successes": wins, "rate": wins / len(runs)})
        targets.append(st)
    frame = pd.DataFrame(rates, columns=["label", "benchmark", "gpu", "budget", "runs", "successes", "rate"])
    return Methodology(targets, success, frame, campaign.seed)
