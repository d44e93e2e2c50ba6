"""Permutation feature importance (PFI) with CatBoost, and the reduced search space.

Choices (stated in the output): the model's quality is the K-fold
cross-validated R^2 on the ok configurations; the PFI of a parameter is the
drop in hold-out R^2 (a fixed 2/3 train, 1/3 test split) when that column
is shuffled in the data and the model is retrained, repeated with fresh
shuffles; the band is the mean +- the 95 % Student-t half-width over the
repeats. A parameter with one value in the data has PFI 0 without training.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from bat.analysis.model import ModelSettings, cv_r2, fit
from bat.core.dataset import Dataset
from bat.core.space import SearchSpace

REDUCED_THRESHOLD = 0.05


@dataclass
class Importance:
    """PFI per parameter of one dataset."""

    parameters: list[str]
    mean: np.ndarray
    half_width: np.ndarray
    repeats: np.ndarray  # (parameters, repeats)
    cv_r2: float
    holdout_r2: float
    n_rows: int
    settings: ModelSettings

    def to_dict(self) -> dict[str, object]:
        return {
            "method": "drop in hold-out R^2 (2/3 train, 1/3 test) after shuffling the column and "
                      "retraining; band: mean +- 95 % Student-t half-width over repeats",
            "cv_r2": self.cv_r2, "holdout_r2": self.holdout_r2, "n_rows": self.n_rows,
            "model": self.settings.to_dict(),
            "pfi": {p: {"mean": float(m), "half_width": float(h), "repeats": r.tolist()}
                    for p, m, h, r in zip(self.parameters, self.mean, self.half_width,
                                          self.repeats, strict=True)},
            "sum_of_pfi": float(self.mean.sum()),
        }


def permutation_importance(dataset: Dataset, space: SearchSpace, rng: np.random.Generator, *,
                           repeats: int = 3, settings: ModelSettings | None = None,
                           max_rows: int | None = None,
                           progress: Callable[[float], None] | None = None) -> Importance:
    """PFI of every parameter of ``space`` on the ok rows of ``dataset``."""
    from scipy.stats import t as student_t
    from sklearn.metrics import r2_score

    settings = settings or ModelSettings()
    ok = dataset.ok
    if max_rows is not None and len(ok) > max_rows:
        ok = ok.iloc[np.sort(rng.choice(len(ok), max_rows, replace=False))]
    x = space.encode(ok[list(space.names)]).astype(float)
    y = ok["objective_ms"].to_numpy(dtype=float)
    cv = cv_r2(x, y, settings, rng)
    order = rng.permutation(len(y))
    n_train = (2 * len(y)) // 3
    train, test = order[:n_train], order[n_train:]
    seed = int(rng.integers(2**31))

    def holdout(xx: np.ndarray) -> float:
        return float(r2_score(y[test], fit(xx[train], y[train], settings, seed).predict(xx[test])))

    base = holdout(x)
    varying = [j for j in range(x.shape[1]) if len(np.unique(x[:, j])) > 1]
    drops = np.zeros((x.shape[1], repeats))
    for done, j in enumerate(varying):
        for r in range(repeats):
            shuffled = x.copy()
            shuffled[:, j] = rng.permutation(shuffled[:, j])
            drops[j, r] = base - holdout(shuffled)
        if progress is not None:
            progress((done + 1) / len(varying))
    half = (student_t.ppf(0.975, repeats - 1) * drops.std(axis=1, ddof=1) / np.sqrt(repeats)
            if repeats > 1 else np.full(len(drops), np.nan))
    return Importance(list(space.names), drops.mean(axis=1), half, drops, cv, base, len(y), settings)


def reduced_parameters(importances: Mapping[str, Importance],
                       threshold: float = REDUCED_THRESHOLD) -> list[str]:
    """Parameters (in space order) whose mean PFI is >= ``threshold`` on some GPU."""
    first = next(iter(importances.values()))
    return [p for j, p in enumerate(first.parameters)
            if any(imp.mean[j] >= threshold for imp in importances.values())]
