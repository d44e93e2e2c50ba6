"""The methodology score: a tuner against random search, 0 = random search, 1 = the optimum.

After the methodology of Willemsen, Schoonhoven, Filipovič, Tørring,
van Nieuwpoort and van Werkhoven, "A methodology for comparing optimization
algorithms for auto-tuning", FGCS 2024 (the facts of its definition; the
choices below are this project's and named in every output).

On one target (a dataset on its search space) at budget point x:

    s(x) = (R(x) - F(x)) / (R(x) - f_opt)

- f_opt: the best recorded ok objective among the configurations the space allows.
- F(x): the mean over a tuner's runs of the objective of the configuration
  each run holds as best after x (the one with the best *observed*
  objective, valued at its *recorded* objective, so replay noise cannot make
  a run look better than the data).
- R(x): the same for uniform random search without replacement over the
  constraint-valid configurations of the space.
- A failed or unrecorded configuration counts as ``f_fail``, the slowest ok
  objective of the dataset: before a run has found anything valid, it is no
  better than the worst valid configuration (the same for random search).

Two axes. *Evaluations*: x = 1, 2, ..., B charged evaluations; R(x) is exact
(hypergeometric order statistics, ``bat.analysis.convergence``). *Time*: x runs
over ``TIME_POINTS`` equal steps of (0, T] simulated seconds; a run's clock
is the simulated clock of its trace (``elapsed_cost_s``: bat.core.schedule,
where each evaluation is charged its recorded compile + verification +
benchmark time, ``bat.core.costs``; one compile worker and one device make
it the sum of the charges) plus the tuner's own time between proposals,
summed (the tuner's thinking is never overlapped); R(x) is the mean over
``SIMULATIONS`` seeded random-search orderings charged the same recorded
costs (random search's own overhead taken as 0), a Monte-Carlo estimate. On
K compile workers and G devices random search keeps every slot busy
(``Baseline.parallel_orderings``) and T is its mean clock after the
largest budget. A run that ended before x keeps its last best. Points where R(x) = f_opt (random search surely at the
optimum) have no score and are left out.

The score of a run is the mean of s(x) over its window; the score of a
tuner on a target is the mean over runs, with a 95 % bootstrap confidence
interval over runs (``scipy.stats.bootstrap``, BCa); the aggregate over
targets is the mean of the targets' scores, its interval from resampling
each target's runs independently. Since s(x) is linear in F(x), uniform
random search scores 0 in expectation on the evaluation axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bat.analysis.convergence import expected_random_best
from bat.core.costs import recorded_costs
from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError
from bat.core.schedule import Parallelism, stream_clock
from bat.core.space import SearchSpace

TIME_POINTS = 100
SIMULATIONS = 1000
CONFIDENCE = 0.95
RESAMPLES = 2000


@dataclass(frozen=True)
class Baseline:
    """Random search on one target: the value and cost of every constraint-valid configuration."""

    target: str
    values: np.ndarray  # objective, f_fail for failed or unrecorded configurations
    costs: np.ndarray  # seconds charged (unrecorded: 0, as replay charges them)
    compile_costs: np.ndarray  # the part of costs spent compiling (bat.core.schedule runs it on a worker)
    rows: np.ndarray  # dataset row of each ok configuration, -1 for failed or unrecorded ones
    f_opt: float
    f_fail: float
    cost_note: str
    _evals: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def mean_cost(self) -> float:
        return float(self.costs.mean())

    def evals(self, ns: Sequence[int] | np.ndarray) -> np.ndarray:
        """Exact expected best after each n evaluations (read-only; computed once per ``ns``)."""
        key = tuple(min(int(n), len(self.values)) for n in ns)
        if key not in self._evals:
            best = expected_random_best(self.values, key)
            best.flags.writeable = False
            self._evals[key] = best
        return self._evals[key]

    def orderings(self, seconds: float, simulations: int = SIMULATIONS, seed: int = 0) -> list[Ordering]:
        """``simulations`` seeded random-search orderings, each long enough to spend ``seconds``."""
        rng = np.random.default_rng(seed)
        n = len(self.values)
        k = min(n, int(np.ceil(3 * seconds / max(self.mean_cost, 1e-12))) + 50)
        out = []
        for _ in range(simulations):
            order = rng.permutation(n) if k == n else rng.choice(n, size=k, replace=False)
            clock = np.cumsum(self.costs[order])
            while clock[-1] < seconds and len(order) < n:  # this ordering needs more draws to cover the window
                more = rng.permutation(np.setdiff1d(np.arange(n), order))[: len(order)]
                order = np.concatenate([order, more])
                clock = np.cumsum(self.costs[order])
            out.append(Ordering(order, clock))
        return out

    def parallel_orderings(self, evaluations: int, parallelism: Parallelism, simulations: int = SIMULATIONS,
                           seed: int = 0) -> tuple[float, list[Ordering]]:
        """Random search on ``parallelism``'s compile workers and devices, every slot kept busy: the time
        window (the mean clock after ``evaluations`` answers) and ``simulations`` seeded runs of twice
        that many evaluations, each in the order its answers came, with its clock (bat.core.schedule)."""
        rng = np.random.default_rng(seed)
        n = len(self.values)
        k, top = min(n, 2 * evaluations + 50), min(n, evaluations)
        device = self.costs - self.compile_costs
        out, ends = [], []
        for _ in range(simulations):
            drawn = rng.permutation(n)[:k]
            done, times = stream_clock(self.compile_costs[drawn].tolist(), device[drawn].tolist(),
                                       self.costs[drawn].tolist(), parallelism)
            out.append(Ordering(drawn[done], np.asarray(times)))
            ends.append(times[top - 1])
        return float(np.mean(ends)), out

    def time(self, taus: np.ndarray, orderings: Sequence[Ordering]) -> np.ndarray:
        """Expected best by each simulated time: the mean over ``orderings``."""
        total = np.zeros(len(taus))
        for o in orderings:
            best = np.minimum.accumulate(self.values[o.order])
            at = np.searchsorted(o.clock, taus, side="right") - 1
            total += np.where(at >= 0, best[np.maximum(at, 0)], self.f_fail)
        return total / len(orderings)


@dataclass(frozen=True)
class Ordering:
    """One simulated random-search run: configurations (baseline positions) in order, and its clock."""

    order: np.ndarray
    clock: np.ndarray


def target_baseline(dataset: Dataset, space: SearchSpace) -> Baseline:
    """The random-search baseline of ``dataset`` on ``space`` (see the module docstring)."""
    frame = dataset.frame
    inside = np.ones(len(frame), dtype=bool)
    for p in space.parameters:
        inside &= frame[p.name].isin(p.values).to_numpy()
    rows = np.flatnonzero(inside)
    valid = rows[space.is_valid(space.encode(frame.iloc[rows][list(space.names)]))]
    valid = valid[~frame.iloc[valid][list(space.names)].duplicated().to_numpy()]
    objective = frame["objective_ms"].to_numpy(dtype=float)
    ok = (frame["status"] == Status.OK.value).to_numpy()
    allowed = objective[valid][ok[valid]]  # ok rows the space allows (a dataset may hold more)
    if len(allowed) == 0:
        raise DatasetError(f"dataset {dataset.name} has no valid measurement its space allows")
    f_opt, f_fail = float(allowed.min()), float(allowed.max())
    if f_opt == f_fail:  # the score's scale (optimum to worst) is empty: it would divide by zero
        raise DatasetError(f"dataset {dataset.name}: its {len(allowed)} valid measurement(s) the space allows "
                           f"all take {f_opt:g} ms: no score can rank tuners on it")
    n_total = int(space.count_valid())
    missing = n_total - len(valid)
    if missing < 0:
        raise DatasetError(f"dataset {dataset.name} has more valid rows than its space has configurations")
    costs = recorded_costs(frame)
    values = np.concatenate([np.where(ok[valid], objective[valid], f_fail), np.full(missing, f_fail)])
    charged = np.concatenate([costs.cost_s[valid], np.zeros(missing)])
    compiled = np.concatenate([costs.compile_s[valid], np.zeros(missing)])
    note = costs.describe() + (f"; {missing} constraint-valid configurations are not recorded (charged 0)"
                               if missing else "")
    rows = np.concatenate([np.where(ok[valid], valid, -1), np.full(missing, -1)])
    return Baseline(dataset.name, values, charged, compiled, rows, f_opt, f_fail, note)


@dataclass(frozen=True)
class RunCurve:
    """One run after each charged evaluation: the best value held, the dataset row held, the clock.

    ``held`` is the dataset row of the configuration held as best (-1 before the first
    valid one, or when it is not in the dataset).
    """

    best: np.ndarray
    clock: np.ndarray
    held: np.ndarray

    def at_evaluations(self, ns: np.ndarray, f_fail: float) -> np.ndarray:
        if len(self.best) == 0:
            return np.full(len(ns), f_fail)
        return self.best[np.minimum(ns, len(self.best)) - 1]

    def at_times(self, taus: np.ndarray, f_fail: float) -> np.ndarray:
        at = np.searchsorted(self.clock, taus, side="right") - 1
        return np.where(at >= 0, self.best[np.maximum(at, 0)] if len(self.best) else f_fail, f_fail)


def run_curve(trace: pd.DataFrame, dataset: Dataset | None, f_fail: float) -> RunCurve:
    """Best held (recorded value of the best observed configuration) and clock after each charged evaluation."""
    for col in ("charged", "status", "objective_ms", "cost_s", "tuner_s"):
        if col not in trace.columns:
            raise DatasetError(f"trace lacks column {col!r}")
    # the simulated clock, or (a table without it) the charges summed: the sequential clock
    elapsed = (trace["elapsed_cost_s"].to_numpy(dtype=float) if "elapsed_cost_s" in trace.columns
               else np.cumsum(trace["cost_s"].to_numpy(dtype=float)))
    clock = elapsed + np.cumsum(trace["tuner_s"].to_numpy(dtype=float))
    charged = np.flatnonzero(trace["charged"].to_numpy(dtype=bool))
    status = trace["status"].to_numpy(dtype=object)[charged]
    observed = np.where(status == Status.OK.value, trace["objective_ms"].to_numpy(dtype=float)[charged], np.inf)
    running = np.minimum.accumulate(observed) if len(observed) else observed
    improved = np.flatnonzero(observed < np.concatenate([[np.inf], running[:-1]]))
    value, row = observed[improved], np.full(len(improved), -1)
    if dataset is not None and len(improved):
        recorded = dataset.frame["objective_ms"].to_numpy(dtype=float)
        ok = (dataset.frame["status"] == Status.OK.value).to_numpy()
        configs = trace.iloc[charged[improved]][list(dataset.parameters)].to_dict("records")
        for j, config in enumerate(configs):
            r = dataset.row_of(config)
            if r is not None:
                row[j] = r
                if ok[r]:
                    value[j] = recorded[r]
    # the value and row held from each improvement until the next one
    at = np.searchsorted(improved, np.arange(len(charged)), side="right") - 1
    best = np.where(at >= 0, value[np.maximum(at, 0)] if len(improved) else f_fail, f_fail)
    held = np.where(at >= 0, row[np.maximum(at, 0)] if len(improved) else -1, -1)
    return RunCurve(best, clock[charged], held)


@dataclass(frozen=True)
class AxisScore:
    """Per-run score curves s_r(x) of one tuner on one target along one axis."""

    axis: str  # "evaluations" or "time"
    x: np.ndarray
    per_run: np.ndarray  # (runs, points)

    @property
    def run_scores(self) -> np.ndarray:
        return self.per_run.mean(axis=1)

    @property
    def curve(self) -> np.ndarray:
        return self.per_run.mean(axis=0)

    def summary(self, seed: int = 0) -> dict[str, object]:
        lo, hi = confidence_interval(self.run_scores, seed)
        return {"axis": self.axis, "score": float(self.run_scores.mean()), "ci_low": lo, "ci_high": hi,
                "runs": len(self.per_run), "window": [float(self.x[0]), float(self.x[-1])],
                "points": len(self.x)}


def _scores(reference: np.ndarray, held: np.ndarray, f_opt: float) -> tuple[np.ndarray, np.ndarray]:
    spread = reference - f_opt
    keep = spread > 1e-12 * max(abs(f_opt), 1e-300)
    return keep, (reference[keep] - held[:, keep]) / spread[keep]


def score_runs(baseline: Baseline, runs: Sequence[RunCurve], evaluations: int, seconds: float,
               orderings: Sequence[Ordering], time_points: int = TIME_POINTS) -> dict[str, AxisScore]:
    """Both axes: x = 1..``evaluations`` and ``time_points`` steps of (0, ``seconds``].

    ``orderings``: the simulated random-search runs of the time baseline (``Baseline.orderings``).
    """
    if not runs:
        raise DatasetError(f"no runs to score on {baseline.target}")
    ns = np.arange(1, min(evaluations, len(baseline.values)) + 1)
    keep, per_run = _scores(baseline.evals(ns), np.array([r.at_evaluations(ns, baseline.f_fail) for r in runs]),
                            baseline.f_opt)
    out = {"evaluations": AxisScore("evaluations", ns[keep].astype(float), per_run)}
    taus = seconds * np.arange(1, time_points + 1) / time_points
    keep, per_run = _scores(baseline.time(taus, orderings),
                            np.array([r.at_times(taus, baseline.f_fail) for r in runs]), baseline.f_opt)
    out["time"] = AxisScore("time", taus[keep], per_run)
    return out


def confidence_interval(values: np.ndarray, seed: int = 0) -> tuple[float | None, float | None]:
    """95 % BCa bootstrap interval of the mean; the value itself when every run scores the same."""
    from scipy.stats import bootstrap

    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return None, None
    if np.ptp(v) == 0:
        return float(v[0]), float(v[0])
    ci = bootstrap((v,), np.mean, confidence_level=CONFIDENCE, n_resamples=RESAMPLES, method="BCa",
                   rng=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


def aggregate(run_scores: Sequence[np.ndarray], seed: int = 0) -> dict[str, float | None]:
    """Mean over targets of the mean run score, with a bootstrap interval resampling each target's runs."""
    from scipy.stats import bootstrap

    samples = [np.asarray(s, dtype=float) for s in run_scores if len(s)]
    if not samples:
        return {"score": None, "ci_low": None, "ci_high": None, "targets": 0}
    score = float(np.mean([s.mean() for s in samples]))
    if any(len(s) < 2 for s in samples) or all(np.ptp(s) == 0 for s in samples):
        lo = hi = score if all(np.ptp(s) == 0 for s in samples) else None
        return {"score": score, "ci_low": lo, "ci_high": hi, "targets": len(samples)}

    def statistic(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean([x.mean(axis=axis) for x in xs], axis=0)

    ci = bootstrap(tuple(samples), statistic, vectorized=True, confidence_level=CONFIDENCE,
                   n_resamples=RESAMPLES, method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return {"score": score, "ci_low": float(ci.low), "ci_high": float(ci.high), "targets": len(samples)}
