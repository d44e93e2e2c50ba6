"""Stopping rules of PageRank on a fitness flow graph, and the result that states which one held.

Two rules (docs/METHODS.md, proportion of centrality):

- ``l1`` (this project's default): stop when the L1 residual of the
  normalised iterate, ||G(x) - x||_1 with G one networkx PageRank step, is at
  most ``tol`` (1e-9). A total over all nodes of a probability vector, so it
  means the same at every size; the distance to the exact PageRank is then at
  most residual / (1 - alpha).
- ``networkx`` (the paper's): power iteration from the uniform vector,
  stopping when the L1 change of one step is below N x ``tol`` (1e-6), as
  ``networkx.pagerank`` does. It reproduces the published small-space values;
  past about 10^6 nodes it stops after one step.

A run that hits its iteration limit before its rule holds raises
:class:`~bat.core.errors.ConvergenceError` unless the caller allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.errors import ConvergenceError, UnknownNameError

ALPHA = 0.85
RULES = {
    "l1": "L1 residual ||G(x) - x||_1 <= tol in total (G: one PageRank step); same meaning at every size",
    "networkx": "L1 change of one power step < N * tol (networkx.pagerank, the paper's rule)",
}
DEFAULT_TOL = {"l1": 1e-9, "networkx": 1e-6}


@dataclass(frozen=True)
class StopRule:
    """A named stopping rule and its tolerance."""

    name: str = "l1"
    tol: float | None = None

    def __post_init__(self) -> None:
        if self.name not in RULES:
            raise UnknownNameError("PageRank stopping rule", self.name, list(RULES))
        tol = DEFAULT_TOL[self.name] if self.tol is None else self.tol
        object.__setattr__(self, "tol", tol)
        if not tol > 0:
            raise ValueError(f"PageRank tolerance must be > 0, got {tol!r}")

    def threshold(self, n_nodes: int) -> float:
        """The L1 bound the residual (or change) must meet on a graph of ``n_nodes`` nodes."""
        tol = DEFAULT_TOL[self.name] if self.tol is None else self.tol  # never None once made (__post_init__)
        return tol * n_nodes if self.name == "networkx" else tol

    def describe(self) -> str:
        return f"{self.name} (tol {self.tol:g}): {RULES[self.name]}"


@dataclass
class PageRankRun:
    """PageRank of every node (0 off the nodes) and how the iteration ended.

    ``residual``: for ``l1`` the L1 residual of the returned vector; for
    ``networkx`` the L1 change of the last step (an upper bound on the
    returned vector's residual).
    """

    rank: np.ndarray
    rule: StopRule
    method: str
    iterations: int
    residual: float
    converged: bool

    def error_bound(self) -> float:
        """Upper bound on the L1 distance from ``rank`` to the exact PageRank."""
        return self.residual / (1.0 - ALPHA)

    def to_dict(self) -> dict[str, object]:
        return {"rule": self.rule.name, "tol": self.rule.tol, "rule_text": RULES[self.rule.name],
                "method": self.method, "iterations": self.iterations, "residual": self.residual,
                "converged": self.converged, "l1_error_bound": self.error_bound()}


def finish(run: PageRankRun, max_iter: int, allow_unconverged: bool) -> PageRankRun:
    """``run`` itself, or ConvergenceError when it stopped before its rule held and that is not allowed."""
    if not run.converged and not allow_unconverged:
        raise ConvergenceError(f"PageRank did not converge in {max_iter} iterations under rule "
                               f"{run.rule.describe()} (residual {run.residual:.3g})")
    return run
