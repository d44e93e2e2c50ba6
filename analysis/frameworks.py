"""Datasets of one benchmark and GPU recorded by different frameworks, compared configuration by configuration.

The BAT 2.0 study ran its kernels under Kernel Tuner and KTT on the same
GPUs; this answers its cross-framework question from the data. For two
datasets of one space and one GPU (``A`` and ``B``, named by the framework
that wrote them):

- coverage: configurations recorded by each, by both, ok in both, and ok in
  one but failed in the other (each framework's failure statuses differ);
- Spearman's rank correlation of the objective over the configurations ok in
  both (scipy.stats.spearmanr): do the two order the space alike?
- the best time of each over all its ok configurations and their ratio B / A,
  and whether they name the same best configuration;
- the scale: the median over the shared configurations of B's time / A's
  (frameworks time differently: events around one launch, a total with
  overheads), and the configurations where the two disagree beyond their
  repeats' noise: ``|log(tB / tA) - log(scale)| > 3 * sqrt(seA^2 + seB^2)``,
  se being the relative standard error of a configuration's mean time, the
  coefficient of variation of its n repeats (``times_ms``) over sqrt(n), in
  each dataset (the objective is the mean of the repeats). A dataset with
  fewer than two repeats of a configuration has no noise estimate there: its
  se counts as 0 and the comparison says how many configurations that
  concerns; where neither has repeats no configuration is judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bat.core.dataset import Dataset, DatasetMeta, Status

#: how many standard deviations of the repeats a disagreement must exceed
NOISE_SIGMAS = 3.0
#: configurations listed as examples of disagreement
EXAMPLES = 5


def framework(meta: DatasetMeta) -> str:
    """The framework that recorded a dataset, as its metadata tells it."""
    if "ktt_header" in meta.extra:
        return meta.toolkit or "KTT"
    if "kernel_tuner_header" in meta.extra:
        return "Kernel Tuner"
    if "t4" in meta.extra:
        return "a T4 file"
    return f"BAT ({meta.toolkit})" if meta.toolkit else "BAT"


@dataclass
class FrameworkComparison:
    """Two datasets of one space and GPU, recorded by different frameworks (or runs), compared."""

    benchmark: str
    gpu: str
    datasets: tuple[str, str]  # the files (or names) of A and B
    frameworks: tuple[str, str]
    recorded: tuple[int, int]
    both_recorded: int
    both_ok: int
    ok_only_in: tuple[int, int]  # ok in A but failed in B, and the other way
    spearman: float | None
    best_ms: tuple[float | None, float | None]
    best_ratio: float | None  # B's best / A's best
    same_best: bool
    scale: float | None  # median of tB / tA over the configurations ok in both
    judged: int  # configurations with a noise estimate from at least one side
    without_repeats: tuple[int, int]  # shared ok configurations with fewer than two repeats in A, in B
    disagree: int
    examples: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        a, b = self.frameworks
        out = [f"{self.benchmark}/{self.gpu}: {a} ({self.recorded[0]:,} configurations) and {b} "
               f"({self.recorded[1]:,}): {self.both_recorded:,} recorded by both, {self.both_ok:,} ok in both, "
               f"{self.ok_only_in[0]:,} ok only in {a}'s, {self.ok_only_in[1]:,} only in {b}'s"]
        if self.both_ok:
            out.append(f"  rank correlation of the times (Spearman) {_num(self.spearman)}; best {_ms(self.best_ms[0])} "
                       f"({a}) and {_ms(self.best_ms[1])} ({b}), ratio {_num(self.best_ratio)}, "
                       f"{'the same' if self.same_best else 'not the same'} configuration; "
                       f"{b}'s times / {a}'s: median {_num(self.scale)}")
            out.append(f"  {self.disagree:,} of {self.judged:,} configurations judged differ beyond the repeats' "
                       f"noise ({NOISE_SIGMAS:g} sigma, after the median scale); without repeats: "
                       f"{self.without_repeats[0]:,} in {a}'s, {self.without_repeats[1]:,} in {b}'s")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_frameworks(first: Dataset, second: Dataset, labels: tuple[str, str] | None = None
                       ) -> FrameworkComparison:
    """``first`` (A) and ``second`` (B), datasets of one space's parameters, compared (module docstring)."""
    params = list(first.parameters)
    a, b = (_indexed(d, params) for d in (first, second))
    shared = a.index.intersection(b.index)
    ok_a, ok_b = a["status"] == Status.OK.value, b["status"] == Status.OK.value
    both = shared[ok_a[shared].to_numpy() & ok_b[shared].to_numpy()]
    ta, tb = a.loc[both, "objective_ms"].to_numpy(float), b.loc[both, "objective_ms"].to_numpy(float)
    best = [_best(frame, ok) for frame, ok in ((a, ok_a), (b, ok_b))]
    spearman = scale = None
    disagree = judged = 0
    examples: list[dict[str, Any]] = []
    without = (0, 0)
    if len(both) >= 2:
        from scipy.stats import spearmanr

        rho = float(spearmanr(ta, tb).statistic)
        spearman = rho if np.isfinite(rho) else None
    if len(both):
        ratio = np.log(tb / ta)
        scale = float(np.exp(np.median(ratio)))
        se_a, se_b = _relative_se(a.loc[both, "times_ms"]), _relative_se(b.loc[both, "times_ms"])
        without = (int(np.isnan(se_a).sum()), int(np.isnan(se_b).sum()))
        has = ~(np.isnan(se_a) & np.isnan(se_b))
        noise = NOISE_SIGMAS * np.sqrt(np.nan_to_num(se_a) ** 2 + np.nan_to_num(se_b) ** 2)
        deviation = np.abs(ratio - np.log(scale))
        beyond = has & (deviation > noise)
        judged, disagree = int(has.sum()), int(beyond.sum())
        for i in np.argsort(-np.where(beyond, deviation, -1.0))[: min(EXAMPLES, disagree)]:
            examples.append({"config": dict(zip(params, _plain(both[i]), strict=True)),
                             "ms": [float(ta[i]), float(tb[i])], "scaled_ratio": float(np.exp(deviation[i]))})
    return FrameworkComparison(
        benchmark=first.meta.benchmark, gpu=first.meta.gpu,
        datasets=labels or (first.name, second.name),
        frameworks=_distinct(framework(first.meta), framework(second.meta)),
        recorded=(len(a), len(b)), both_recorded=len(shared), both_ok=len(both),
        ok_only_in=(int((ok_a[shared] & ~ok_b[shared]).sum()), int((~ok_a[shared] & ok_b[shared]).sum())),
        spearman=spearman, best_ms=(best[0][1], best[1][1]),
        best_ratio=best[1][1] / best[0][1] if best[0][1] and best[1][1] else None,
        same_best=best[0][0] is not None and best[0][0] == best[1][0],
        scale=scale, judged=judged, without_repeats=without, disagree=disagree, examples=examples)


