"""The outer search: a tuner of this project proposes settings of the hyper-parameter space in batches.

The searcher (``reference:random``, ``reference:grid``, ``optuna`` for TPE,
or any registered tuner) runs on a ``Problem`` over the discretised space
(``space.search_space``) whose backend answers a setting already evaluated
with its stored score, and a setting not yet evaluated with a stand-in (the
worst score seen so far, a "constant liar") while it collects up to
``batch`` such new settings; then the batch is evaluated in parallel and the
searcher is run again from the start with the same seed, now answered with
the true scores. Random and grid search do not look at the answers, so they
propose exactly the same sequence either way; a model-based searcher (TPE)
may leave a setting it was told a stand-in for, which stays evaluated and
counts towards the number of settings tried (the driver stops at that number). With ``batch`` 1 the searcher
sees only true scores. Rerunning from the stored scores is also what makes a
killed hypertune resume where it stopped.

The objective handed to the searcher is ``exp(-score)``: positive and
decreasing in the methodology score, so minimising it maximises the score.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bat.core.dataset import Status
from bat.core.problem import Backend, Budget, EvalResult, Problem, no_noise
from bat.core.space import SearchSpace


class _BatchFull(Exception):
    """The batch of new settings is full: the searcher is stopped here."""


class _Answers:
    """The backend of the outer problem (see the module docstring)."""

    name = "hypertune"

    def __init__(self, known: Callable[[dict[str, Any]], float | None], batch: int) -> None:
        self.known, self.batch = known, batch
        self.pending: list[dict[str, Any]] = []
        self.worst: float | None = None

    def describe(self) -> str:
        return "inner campaigns scored by the methodology score"

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        score = self.known(dict(config))
        if score is None:
            if len(self.pending) >= self.batch:
                raise _BatchFull
            self.pending.append(dict(config))
            score = self.worst if self.worst is not None else 0.0
        else:
            self.worst = score if self.worst is None else min(self.worst, score)
        if not math.isfinite(score):
            return EvalResult(config=dict(config), status=Status.RUNTIME_ERROR, message="no score")
        return EvalResult(config=dict(config), status=Status.OK, objective_ms=math.exp(-score), cost_s=0.0)

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)

    def close(self) -> None:
        """Nothing to release."""


def next_batch(searcher: str, space: SearchSpace, settings: int, batch: int, seed: int,
               known: Callable[[dict[str, Any]], float | None]) -> list[dict[str, Any]]:
    """The next settings to evaluate (empty when ``settings`` have been tried or the searcher stops)."""
    from bat.registry import make_tuner

    answers = _Answers(known, batch)
    problem = Problem(space=space, backend=answers, budget=Budget(max_evals=min(settings, space.count_valid())))
    with contextlib.suppress(_BatchFull):
        make_tuner(searcher).tune(problem, np.random.default_rng(seed))
    return answers.pending
