"""Model transfer: a model of time across GPUs from the GPU facts and the configuration, re-weighted on the target.

A gradient-boosted tree regressor (scikit-learn's HistGradientBoostingRegressor,
one thread) learns, over the source GPUs, the log of a configuration's time
relative to that GPU's best from the configuration's value indices and the
GPU's public facts (bat.core.gpus: vendor, compute units, peak memory
bandwidth, log2 of the L2 size). It is trained once per prior, on each
source's ``top`` fastest configurations and ``sample`` others drawn with a
fixed generator, so the model does not depend on the seed and is cached with
the prior.

Experts then score every valid configuration of the target's space: the
model's prediction for the target GPU, and each source's measured log
relative time (where a source did not measure a configuration, the model's
prediction for that source; where it failed there, that source's slowest
time). Proposals follow the weighted mean of the experts, lowest first. At
first every expert weighs the same; once ``min_points`` target measurements
are ok, each expert's weight is the square of its rank correlation
(Spearman, clipped at 0) with the target's measured times, so the sources
and the model that agree with the target lead. With probability ``explore``
a proposal is a random unevaluated configuration instead.

Sources of the idea: carrying a learned performance model from one GPU to
another is what KTT does with its performance-counter models (Filipovič et
al., "Using hardware performance counters to speed up autotuning
convergence on GPUs", JPDC 2022); here the GPU is an input of the model, by
its public facts. Weighting each source by how well it ranks the target's
observations is the idea of the ranking-weighted Gaussian-process ensemble
(RGPE: Feurer, Letham and Bakshy, 2018), with a rank correlation in place
of RGPE's sampled ranking loss.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bat.core.errors import MissingDependencyError
from bat.core.gpus import GpuFacts, gpu_facts
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.transfer.prior import Prior, Walk, prior_of

if TYPE_CHECKING:
    from bat.core.space import SearchSpace

#: spaces with more valid configurations than this are scored on the prior's configurations only
MAX_CANDIDATES = 1 << 18
#: trees of the model (boosting iterations)
TREES = 60


@dataclass(kw_only=True)
class ModelTransfer(Tuner):
    """Proposes by a cross-GPU model's predicted rank, re-weighting model and sources by the target's times."""

    top: int = 1000
    sample: int = 3000
    min_points: int = 4
    explore: float = 0.1
    summary = ("transfer: a model of time from the GPU facts and the configuration (scikit-learn), "
               "re-weighted by the target's measurements")
    notes = "needs a prior (problem.facts.others, the transfer study); the model is fitted once per prior"
    budget_agnostic = True  # every choice depends on the seed and the results, never on the budget
    HYPERPARAMETERS = (
        HyperParam("top", "int", 1000, 10, 100_000, log=True, doc="fastest configurations per source trained on"),
        HyperParam("sample", "int", 3000, 0, 100_000, doc="other configurations per source trained on"),
        HyperParam("min_points", "int", 4, 2, 50, log=True, doc="ok target times before re-weighting"),
        HyperParam("explore", "float", 0.1, 0.0, 0.5, doc="chance that a proposal is a random one"),
    )

    def __post_init__(self) -> None:
        for name in ("top", "min_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.sample < 0:
            raise ValueError(f"sample must be >= 0, got {self.sample}")
        if not 0.0 <= self.explore <= 1.0:
            raise ValueError(f"explore must be in [0, 1], got {self.explore}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        prior = prior_of(problem, "transfer:model")
        space = problem.space
        target = problem.facts.gpu_facts or gpu_facts(problem.facts.gpu)
        ids, experts = self._experts(prior, space, target)
        walk = Walk(problem, rng)
        tie = rng.permutation(len(ids))
        done = np.zeros(len(ids), dtype=bool)
        seen_x: list[int] = []  # positions in ``ids`` of the target's ok measurements
        seen_y: list[float] = []
        weights = np.full(experts.shape[1], 1.0 / experts.shape[1])
        score = experts @ weights
        while not walk.finished:
            fid = None
            if len(walk.done) and rng.random() < self.explore:
                fid = walk.random_id()
            elif not done.all():
                masked = np.where(done, np.inf, score)
                tied = np.flatnonzero(masked == masked.min())
                fid = int(ids[tied[np.argmin(tie[tied])]])
            if fid is None:
                fid = walk.random_id()
            if fid is None:
                return
            fitness = walk.evaluate(fid)
            at = int(np.searchsorted(ids, fid))
            if at < len(ids) and ids[at] == fid:
                done[at] = True
                if np.isfinite(fitness):
                    seen_x.append(at)
                    seen_y.append(float(np.log(fitness)))
                    if len(seen_x) >= self.min_points:
                        weights = agreement(experts[seen_x], np.array(seen_y))
                        score = experts @ weights

    def _experts(self, prior: Prior, space: SearchSpace,
                 target: GpuFacts | None) -> tuple[np.ndarray, np.ndarray]:
        """Candidate flat ids (sorted) and their experts' log relative times (n, 1 + sources); cached."""
        key = ("model-experts", self.top, self.sample, gpu_features(target).tobytes())
        if key not in prior.memo:
            model = self._model(prior, space)
            ids = space.valid_ids() if space.count_valid() <= MAX_CANDIDATES else prior.ids
            rows = space.from_ids(ids)
            columns = [predict(model, rows, target)]
            at = prior.position(ids)
            for s, gpu in enumerate(prior.sources):
                measured = np.where(at >= 0, prior.log_time[np.maximum(at, 0), s], np.nan)
                failed = (at >= 0) & np.isnan(measured) & (prior.rank[np.maximum(at, 0), s] == 1.0)
                slowest = np.nanmax(prior.log_time[:, s]) if np.isfinite(prior.log_time[:, s]).any() else 0.0
                guess = predict(model, rows, gpu_facts(gpu))
                columns.append(np.where(failed, slowest, np.where(np.isnan(measured), guess, measured)))
            prior.memo[key] = (ids, np.column_stack(columns))
        return prior.memo[key]

    def _model(self, prior: Prior, space: SearchSpace) -> Any:
        key = ("model", self.top, self.sample)
        if key not in prior.memo:
            prior.memo[key] = fit(prior, space, self.top, self.sample)
        return prior.memo[key]


