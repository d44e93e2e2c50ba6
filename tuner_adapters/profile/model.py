"""The counter model: tuning parameters -> ops counters, one regression tree per counter.

The paper's selection: a seeded random half of the dataset's rows (ok and
with every counter) trains, the other half tests; among a small grid of
tree settings (``SETTINGS``) the one with the lowest test MAE wins, ties
by RMSE. Each counter's test error is kept in ``errors``. The model is
never pickled: it is rebuilt deterministically from a named dataset and a
seed (``CounterModel.fit``), which is cheap (seconds at most). The online
source refits it from the rows a run has measured (``CounterModel.fit_frame``).

Features are the parameter values (numeric parameters) or value indices
(others); trees are invariant to monotone recoding, so nothing else is
needed. Modelled targets are the short-named counters of ``MODELLED``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bat.core.counters import INSTRUCTION_TYPES, METRICS
from bat.core.dataset import Dataset, Status, counter_columns
from bat.core.errors import DatasetError
from bat.core.space import SearchSpace

#: counters the model predicts (LOC_O comes from LOC_ST and L2_WT; threads from the launch geometry)
MODELLED: tuple[str, ...] = (
    "DRAM_RT", "DRAM_WT", "L2_RT", "L2_WT", "SHR_LT", "SHR_WT", "TEX_RWT", "LOC_ST",
    *INSTRUCTION_TYPES, "INST_ISSUE_U", "SM_E",
)
#: candidate tree settings (max_depth, min_samples_leaf)
SETTINGS: tuple[tuple[int | None, int], ...] = (
    (None, 1), (None, 2), (None, 4), (4, 1), (6, 1), (8, 1), (12, 1), (8, 2),
)
#: rows with counters a model needs (half train, half test)
MIN_ROWS = 4


def features(space: SearchSpace, values: pd.DataFrame) -> np.ndarray:
    """Model inputs of configurations given by their values (one column per parameter)."""
    cols = []
    idx = space.encode(values[list(space.names)])
    for j, p in enumerate(space.parameters):
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in p.values)
        cols.append(values[p.name].to_numpy(dtype=float) if numeric else idx[:, j].astype(float))
    return np.column_stack(cols)


@dataclass
class CounterModel:
    """One fitted tree per counter, plus each counter's test error."""

    space: SearchSpace
    source: str
    seed: int
    trees: dict[str, Any]
    errors: pd.DataFrame  # counter, metric, max_depth, min_samples_leaf, mae, rmse, n_train, n_test

    @classmethod
    def fit(cls, dataset: Dataset, space: SearchSpace, seed: int = 0) -> CounterModel:
        """Select and fit a tree per counter on ``dataset`` (see the module docstring)."""
        return cls.fit_frame(dataset.frame, space, seed, f"dataset {dataset.name}")

    @classmethod
    def fit_frame(cls, frame: pd.DataFrame, space: SearchSpace, seed: int, source: str) -> CounterModel:
        """Select and fit a tree per counter on the ok rows of ``frame`` (parameters, status, metric columns)."""
        from sklearn.tree import DecisionTreeRegressor

        metrics = [METRICS[c] for c in MODELLED]
        absent = [m for m in metrics if m not in frame.columns]
        if absent:
            raise DatasetError(f"{source} lacks counter columns {absent}; "
                               "a counter model needs every ops counter of the method")
        frame = frame[frame["status"] == Status.OK.value].dropna(subset=metrics)
        if len(frame) < MIN_ROWS:
            raise DatasetError(f"{source} has {len(frame)} rows with counters; a model needs >= {MIN_ROWS}")
        x = features(space, frame)
        order = np.random.default_rng(seed).permutation(len(frame))
        train, test = order[: len(frame) // 2], order[len(frame) // 2:]
        trees, rows = {}, []
        for short, metric in zip(MODELLED, metrics, strict=True):
            y = frame[metric].to_numpy(dtype=float)
            best: tuple[float, float, Any, tuple[int | None, int]] | None = None
            for depth, leaf in SETTINGS:
                tree = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=seed)
                tree.fit(x[train], y[train])
                err = tree.predict(x[test]) - y[test]
                mae, rmse = float(np.abs(err).mean()), float(np.sqrt((err**2).mean()))
                if best is None or (mae, rmse) < (best[0], best[1]):
                    best = (mae, rmse, tree, (depth, leaf))
            assert best is not None
            trees[short] = best[2]
            scale = float(np.abs(y[test]).mean()) or 1.0
            rows.append({"counter": short, "metric": metric, "max_depth": str(best[3][0] or "unlimited"),
                         "min_samples_leaf": best[3][1], "mae": best[0], "rmse": best[1],
                         "relative_mae": best[0] / scale, "n_train": len(train), "n_test": len(test)})
        return cls(space, source, seed, trees, pd.DataFrame(rows))

    def predict(self, values: pd.DataFrame) -> pd.DataFrame:
        """Predicted counters (columns: ``MODELLED``) of configurations given by their values."""
        x = features(self.space, values)
        return pd.DataFrame({c: self.trees[c].predict(x) for c in MODELLED}, index=values.index)


def load_model_dataset(name: str) -> Dataset:
    """A dataset by path or as ``benchmark/gpu`` from the shipped results."""
    from bat.registry import find_dataset

    if Path(name).suffix == ".parquet" or Path(name).exists():
        return Dataset.load(name)
    bench, _, gpu = name.partition("/")
    return Dataset.load(find_dataset(bench, gpu or None).path)


def shipped_counter_dataset(space: SearchSpace, exclude_gpu: str = "") -> Dataset | None:
    """A shipped dataset of this very space (benchmark name and space hash) with counters, else None.

    Never the one recorded on ``exclude_gpu`` (the target's own measurements are no tuner's to read,
    bat.core.facts); the first of the others by GPU name.
    """
    from bat.registry import dataset_entries

    entries = [e for e in dataset_entries() if (e.meta.benchmark, e.meta.space_hash) == (space.name, space.space_hash)
               and counter_columns(Dataset.read_columns(e.path))]
    entries = sorted((e for e in entries if e.meta.gpu != exclude_gpu), key=lambda e: e.meta.gpu)
    return Dataset.load(entries[0].path) if entries else None
