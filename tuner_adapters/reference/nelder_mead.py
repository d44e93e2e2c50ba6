"""Nelder-Mead on the discrete grid of value indices (as in OptACC).

A simplex of d + 1 vertices lives in index space (d = number of parameters
with more than one value). Reflection, expansion, contraction and shrink use
the coefficients ``alpha``, ``gamma``, ``rho`` and ``sigma`` (1, 2, 0.5, 0.5 by
default); every computed point is rounded to the nearest valid configuration
(:class:`~bat.tuner_adapters.reference.steps.NearestValid`). The search has
converged when the same point appears twice in the simplex; it then restarts
from a random configuration not evaluated yet, while budget remains. Points
that were already evaluated are answered from the problem's memory (no
budget); after ``max_stall`` such answers in a row the search also restarts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bat.core.hyperparams import HyperParam
from bat.core.problem import Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.reference.steps import NearestValid, random_unevaluated


@dataclass(kw_only=True)
class NelderMead(Tuner):
    """Discrete Nelder-Mead with rounding to the nearest valid configuration, restarted on convergence."""

    alpha: float = 1.0  # reflection
    gamma: float = 2.0  # expansion
    rho: float = 0.5  # contraction
    sigma: float = 0.5  # shrink
    initial_size: float = 0.25  # initial simplex edge, as a fraction of each parameter's value count
    max_stall: int = 50
    #: how many times the search restarted (convergence or stall), for inspection
    restarts: int = field(default=0, init=False)
    summary = "Nelder-Mead on the index grid, rounded to the nearest valid configuration, restarted on convergence"
    budget_agnostic = True  # never reads the budget
    HYPERPARAMETERS = (
        HyperParam("alpha", "float", 1.0, 0.25, 3.0, doc="reflection"),
        HyperParam("gamma", "float", 2.0, 1.1, 4.0, doc="expansion"),
        HyperParam("rho", "float", 0.5, 0.1, 0.9, doc="contraction"),
        HyperParam("sigma", "float", 0.5, 0.1, 0.9, doc="shrink"),
        HyperParam("initial_size", "float", 0.25, 0.05, 1.0, doc="initial simplex edge / value count"),
        HyperParam("max_stall", "int", 50, 5, 500, log=True, doc="repeats in a row before a restart"),
    )

    def __post_init__(self) -> None:
        if self.alpha <= 0 or self.gamma <= 1 or not 0 < self.rho < 1 or not 0 < self.sigma < 1:
            raise ValueError("need alpha > 0, gamma > 1, 0 < rho < 1, 0 < sigma < 1")
        if not 0 < self.initial_size <= 1:
            raise ValueError(f"initial_size must be in (0, 1], got {self.initial_size}")
        if self.max_stall < 1:
            raise ValueError(f"max_stall must be >= 1, got {self.max_stall}")

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        self.restarts = 0
        rounder = NearestValid(problem.space, rng)
        while not problem.exhausted:
            start = random_unevaluated(problem, rng)
            if start is None:
                return
            self._descend(problem, rounder, start)
            self.restarts += 1

    def _descend(self, problem: Problem, rounder: NearestValid, start: np.ndarray) -> None:
        """One Nelder-Mead search from ``start`` until convergence, stall or budget."""
        space = problem.space
        stall = 0

        def f(row: np.ndarray) -> float:
            nonlocal stall
            config = space.config(row)
            stall = stall + 1 if problem.is_evaluated(config) else 0
            return problem.evaluate(config).fitness

        axes = np.flatnonzero(space.radices > 1)
        simplex = [start]
        for a in axes:
            step = max(1.0, self.initial_size * space.radices[a])
            point = start.astype(float)
            point[a] += step if start[a] + step <= space.radices[a] - 1 else -step
            simplex.append(rounder(point))
        values: list[float] = []
        for v in simplex:
            if problem.exhausted:
                return
            values.append(f(v))
        while not problem.exhausted and stall < self.max_stall and not _converged(simplex):
            order = np.argsort(values, kind="stable")
            simplex = [simplex[i] for i in order]
            values = [values[i] for i in order]
            centroid = np.mean(np.asarray(simplex[:-1], dtype=float), axis=0)
            worst = simplex[-1].astype(float)
            xr = rounder(centroid + self.alpha * (centroid - worst))
            fr = f(xr)
            if values[0] <= fr < values[-2]:
                simplex[-1], values[-1] = xr, fr
                continue
            if problem.exhausted:
                return
            if fr < values[0]:
                xe = rounder(centroid + self.gamma * (xr - centroid))
                fe = f(xe)
                simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
                continue
            outside = fr < values[-1]
            target = xr if outside else worst
            xc = rounder(centroid + self.rho * (target - centroid))
            fc = f(xc)
            if fc < min(fr, values[-1]):
                simplex[-1], values[-1] = xc, fc
                continue
            best = simplex[0].astype(float)
            for i in range(1, len(simplex)):
                if problem.exhausted:
                    return
                simplex[i] = rounder(best + self.sigma * (simplex[i] - best))
                values[i] = f(simplex[i])


def _converged(simplex: list[np.ndarray]) -> bool:
    """True when the same point appears twice in the simplex."""
    return len({tuple(map(int, v)) for v in simplex}) < len(simplex)
