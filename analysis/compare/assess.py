"""From finished runs to numbers: cells, pairwise tests, scores against random search, the gate.

Definitions (also written into every output):

- Relative performance of a run at budget b: best known time of the target
  (the best ``ok`` objective of its dataset) / best time among the run's
  first b charged evaluations; 0 when none of them was valid. With
  re-measurement (``remeasure > 0``) the tests and cell statistics use the
  re-measured time of that configuration instead ("performance" below).
- Cell: (tuner, benchmark, GPU, budget); its statistics are over the R
  repeats: n, median, quartiles and IQR, mean.
- Pairwise: in every (benchmark, GPU, budget), every pair of tuners A, B:
  two-sided Mann-Whitney U on the performances, CLES = P(A > B) + P(A = B)/2;
  p-values Holm-adjusted over the whole family of pairwise tests of the
  campaign; significant when the adjusted p is below alpha.
- Baseline score of a cell: (mean relative performance - E_rand(b)) / (1 - E_rand(b)),
  with E_rand(b) the exact expected relative performance of uniform random
  search drawing b distinct configurations without replacement from the
  constraint-valid configurations of the space (failed and unrecorded ones
  count as relative performance 0), from
  ``bat.analysis.convergence.expected_random_relative_performance``. 0 means as
  good as random search on average, 1 means the optimum in every run,
  negative means worse than random search. It uses the recorded (not the
  re-measured) times, which is what E_rand is defined on. A cell with
  E_rand(b) = 1 (the budget covers the space) has no score. The score of a
  tuner is the mean over its cells (overall and per budget).
- Methodology score, success on the noise-aware optimum and fixed-target
  running times: ``bat.analysis.compare.methodology`` (its docstring and
  ``bat.analysis.score`` define them).
- Gate: for each cell present in the current campaign and the baseline
  file, Mann-Whitney U between the current and the baseline performances,
  CLES = P(current > baseline) + ties/2, Holm over those cells; a cell has
  regressed when the adjusted p < alpha and CLES < the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from bat.analysis.compare.methodology import Methodology, study
from bat.analysis.compare.stats import cles, holm, mwu, summary
from bat.campaign.design import Campaign
from bat.campaign.store import RunRecord
from bat.core.errors import DatasetError

CELL = ["label", "benchmark", "gpu", "budget"]
#: Time given to failed / unrecorded configurations so the exact baseline counts them as 0:
#: best / 1e300 is below 1e-290.
_FAILED_MS = 1e300


@dataclass
class Analysis:
    """Every number of a comparison."""

    alpha: float
    observations: pd.DataFrame  # one row per (run, budget)
    cells: pd.DataFrame
    pairwise: pd.DataFrame
    random_baseline: dict[str, dict[int, float]]  # "benchmark/gpu" -> budget -> E_rand
    scores: dict[str, dict[str, float | None]]  # label -> {"overall", "<budget>"...}
    gate: GateResult | None = None
    methodology: Methodology | None = None


@dataclass
class GateResult:
    """The comparison against a baseline file."""

    baseline: str
    alpha: float
    cles_threshold: float
    cells: pd.DataFrame  # every compared cell with p, p_holm, cles, regressed
    missing: list[str] = field(default_factory=list)  # cells without baseline data

    @property
    def regressed(self) -> pd.DataFrame:
        return self.cells[self.cells["regressed"]] if len(self.cells) else self.cells

    @property
    def passed(self) -> bool:
        """No cell regressed, and at least one was compared (a gate that compared nothing fails)."""
        return len(self.cells) > 0 and self.regressed.empty


def observations(records: list[RunRecord], remeasure: int) -> pd.DataFrame:
    """One row per (run, budget): identity, seed, relative performance, performance used by tests."""
    rows = []
    for rec in records:
        m = rec.meta
        for b, res in m["per_budget"].items():
            rel = float(res["rel_perf"])
            perf = float(res["rel_perf_remeasured"]) if remeasure else rel
            rows.append({"label": m["label"], "benchmark": m["benchmark"], "gpu": m["gpu"],
                         "budget": int(b), "repeat": int(m["repeat"]), "seed": int(m["seed"]),
                         "run_id": m["run_id"], "evaluations": int(res["evaluations"]),
                         "best_ms": res["best_ms"], "rel_perf": rel, "perf": perf})
    return pd.DataFrame(rows, columns=[*CELL, "repeat", "seed", "run_id", "evaluations",
                                       "best_ms", "rel_perf", "perf"])


def random_times(benchmark: str, gpu: str, backend: str = "replay", dataset: str = "") -> np.ndarray | None:
    """Times random search draws from: every constraint-valid configuration, failed ones as 1e300.

    None for a target that is not replayed (no recorded data to compute from).
    """
    from bat.campaign.execute import load_target

    target = load_target(benchmark, gpu, backend, dataset)
    if target.dataset is None:
        return None
    ok = target.dataset.ok["objective_ms"].to_numpy(dtype=float)
    n_total = int(target.space.count_valid())
    if len(ok) > n_total:
        raise DatasetError(f"dataset {benchmark}/{gpu} has {len(ok)} valid rows, its space only {n_total}")
    return np.concatenate([ok, np.full(n_total - len(ok), _FAILED_MS)])


def random_baseline(campaign: Campaign) -> dict[str, dict[int, float]]:
    """E_rand(b) per target and budget (replay targets only; see the module docstring)."""
    from bat.analysis.convergence import expected_random_relative_performance

    out: dict[str, dict[int, float]] = {}
    for bench, gpu in campaign.targets:
        key = (bench, gpu, campaign.backend, campaign.dataset_for(bench, gpu), tuple(campaign.budgets))
        if key not in _EXPECTED:  # once per process: it depends on the dataset only (warm_up computes it early)
            times = random_times(*key[:4])
            _EXPECTED[key] = None if times is None else [float(e) for e in expected_random_relative_performance(
                times, [min(b, len(times)) for b in campaign.budgets])]
        if (exp := _EXPECTED[key]) is not None:
            out[f"{bench}/{gpu}"] = dict(zip(campaign.budgets, exp, strict=True))
    return out


#: E_rand of each (target, budgets) computed in this process
_EXPECTED: dict[tuple[Any, ...], list[float] | None] = {}


def analyse(campaign: Campaign, records: list[RunRecord], *, alpha: float = 0.05,
            success: str = "noise") -> Analysis:
    """Cells, Holm-corrected pairwise tests, scores and the methodology view of a finished campaign."""
    obs = observations(records, campaign.remeasure)
    base = random_baseline(campaign)
    cell_rows = []
    for key, g in obs.groupby(CELL, sort=False):
        e = base.get(f"{key[1]}/{key[2]}", {}).get(int(cast(int, key[3])))  # the budget column: integers
        score = None
        if e is not None and e < 1.0:
            score = (float(g["rel_perf"].mean()) - e) / (1.0 - e)
        cell_rows.append({**dict(zip(CELL, key, strict=True)), **summary(g["perf"]),
                          "rel_perf_mean": float(g["rel_perf"].mean()), "random_expectation": e,
                          "score": score})
    cells = pd.DataFrame(cell_rows)
    pairwise = _pairwise(campaign, obs, alpha)
    return Analysis(alpha, obs, cells, pairwise, base, _scores(campaign, cells),
                    methodology=study(campaign, records, success=success))


def _pairwise(campaign: Campaign, obs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    labels = [t.label for t in campaign.tuners]
    rows = []
    for (bench, gpu, budget), g in obs.groupby(["benchmark", "gpu", "budget"], sort=False):
        perf = {lab: g.loc[g["label"] == lab, "perf"].to_numpy() for lab in labels}
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                u, p = mwu(perf[a], perf[b])
                rows.append({"benchmark": bench, "gpu": gpu, "budget": int(cast(int, budget)), "a": a, "b": b,
                             "n_a": len(perf[a]), "n_b": len(perf[b]), "u": u, "p": p,
                             "cles_a_better": cles(perf[a], perf[b])})
    frame = pd.DataFrame(rows, columns=["benchmark", "gpu", "budget", "a", "b", "n_a", "n_b", "u", "p",
                                        "cles_a_better"])
    frame["p_holm"] = holm(frame["p"].to_numpy()) if len(frame) else []
    frame["significant"] = frame["p_holm"] < alpha
    return frame


def _scores(campaign: Campaign, cells: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for t in campaign.tuners:
        mine = cells[(cells["label"] == t.label) & cells["score"].notna()]
        row: dict[str, float | None] = {"overall": float(mine["score"].mean()) if len(mine) else None}
        for b in campaign.budgets:
            s = mine.loc[mine["budget"] == b, "score"]
            row[str(b)] = float(s.mean()) if len(s) else None
        out[t.label] = row
    return out


def gate(analysis: Analysis, baseline: pd.DataFrame, *, source: str, alpha: float,
         cles_threshold: float) -> GateResult:
    """Compare every cell with the baseline's same cell (see the module docstring)."""
    obs = analysis.observations
    rows, missing = [], []
    for key, g in obs.groupby(CELL, sort=False):
        sel = np.logical_and.reduce([baseline[c] == v for c, v in zip(CELL, key, strict=True)])
        old = baseline.loc[sel, "perf"].to_numpy(dtype=float)
        name = "{} on {}/{} at {}".format(*key)
        if len(old) == 0:
            missing.append(name)
            continue
        new = g["perf"].to_numpy(dtype=float)
        _, p = mwu(new, old)
        rows.append({**dict(zip(CELL, key, strict=True)), "n": len(new), "n_baseline": len(old),
                     "median": float(np.median(new)), "median_baseline": float(np.median(old)),
                     "p": p, "cles_better": cles(new, old)})
    cells = pd.DataFrame(rows, columns=[*CELL, "n", "n_baseline", "median", "median_baseline", "p",
                                        "cles_better"])
    cells["p_holm"] = holm(cells["p"].to_numpy()) if len(cells) else []
    cells["regressed"] = (cells["p_holm"] < alpha) & (cells["cles_better"] < cles_threshold)
    return GateResult(source, alpha, cles_threshold, cells, missing)
