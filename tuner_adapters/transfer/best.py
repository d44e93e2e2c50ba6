"""Best-first transfer (the BAT 2.0 baseline): the source GPUs' best configurations, then random search.

Each source GPU's ``per_source`` fastest configurations (valid in the
target's space; deduplicated across sources) are evaluated first, in order of
their mean log time relative to each source's best over the sources that
measured them (ties in a seeded random order); then random search without
replacement (bat.tuner_adapters.transfer.prior.Walk). The idea is the BAT 2.0
paper's portability measurement: another GPU's best configuration, run on
the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.transfer.prior import Prior, Walk, order, prior_of


@dataclass(kw_only=True)
class BestFirst(Tuner):
    """Evaluates the sources' best configurations first, then samples at random."""

    per_source: int = 1
    summary = "transfer: the other GPUs' best configurations first (BAT 2.0 baseline), then random search"
    notes = "needs a prior (problem.facts.others, the transfer study)"
    budget_agnostic = True  # a fixed head, then a random stream that never reads the budget
    HYPERPARAMETERS = (HyperParam("per_source", "int", 1, 1, 64, log=True,
                                  doc="fastest configurations taken from each source GPU"),)

    def __post_init__(self) -> None:
        if self.per_source < 1:
            raise ValueError(f"per_source must be >= 1, got {self.per_source}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        prior = prior_of(problem, "transfer:best")
        walk = Walk(problem, rng)
        for fid in head(prior, self.per_source, rng):
            if walk.finished:
                return
            walk.evaluate(int(fid))
        while not walk.finished:
            fid = walk.random_id()
            if fid is None:
                return
            walk.evaluate(fid)


def head(prior: Prior, per_source: int, rng: np.random.Generator) -> np.ndarray:
    """Flat ids of each source's ``per_source`` fastest configurations, ordered by mean log relative time."""
    picked: set[int] = set()
    for s in range(len(prior.sources)):
        times = prior.log_time[:, s]
        ok = np.flatnonzero(np.isfinite(times))
        picked.update(ok[np.argsort(times[ok], kind="stable")[:per_source]].tolist())
    rows = np.array(sorted(picked), dtype=np.int64)
    return prior.ids[rows[order(prior.mean_log_time()[rows], rng)]]
