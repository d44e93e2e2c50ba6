"""Noise-aware optimum: the configurations a GPU cannot tell apart from the best one.

A dataset keeps every repeated time of each configuration (``times_ms``).
The best configuration b is the ok one with the lowest objective. An ok
configuration c with at least two repeats belongs to the noise-aware
optimum set when a one-sided Mann-Whitney U test of c's repeats against
b's repeats, alternative "c's times are stochastically larger" (c is
slower), does not reject at level ``alpha`` (default 0.05);
``scipy.stats.mannwhitneyu`` with ``method="auto"`` (exact p-values for
small samples without ties, the normal approximation otherwise). b itself
is always in the set. Configurations with fewer than two repeats cannot be
tested and are left out; when b has fewer than two repeats the set is b
alone and the result says so.

Also reported: the spread of repeats (median over ok configurations with
repeats of their coefficient of variation, std / mean), and what random
search needs to reach the set, exactly: with m members among the N ok
configurations, P(hit within n draws) = 1 - C(N-m, n) / C(N, n), the median
n is the smallest with P >= 0.5 and the expectation is (N + 1) / (m + 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bat.core.dataset import Dataset, Status
from bat.core.errors import DatasetError
from bat.data.repeats import repeat_groups

TEST = "one-sided Mann-Whitney U (scipy, method auto) of each configuration's repeats against the best one's"


@dataclass(frozen=True)
class NoiseSet:
    """The noise-aware optimum of one dataset and how it was found."""

    dataset: str
    rows: np.ndarray  # dataset row positions in the set (the best one first)
    best_ms: float
    slowest_ms: float  # highest objective in the set
    alpha: float
    n_tested: int
    n_valid: int
    median_cv: float | None
    note: str = ""

    @property
    def size(self) -> int:
        return len(self.rows)

    def random_search_hit(self) -> dict[str, float | int]:
        """Evaluations random search (over the ok configurations) needs to draw a member: median, mean."""
        from bat.analysis.convergence import none_drawn

        n_total, m = self.n_valid, self.size
        ns = np.arange(1, n_total - m + 2)
        p_hit = 1.0 - none_drawn(n_total, m, ns)
        return {"median": int(ns[np.searchsorted(p_hit, 0.5 - 1e-12)]),
                "mean": (n_total + 1) / (m + 1)}

    def to_dict(self) -> dict[str, object]:
        hit = self.random_search_hit()
        return {"test": TEST, "alpha": self.alpha, "size": self.size, "n_tested": self.n_tested,
                "n_valid": self.n_valid, "best_ms": self.best_ms, "slowest_ms": self.slowest_ms,
                "slowest_over_best": self.slowest_ms / self.best_ms, "median_cv_of_repeats": self.median_cv,
                "random_search_evaluations_to_hit": hit, "note": self.note}


def noise_set(dataset: Dataset, alpha: float = 0.05) -> NoiseSet:
    """The configurations of ``dataset`` indistinguishable from its best (see the module docstring)."""
    from scipy.stats import mannwhitneyu

    if not 0.0 < alpha < 1.0:
        raise DatasetError(f"noise-aware optimum: alpha must be in (0, 1), got {alpha}")
    frame = dataset.frame
    ok = np.flatnonzero((frame["status"] == Status.OK.value).to_numpy())
    if len(ok) == 0:
        raise DatasetError(f"dataset {dataset.name} has no valid measurement")
    objective = frame["objective_ms"].to_numpy(dtype=float)
    best = int(ok[np.argmin(objective[ok])])
    times = frame["times_ms"].to_numpy()
    ref = np.asarray(times[best], dtype=float)
    members, tested, cvs = [best], 0, []
    note = ("" if len(ref) >= 2 else
            "the best configuration has fewer than two repeated times: the set is the best configuration alone")
    for rows, sample in repeat_groups(times, ok, minimum=2):
        cvs.append(sample.std(axis=1) / sample.mean(axis=1))
        others = rows != best
        if len(ref) >= 2 and others.any():
            p = mannwhitneyu(sample[others], ref[None, :], axis=1, alternative="greater", method="auto").pvalue
            members.extend(int(i) for i in rows[others][np.asarray(p) >= alpha])
            tested += int(others.sum())
    median_cv = float(np.median(np.concatenate(cvs))) if cvs else None
    rows_in = np.array(members, dtype=int)
    return NoiseSet(dataset.name, rows_in, float(objective[best]), float(objective[rows_in].max()), alpha, tested,
                    len(ok), median_cv, note)
