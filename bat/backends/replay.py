"""Replay backend: answers evaluations from a recorded dataset, without a GPU.

A configuration the dataset lacks is reported as ``missing`` (counted by the
problem like any failure, never treated as slow, charged no time); a
recorded failure returns its recorded status. The cost of an evaluation is
what it took when it was recorded: compile, verification and benchmark time
(``bat.core.costs``, which also says where that falls back), kept in its
parts (``compile_s``, ``verify_s``) for the simulated clock.

Measurement noise (``noise``): by default an evaluation returns the recorded
objective. With ``"repeat"`` it returns one of the configuration's recorded
repeated times, drawn uniformly; with ``"bootstrap"`` the mean of a resample
(with replacement) of those times, as many as were recorded, i.e. what
running the same measurement again could have given. The draw depends only
on (``noise_seed``, the configuration's row), so it is reproducible whatever
the order of evaluation, and two tuners run with the same seed see the same
noisy value for the same configuration. A configuration with fewer than two
recorded times returns its recorded objective (``noise_fallbacks`` counts
those answers, and ``describe`` says how many there are); a dataset with no
configuration of two or more recorded times is refused for a noise mode.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bat.core.costs import RecordedCosts, recorded_costs
from bat.core.dataset import RESOURCE_COLUMNS, Dataset, Status, counter_columns
from bat.core.errors import DatasetError, UnknownNameError
from bat.core.frozen import made
from bat.core.problem import EvalResult

#: noise mode -> what an evaluation returns as its objective
NOISE_MODES: dict[str, str] = {
    "none": "the recorded objective",
    "repeat": "one recorded repeated time, drawn uniformly",
    "bootstrap": "the mean of a resample with replacement of the recorded repeated times",
}


class ReplayBackend:
    """Looks configurations up in ``dataset``."""

    name = "replay"
    recorded = True  # answers from recorded data: a measurement with fewer repeats can be drawn (bat.core.fidelity)
    copies_config = True  # each result holds its own plain copy of the configuration (bat.core.problem)

    def __init__(self, dataset: Dataset, *, noise: str = "none", noise_seed: int = 0) -> None:
        self.dataset = dataset
        frame = dataset.frame
        self._extra_cols = [c for c in (*RESOURCE_COLUMNS, *counter_columns(frame)) if c in frame.columns]
        self._status = frame["status"].to_numpy()
        self._objective = frame["objective_ms"].to_numpy(dtype=float)
        # tuples: shared by every answer of the row, and left alone by the garbage collector once it has seen them
        self._times = [tuple(t) for t in frame["times_ms"].to_list()]
        self._compile = frame["compile_ms"].to_numpy(dtype=float)
        self.costs: RecordedCosts = recorded_costs(frame)
        self._message = [str(m) for m in frame["message"].to_list()]
        self._extra = frame[self._extra_cols].to_numpy(dtype=float) if self._extra_cols else None
        # each row's answer as Python values, read once (an evaluation then only indexes lists)
        self._row_status = [_STATUS[v] for v in self._status.tolist()]
        self._row_objective = self._objective.tolist()
        self._row_compile = [_num(v) for v in self._compile.tolist()]
        self._row_cost = (self.costs.cost_s.tolist(), self.costs.compile_s.tolist(), self.costs.verify_s.tolist())
        self.missing = 0
        ok = self._status == Status.OK.value
        self._ok_rows = int(ok.sum())
        self._repeated_rows = sum(len(self._times[i]) >= 2 for i in np.flatnonzero(ok))
        self.noise, self.noise_seed = self._check_noise(noise), int(noise_seed)
        self.noise_fallbacks = 0

    def with_noise(self, noise: str, seed: int) -> ReplayBackend:
        """The same data with another noise mode and seed (arrays shared, counters reset)."""
        other = copy.copy(self)
        other.noise, other.noise_seed = other._check_noise(noise), int(seed)
        other.missing = other.noise_fallbacks = 0
        return other

    def _check_noise(self, noise: str) -> str:
        """``noise``, a known mode with something to draw from: a dataset without any configuration of two or more
        recorded times would replay its recorded objective under the name of noise (DatasetError)."""
        if noise not in NOISE_MODES:
            raise UnknownNameError("replay noise mode", noise, list(NOISE_MODES))
        if noise != "none" and self._ok_rows and not self._repeated_rows:
            raise DatasetError(f"--noise {noise}: dataset {self.dataset.name} records fewer than two times for "
                               "every configuration, so there is nothing to draw from; replay it without --noise")
        return noise

    def describe(self) -> str:
        m = self.dataset.meta
        where = m.gpu_name or m.gpu
        when = f", measured {m.date}" if m.date else ""
        noisy = (f"; objective = {NOISE_MODES[self.noise]} (seed {self.noise_seed})"
                 if self.noise != "none" else "")
        if self.noise != "none" and self._repeated_rows < self._ok_rows:
            noisy += (f"; {self._ok_rows - self._repeated_rows} of {self._ok_rows} ok configurations have fewer "
                      "than two recorded times and answer with their recorded objective")
        return f"replaying {len(self.dataset.frame)} recorded configurations of {m.benchmark} on {where}{when}{noisy}"

    def lookup(self, config: Mapping[str, Any]) -> int | None:
        """Row number of ``config`` in the dataset, or None."""
        return self.dataset.row_of(config)

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        i = self.dataset.row_of(config)  # lookup, one call fewer: once per evaluation
        cfg = dict(config)
        if i is None:
            self.missing += 1
            return EvalResult(config=cfg, status=Status.MISSING, message="not in the recorded dataset")
        times = self._times[i]
        status = self._row_status[i]
        extra = {}
        if self._extra is not None:
            extra = {c: float(v) for c, v in zip(self._extra_cols, self._extra[i], strict=True) if not math.isnan(v)}
        cost, compile_s, verify_s = self._row_cost
        return made(EvalResult, config=cfg, status=status,
                    objective_ms=(self._row_objective[i] if self.noise == "none" else self._observed(i, times))
                    if status is Status.OK else None, times_ms=times,
                    compile_ms=self._row_compile[i], cost_s=cost[i], message=self._message[i], extra=extra,
                    compile_s=compile_s[i], verify_s=verify_s[i])

    def _observed(self, i: int, times: tuple[float, ...]) -> float:
        """The objective drawn under the noise mode (not "none")."""
        if len(times) < 2:
            self.noise_fallbacks += 1
            return self._row_objective[i]
        rng = np.random.default_rng([self.noise_seed, i])
        draws = rng.choice(np.asarray(times, dtype=float), size=1 if self.noise == "repeat" else len(times))
        return float(draws.mean())

    def close(self) -> None:
        """Nothing to release."""




#: a status by its recorded value
_STATUS = {s.value: s for s in Status}


def _num(v: float) -> float | None:
    return None if math.isnan(v) else float(v)
