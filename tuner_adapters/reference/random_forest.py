"""Model-based search with a random forest (scikit-learn).

``n_initial`` random valid configurations are evaluated; a random forest
(``n_trees`` trees, one job) is trained on their value indices against the
logarithm of their time (failed configurations excluded); the ``top_k``
configurations with the lowest predicted time among the valid ones not yet
evaluated are evaluated next. Then the model is trained again on everything
evaluated and the next ``top_k`` follow, until the budget is spent (the
sample-size study evaluated one batch of 10; iterating spends any budget).
Candidates are all valid configurations when there are at most
``max_candidates``, otherwise that many drawn at random for each batch.
The initial sample is drawn before any result is known, so those proposals
run ahead of their results (``runs_ahead``, bat.core.ahead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.ahead import RunsAhead
from bat.core.errors import MissingDependencyError
from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner, library_seed
from bat.tuner_adapters.reference.steps import row_key


@dataclass(kw_only=True)
class RandomForestSearch(Tuner):
    """Train a random forest on random samples, evaluate its best predictions, repeat."""

    n_initial: int = 20
    top_k: int = 10
    n_trees: int = 100
    max_candidates: int = 1 << 16
    summary = "random-forest model (scikit-learn) trained on random samples; evaluates its top predictions"
    budget_agnostic = True  # fixed initial sample and top-k batches, repeated until the budget is spent
    slow = True  # fits a forest per batch: seconds on a tiny space
    HYPERPARAMETERS = (
        HyperParam("n_initial", "int", 20, 5, 100, log=True, doc="random samples before the first fit"),
        HyperParam("top_k", "int", 10, 1, 50, log=True, doc="predictions evaluated per fit"),
        HyperParam("n_trees", "int", 100, 10, 300, log=True, doc="trees of the forest"),
        HyperParam("max_candidates", "int", 1 << 16, 1 << 10, 1 << 18, log=True, doc="predicted per fit"),
    )

    @property
    def runs_ahead(self) -> RunsAhead:  # type: ignore[override]
        """The ``n_initial`` random samples depend on no result."""
        return RunsAhead(first=self.n_initial)

    def __post_init__(self) -> None:
        for name in ("n_initial", "top_k", "n_trees", "max_candidates"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        try:
            from sklearn.ensemble import RandomForestRegressor
        except ImportError as exc:
            raise MissingDependencyError("reference:random_forest needs scikit-learn") from exc
        space = problem.space
        total = space.count_valid()
        done: dict[tuple[int, ...], float] = {}
        for row in space.sample_valid(min(self.n_initial, total), rng):
            if problem.exhausted:
                return
            done[row_key(row)] = problem.evaluate(space.config(row)).fitness
        while not problem.exhausted and len(done) < total:
            ok = [(k, f) for k, f in done.items() if np.isfinite(f)]
            cands = self._candidates(space, total, rng)
            cands = cands[[row_key(r) not in done for r in cands]]
            if len(cands) == 0:
                continue
            if len(ok) >= 2:
                model = RandomForestRegressor(n_estimators=self.n_trees, n_jobs=1,
                                              random_state=library_seed(rng))
                model.fit(np.array([k for k, _ in ok]), np.log([f for _, f in ok]))
                order = np.argsort(model.predict(cands), kind="stable")
            else:  # nothing ok to learn from yet: keep sampling at random
                order = rng.permutation(len(cands))
            for row in cands[order[: self.top_k]]:
                if problem.exhausted:
                    return
                done[row_key(row)] = problem.evaluate(space.config(row)).fitness

    def _candidates(self, space, total: int, rng: np.random.Generator) -> np.ndarray:
        if total <= self.max_candidates:
            return space.from_ids(space.valid_ids())
        return space.sample_valid(self.max_candidates, rng)