def pairs_across_frameworks(datasets: Sequence[tuple[str, Dataset]]) -> list[FrameworkComparison]:
    """Every two of ``datasets`` (label, dataset) recorded on one space and one GPU, compared in the given order."""
    out = []
    for i, (label_a, a) in enumerate(datasets):
        for label_b, b in datasets[i + 1:]:
            if a.meta.space_hash == b.meta.space_hash and a.meta.gpu == b.meta.gpu:
                out.append(compare_frameworks(a, b, (label_a, label_b)))
    return out


def other_frameworks(datasets: Mapping[str, Dataset]) -> list[FrameworkComparison]:
    """Each of ``datasets`` (by GPU, as ``bat analyze`` holds them) against every registered dataset of its
    space and GPU that another framework recorded."""
    from bat.registry import dataset_entries

    entries = dataset_entries()
    out = []
    for gpu, ds in datasets.items():
        mine = framework(ds.meta)
        for e in entries:
            if e.meta.space_hash == ds.meta.space_hash and e.meta.gpu == gpu and framework(e.meta) != mine:
                out.append(compare_frameworks(ds, Dataset.load(e.path), (ds.name, str(e.path))))
    return out


def _indexed(dataset: Dataset, params: list[str]) -> pd.DataFrame:
    frame = dataset.frame.drop_duplicates(params, keep="first")
    return frame.set_index(params)[["status", "objective_ms", "times_ms"]]


def _best(frame: pd.DataFrame, ok: pd.Series) -> tuple[Any, float | None]:
    times = frame.loc[ok.to_numpy(), "objective_ms"].astype(float)
    times = times[np.isfinite(times)]
    if times.empty:
        return None, None
    return times.idxmin(), float(times.min())


def _relative_se(samples: pd.Series) -> np.ndarray:
    """Standard error of each configuration's mean repeat over that mean; NaN with fewer than two repeats."""
    out = np.full(len(samples), np.nan)
    for i, values in enumerate(samples):
        x = np.asarray(values, dtype=float)
        if len(x) >= 2 and x.mean() > 0:
            out[i] = x.std(ddof=1) / x.mean() / np.sqrt(len(x))
    return out


def _distinct(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a != b else (f"{a} (first)", f"{b} (second)")


def _plain(key: Any) -> list[Any]:
    values = key if isinstance(key, tuple) else (key,)
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g} ms"
