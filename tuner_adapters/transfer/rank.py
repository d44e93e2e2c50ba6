"""Rank transfer: configurations by their mean normalised rank over the source GPUs, then a local search.

The first ``n_head`` configurations in order of mean normalised rank (each
source ranks its measured configurations from 0, its fastest, to 1, its
slowest or failed; the mean is over the sources that measured one; ties in a
seeded random order) are evaluated. Then a local search: the unevaluated
neighbours of the fastest configuration measured so far (configurations that
differ from it in one parameter, any value: ``SearchSpace.neighbours``,
Hamming) are tried best prior rank first (a neighbour no source measured
counts as rank 0.5), and the search moves as soon as one is faster; when the
incumbent has no unevaluated neighbour left, the next configuration in prior
order is evaluated. With probability ``explore`` a proposal is a random
unevaluated configuration instead, so that a prior that misleads on this
target costs a bounded share of the budget.

Sources of the idea: the BAT 2.0 paper (Tørring et al., IPDPSW 2023)
measures how a configuration tuned on one GPU performs on another; here the
whole ordering is carried over, by rank, since GPUs differ in speed but
often agree on which configurations are fast. The local search is the
one-parameter neighbourhood of Kernel Tuner's greedy local strategies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.transfer.prior import Prior, Walk, order, prior_of

if TYPE_CHECKING:
    from bat.core.space import SearchSpace

#: prior rank of a neighbour that no source measured
UNKNOWN_RANK = 0.5


@dataclass(kw_only=True)
class RankTransfer(Tuner):
    """Evaluates by mean source rank, then searches the incumbent's neighbours by source rank."""

    n_head: int = 3
    explore: float = 0.1
    summary = "transfer: configurations by mean normalised rank over the other GPUs, then a local search"
    notes = "needs a prior (problem.facts.others, the transfer study)"
    budget_agnostic = True  # every choice depends on the seed and the results, never on the budget
    HYPERPARAMETERS = (
        HyperParam("n_head", "int", 3, 1, 100, log=True, doc="configurations taken in prior order first"),
        HyperParam("explore", "float", 0.1, 0.0, 0.5, doc="chance that a proposal is a random one"),
    )

    def __post_init__(self) -> None:
        if self.n_head < 1:
            raise ValueError(f"n_head must be >= 1, got {self.n_head}")
        if not 0.0 <= self.explore <= 1.0:
            raise ValueError(f"explore must be in [0, 1], got {self.explore}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        prior = prior_of(problem, "transfer:rank")
        space = problem.space
        walk = Walk(problem, rng)
        score = prior.mean_rank()
        queue = prior.ids[order(score, rng)]
        nxt = 0  # the next position in ``queue`` that may not be evaluated yet
        while not walk.finished:
            fid = None
            if len(walk.done) >= self.n_head and rng.random() < self.explore:
                fid = walk.random_id()
            elif len(walk.done) >= self.n_head and (centre := walk.best()) is not None:
                fid = self._neighbour(space, prior, score, walk, centre, rng)
            if fid is None:
                while nxt < len(queue) and int(queue[nxt]) in walk.done:
                    nxt += 1
                fid = int(queue[nxt]) if nxt < len(queue) else walk.random_id()
            if fid is None:
                return
            walk.evaluate(fid)

    @staticmethod
    def _neighbour(space: SearchSpace, prior: Prior, score: np.ndarray, walk: Walk, centre: int,
                   rng: np.random.Generator) -> int | None:
        """The unevaluated neighbour of ``centre`` with the best prior rank, None when none is left."""
        rows = space.neighbours(space.from_ids(np.array([centre]))[0], "hamming")
        ids = space.to_ids(rows) if len(rows) else np.empty(0, np.int64)
        ids = ids[[int(i) not in walk.done for i in ids]] if len(ids) else ids
        if not len(ids):
            return None
        at = prior.position(ids)
        ranks = np.where(at >= 0, score[np.maximum(at, 0)], UNKNOWN_RANK)
        return int(ids[order(ranks, rng)[0]])