def gpu_features(facts: GpuFacts | None) -> np.ndarray:
    """A GPU's facts as model inputs: AMD or not, compute units, bandwidth (GB/s), log2 L2 bytes; NaN unknown."""
    if facts is None:
        return np.full(4, np.nan)
    return np.array([float(facts.vendor == "AMD"), float(facts.compute_units), float(facts.memory_bandwidth_gbs),
                     float(np.log2(facts.l2_bytes)) if facts.l2_bytes > 0 else np.nan])


def fit(prior: Prior, space: SearchSpace, top: int, sample: int) -> Any:
    """The cross-GPU regressor and the inputs it reads (None when nothing is ok), trained on each source's
    ``top`` fastest and ``sample`` other configurations."""
    try:
        from sklearn.ensemble import HistGradientBoostingRegressor
    except ImportError as exc:
        raise MissingDependencyError("transfer:model needs scikit-learn") from exc
    draw = np.random.default_rng(0)  # fixed: the model is the prior's, the same for every seed
    rows = space.from_ids(prior.ids)
    features, targets = [], []
    for s, gpu in enumerate(prior.sources):
        times = prior.log_time[:, s]
        ok = np.flatnonzero(np.isfinite(times))
        best = ok[np.argsort(times[ok], kind="stable")[:top]]
        rest = np.setdiff1d(ok, best)
        chosen = np.concatenate([best, draw.choice(rest, min(sample, len(rest)), replace=False)])
        features.append(np.hstack([rows[chosen], np.tile(gpu_features(gpu_facts(gpu)), (len(chosen), 1))]))
        targets.append(times[chosen])
    x, y = np.vstack(features), np.concatenate(targets)
    if len(y) < 2:  # nothing ok to learn from: every configuration predicts the same
        return None
    known = np.isfinite(x).any(axis=0)  # a fact no source GPU has (not in gpu_specs.json) is no input
    model = HistGradientBoostingRegressor(max_iter=TREES, early_stopping=False, random_state=0)
    with one_thread():
        model.fit(x[:, known], y)
    return model, known


def predict(model: Any, rows: np.ndarray, facts: GpuFacts | None) -> np.ndarray:
    """The model's log relative time of each value-index row on the GPU of ``facts`` (0 without a model)."""
    if model is None:
        return np.zeros(len(rows))
    regressor, known = model
    with one_thread():
        return regressor.predict(np.hstack([rows, np.tile(gpu_features(facts), (len(rows), 1))])[:, known])


def one_thread() -> contextlib.AbstractContextManager:
    """Limit scikit-learn's OpenMP pool to one thread (the study runs one tuner per core), where threadpoolctl
    can read this process's libraries (a sandboxed tuner may not read /proc/self/maps: then as the
    environment says, OMP_NUM_THREADS)."""
    from threadpoolctl import threadpool_limits

    try:
        return threadpool_limits(1)
    except OSError:
        return contextlib.nullcontext()


def agreement(experts: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Each expert's weight: its Spearman correlation with the measured times, clipped at 0, squared, normalised
    (equal weights when none agrees)."""
    ranks = np.argsort(np.argsort(experts, axis=0, kind="stable"), axis=0, kind="stable").astype(float)
    truth = np.argsort(np.argsort(measured, kind="stable"), kind="stable").astype(float)
    ranks -= ranks.mean(axis=0)
    truth -= truth.mean()
    norm = np.sqrt((ranks ** 2).sum(axis=0) * (truth ** 2).sum())
    rho = np.divide(ranks.T @ truth, norm, out=np.zeros(experts.shape[1]), where=norm > 0)
    weights = np.clip(rho, 0.0, None) ** 2
    return weights / weights.sum() if weights.sum() > 0 else np.full(len(weights), 1.0 / len(weights))
