"""Surrogate landscape: a CatBoost model trained on a sample predicts the fitness of the full product.

For a space with only a sample of measurements: every point that violates a
constraint gets fitness 1e10, a measured point keeps its measurement (1e10
if it failed), and every other valid point gets the model's prediction. The
result says it is a model estimate and carries the model's cross-validated
R^2. Prediction runs in chunks of flat ids, so memory is one float per point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bat.analysis.centrality import INVALID_FITNESS
from bat.analysis.model import ModelSettings, cv_r2, fit
from bat.core.dataset import Dataset, Status
from bat.core.space import SearchSpace

CHUNK = 1 << 20


@dataclass
class Surrogate:
    """A fitness array over the full product, partly predicted."""

    fitness: np.ndarray
    cv_r2: float
    n_measured: int
    n_predicted: int
    settings: ModelSettings

    def describe(self) -> str:
        return (f"model estimate: CatBoost trained on {self.n_measured} measured configurations "
                f"predicts {self.n_predicted} others (cross-validated R^2 {self.cv_r2:.3f})")


def surrogate_fitness(dataset: Dataset, space: SearchSpace, rng: np.random.Generator, *,
                      settings: ModelSettings | None = None,
                      progress: Callable[[float], None] | None = None) -> Surrogate:
    """Measured fitness where measured, CatBoost's prediction at other valid points, 1e10 elsewhere."""
    settings = settings or ModelSettings()
    ok = dataset.ok
    x = space.encode(ok[list(space.names)]).astype(float)
    y = ok["objective_ms"].to_numpy(dtype=float)
    r2 = cv_r2(x, y, settings, rng)
    model = fit(x, y, settings, int(rng.integers(2**31)))
    fitness = np.full(space.cardinality, INVALID_FITNESS)
    measured = np.zeros(space.cardinality, dtype=bool)
    measured[space.to_ids(space.encode(dataset.configs()))] = True
    n_predicted = 0
    for start in range(0, space.cardinality, CHUNK):
        ids = np.arange(start, min(start + CHUNK, space.cardinality))
        idx = space.from_ids(ids)
        todo = space.is_valid(idx) & ~measured[ids]
        if todo.any():
            fitness[ids[todo]] = np.maximum(model.predict(idx[todo].astype(float)), 0.0)
            n_predicted += int(todo.sum())
        if progress is not None:
            progress(min(1.0, (start + CHUNK) / space.cardinality))
    fitness[space.to_ids(space.encode(ok[list(space.names)]))] = y
    failed = dataset.frame[dataset.frame["status"] != Status.OK.value]
    fitness[space.to_ids(space.encode(failed[list(space.names)]))] = INVALID_FITNESS
    shape = tuple(int(r) for r in space.radices)
    return Surrogate(fitness.reshape(shape), r2, len(y), n_predicted, settings)
