"""CatBoost regressors on value indices: the shared model of importance and surrogate landscapes.

Features are the value indices of the parameters (so string values work and
the order of each value list is the order the trees split on); the target is
the objective in ms. Scores are R^2 (scikit-learn's ``r2_score``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.errors import MissingDependencyError


@dataclass(frozen=True)
class ModelSettings:
    """CatBoost settings (kept small by default: CI machines have 2 cores)."""

    iterations: int = 300
    depth: int = 6
    learning_rate: float = 0.1
    thread_count: int = 2
    folds: int = 3

    def to_dict(self) -> dict[str, object]:
        return {"model": "CatBoostRegressor", "iterations": self.iterations, "depth": self.depth,
                "learning_rate": self.learning_rate, "cv_folds": self.folds}


def make_regressor(settings: ModelSettings, seed: int):  # -> catboost.CatBoostRegressor
    try:
        from catboost import CatBoostRegressor
    except ImportError as exc:
        raise MissingDependencyError(f"this analysis needs catboost, which is not installed ({exc})") from exc
    return CatBoostRegressor(iterations=settings.iterations, depth=settings.depth,
                             learning_rate=settings.learning_rate, thread_count=settings.thread_count,
                             random_seed=seed, verbose=False, allow_writing_files=False)


def fit(x: np.ndarray, y: np.ndarray, settings: ModelSettings, seed: int):
    model = make_regressor(settings, seed)
    model.fit(x, y)
    return model


def cv_r2(x: np.ndarray, y: np.ndarray, settings: ModelSettings, rng: np.random.Generator) -> float:
    """Mean R^2 over K shuffled folds (K = settings.folds)."""
    from sklearn.metrics import r2_score
    from sklearn.model_selection import KFold

    seed = int(rng.integers(2**31))
    scores = []
    for train, test in KFold(settings.folds, shuffle=True, random_state=seed).split(x):
        model = fit(x[train], y[train], settings, seed)
        scores.append(r2_score(y[test], model.predict(x[test])))
    return float(np.mean(scores))
