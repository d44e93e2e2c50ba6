"""The transfer study: tune a GPU the tuner has never seen, given what other GPUs' measurements taught it.

Design (``bat compare --study transfer``). For each benchmark with at least
``MIN_GPUS`` GPUs whose datasets share its space (same space hash), each GPU
in turn is the *target* and the tuner gets the other GPUs' datasets of that
space as its prior (``TargetFacts.others``, bat.core.facts), never the
target's: split ``all-others``. Where a benchmark has data of both vendors,
two cross-vendor splits follow: ``vendor:NVIDIA`` (the NVIDIA GPUs' data as
the prior of each AMD target) and ``vendor:AMD`` (and back). Each split is
a ``Campaign`` with its ``prior`` rule; the floor tuner (random search, which
reads no prior) runs once per target without a prior, and its runs serve
every split of that target. Run seeds follow the campaign's derivation
(label, benchmark, GPU, repeat), so each split of a target sees the same
seeds.

Scores, per split, target and tuner, over the runs (one per seed):

- the methodology score on both axes (evaluations and simulated time,
  bat.analysis.compare.methodology) with its bootstrap interval;
- evaluations to a goal: the 1-based index of the first charged evaluation
  after which the best configuration held is within ``goal`` x the
  target's optimum (best recorded time among the valid configurations), for
  goals 1.10 and 1.05. A run that never gets there within its budget B is
  *censored*: it counts as B + 1 ("more than B"). The median over seeds
  comes with a 95 % percentile bootstrap interval (scipy.stats.bootstrap,
  percentile method: the BCa method is undefined on the ties censoring
  makes); a median or bound equal to B + 1 is shown as ">B", and the number
  of censored runs is reported beside it;
- random search's exact median of evaluations to the goal (sampling without
  replacement among the N valid configurations, K of them within the goal:
  P(T > t) = C(N-K, t) / C(N, t), no censoring), and the gain over it: that
  median / the tuner's median (above 1: transfer helps; a censored median
  gives a lower bound of the gain's denominator, said so with ">").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bat.analysis.compare.methodology import Methodology, study
from bat.campaign.design import Campaign, CampaignError, RunSpec, TunerSpec
from bat.campaign.execute import CampaignRun, run_specs
from bat.campaign.store import RunRecord
from bat.core.errors import BatError

#: the fewest GPUs with data of one space for a benchmark to take part
MIN_GPUS = 3
#: fixed targets: ratios of the target's optimum
GOALS = (1.10, 1.05)
#: the floor: random search, run without a prior
FLOOR = "reference:random"
#: tuners of a study that names none: the reference transfer tuners and the floor
DEFAULT_TUNERS = ("transfer:best", "transfer:rank", "transfer:model", FLOOR)
#: budget of a study that names none (evaluations; the censoring point)
DEFAULT_BUDGET = 50
#: repeats (seeds) of a study that names none
DEFAULT_REPEATS = 20
#: bootstrap resamples of a median's interval
RESAMPLES = 2000
ALL_OTHERS = "all-others"
VENDORS = ("NVIDIA", "AMD")


def split_name(prior: str, title: bool = False) -> str:
    """A split's words: ``all other GPUs``, ``from NVIDIA`` (``title``: the first letter upper case)."""
    text = "all other GPUs" if prior == ALL_OTHERS else f"from {prior.removeprefix('vendor:')}"
    return text[0].upper() + text[1:] if title else text


@dataclass(frozen=True)
class TransferStudy:
    """The splits of a transfer study (one ``Campaign`` each, with its prior rule) and its floor tuner."""

    splits: tuple[Campaign, ...]
    floor: str = ""  # label of the floor tuner (runs without a prior, shared by the splits); "" none

    backend = "replay"

    @property
    def tuners(self) -> tuple[TunerSpec, ...]:
        return self.splits[0].tuners

    @property
    def budget(self) -> int:
        return max(self.splits[0].budgets)

    def sources(self, split: Campaign, benchmark: str, gpu: str) -> tuple[str, ...]:
        return split.prior_for(benchmark, gpu)

    def runs(self) -> list[RunSpec]:
        """Every run of every split; the floor's runs once per target, without a prior."""
        out: dict[str, RunSpec] = {}
        for c in self.splits:
            for spec in c.runs():
                if spec.tuner.label == self.floor:
                    spec = replace(spec, prior=())
                out.setdefault(spec.run_id, spec)
        return sorted(out.values(), key=lambda s: -s.max_budget)

    def records_of(self, split: Campaign, records: Sequence[RunRecord]) -> list[RunRecord]:
        """The runs of ``split``: the floor's of its targets, the others' with its prior."""
        targets = set(split.targets)
        mine = []
        for r in records:
            m = r.meta
            key = (m["benchmark"], m["gpu"])
            if key not in targets:
                continue
            prior = tuple(m["spec"].get("prior") or ())
            if (m["label"] == self.floor and not prior) or prior == split.prior_for(*key):
                mine.append(r)
        return mine

    def to_dict(self) -> dict[str, Any]:
        return {"floor": self.floor, "budget": self.budget,
                "splits": [{"prior": c.prior, "name": split_name(c.prior),
                            "targets": [{"benchmark": b, "gpu": g, "sources": list(c.prior_for(b, g))}
                                        for b, g in c.targets]} for c in self.splits],
                "campaign": self.splits[0].to_dict() | {"targets": None, "prior": None}}


def gpus_of_space(benchmark: str) -> list[str]:
    """The GPUs with a dataset recorded on ``benchmark``'s space."""
    return sorted(vendors_of_space(benchmark))


def vendors_of_space(benchmark: str) -> dict[str, str]:
    """The vendor of each GPU with a dataset recorded on ``benchmark``'s space (``DatasetMeta.vendor``)."""
    from bat.registry import datasets_of, resolve_benchmark

    return {e.meta.gpu: e.meta.vendor for e in datasets_of(resolve_benchmark(benchmark))}


def eligible_benchmarks() -> list[str]:
    """Benchmarks with at least ``MIN_GPUS`` GPUs of data on their space."""
    from bat.registry import dataset_entries

    names = sorted({e.meta.benchmark for e in dataset_entries()})
    out = []
    for name in names:
        try:
            if len(gpus_of_space(name)) >= MIN_GPUS:
                out.append(name)
        except BatError:  # imported datasets without a loadable benchmark take no part
            continue
    return out


def plan_transfer(*, tuners: list[str] | None = None, benchmarks: list[str] | None = None,
                  budget: int | None = None, repeats: int | None = None, seed: int = 0,
                  tuner_charge_s: float | None = None, isolate: bool = False,
                  cross_vendor: bool = True) -> TransferStudy:
    """The study of these names; a benchmark named with fewer than ``MIN_GPUS`` GPUs is refused."""
    if benchmarks and benchmarks != ["all"]:
        for name in benchmarks:
            gpus = gpus_of_space(name)
            if len(gpus) < MIN_GPUS:
                raise CampaignError(f"--benchmarks {name}: the transfer study needs data of at least {MIN_GPUS} "
                                    f"GPUs on its space, it has {len(gpus)} ({', '.join(gpus) or 'none'})")
    else:
        benchmarks = eligible_benchmarks()
        if not benchmarks:
            raise CampaignError(f"--study transfer: no benchmark has data of {MIN_GPUS} GPUs on one space")
    specs = tuple(TunerSpec.parse(t) for t in (tuners or DEFAULT_TUNERS))
    common: dict[str, Any] = {"tuners": specs, "budgets": (budget or DEFAULT_BUDGET,),
                              "repeats": repeats or DEFAULT_REPEATS, "seed": seed, "tuner_charge_s": tuner_charge_s,
                              "isolate": isolate}
    vendors = {b: vendors_of_space(b) for b in benchmarks}
    everything = tuple((b, g) for b in benchmarks for g in sorted(vendors[b]))
    splits = [Campaign(targets=everything, prior=ALL_OTHERS, **common)]
    if cross_vendor:
        for source in VENDORS:
            targets = tuple((b, g) for b, g in everything if vendors[b][g] not in ("", source)
                            and source in vendors[b].values())
            if targets:
                splits.append(Campaign(targets=targets, prior=f"vendor:{source}", **common))
    for t in specs:
        built = t.build()  # an unknown or broken tuner fails before any run
        if t.oracle:
            raise CampaignError(f"--tuners {t.label}: {t.spec} is an oracle; the transfer study has none")
        del built
    floor = next((t.label for t in specs if t.spec == FLOOR), "")
    return TransferStudy(tuple(splits), floor)


def evaluations_to(best: np.ndarray, goal_ms: float, budget: int) -> int:
    """The 1-based evaluation after which ``best`` (best held so far) is within ``goal_ms``; budget + 1 if never."""
    hit = np.flatnonzero(best[:budget] <= goal_ms * (1 + 1e-12))
    return int(hit[0]) + 1 if len(hit) else budget + 1


def random_median(values: np.ndarray, goal_ms: float) -> int | None:
    """Exact median of random search's evaluations to ``goal_ms`` (without replacement; module docstring)."""
    n = len(values)
    k = int((values <= goal_ms * (1 + 1e-12)).sum())
    if k == 0:
        return None
    survive = 1.0  # P(T > t)
    for t in range(1, n - k + 2):
        survive *= (n - k - t + 1) / (n - t + 1)
        if survive <= 0.5:
            return t
    return n - k + 1


def median_interval(values: np.ndarray, seed: int) -> tuple[float, float | None, float | None]:
    """Median of ``values`` and its 95 % percentile bootstrap interval (None with fewer than two values)."""
    med = float(np.median(values))
    if len(values) < 2 or np.all(values == values[0]):
        return med, (med if len(values) > 1 else None), (med if len(values) > 1 else None)
    from scipy.stats import bootstrap

    res = bootstrap((values,), np.median, n_resamples=RESAMPLES, method="percentile",
                    rng=np.random.default_rng(seed), vectorized=True, axis=-1)
    return med, float(res.confidence_interval.low), float(res.confidence_interval.high)


@dataclass
class TransferResult:
    """What a transfer study found: one row per (split, target, tuner, goal) and the methodology per split."""

    study: TransferStudy
    rows: list[dict[str, Any]]
    methodology: dict[str, Methodology] = field(default_factory=dict)  # by split prior rule

    def goal_rows(self, goal: float) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["goal"] == goal]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per tuner: the mean over targets (split all-others) of its median evaluations to each goal, and its
        methodology score on both axes over those targets."""
        out: dict[str, dict[str, Any]] = {}
        m = self.methodology.get(ALL_OTHERS)
        for t in self.study.tuners:
            entry: dict[str, Any] = {}
            for goal in GOALS:
                meds = [r["median"] for r in self.goal_rows(goal) if r["label"] == t.label and r["split"] == ALL_OTHERS]
                entry[f"mean_median_to_{goal:.2f}"] = float(np.mean(meds)) if meds else None
            if m is not None:
                for axis in ("evaluations", "time"):
                    a = m.aggregate(t.label, axis)
                    entry[f"methodology_{axis}"] = {k: a[k] for k in ("score", "ci_low", "ci_high")}
            out[t.label] = entry
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"study": self.study.to_dict(), "goals": list(GOALS), "censoring": CENSORING,
                "rows": self.rows, "summary": self.summary(),
                "methodology": {k: m.to_dict() | {"hitting_times": None} for k, m in self.methodology.items()}}


CENSORING = ("a run that never reaches the goal within the budget B counts as B + 1; a median or interval bound "
             "of B + 1 means more than B; censored = runs that never reached it")


def analyse_transfer(s: TransferStudy, records: Sequence[RunRecord]) -> TransferResult:
    """Scores of every split, target and tuner (module docstring)."""
    rows: list[dict[str, Any]] = []
    methods: dict[str, Methodology] = {}
    budget = s.budget
    for split in s.splits:
        mine = s.records_of(split, records)
        m = study(split, mine, success="1.1")
        if m is None:
            continue
        methods[split.prior] = m
        for t in m.targets:
            sources = list(split.prior_for(t.benchmark, t.gpu))
            f_opt = t.baseline.f_opt
            for goal in GOALS:
                rand = random_median(t.baseline.values, goal * f_opt)
                for label, curves in t.curves.items():
                    evals = np.array([evaluations_to(c.best, goal * f_opt, budget) for c in curves], dtype=float)
                    med, lo, hi = median_interval(evals, split.seed)
                    sc = t.scores[label]
                    rows.append({
                        "split": split.prior, "benchmark": t.benchmark, "gpu": t.gpu, "sources": sources,
                        "label": label, "goal": goal, "runs": len(evals), "budget": budget,
                        "median": med, "ci_low": lo, "ci_high": hi,
                        "censored": int((evals > budget).sum()),
                        "random_exact_median": rand,
                        "gain": (rand / med) if rand is not None and med > 0 else None,
                        "methodology_evaluations": _score(sc["evaluations"].summary(split.seed)),
                        "methodology_time": _score(sc["time"].summary(split.seed)),
                    })
    return TransferResult(s, rows, methods)


def _score(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary[k] for k in ("score", "ci_low", "ci_high")}


def run_transfer(s: TransferStudy, out: str | Path, *, workers: int = 1, scheduler: str | None = None,
                 progress: Callable[[int, int], None] | None = None) -> tuple[CampaignRun, TransferResult]:
    """Run (or resume) every run of ``s`` into ``out``'s store and score them."""
    done = run_specs(s.runs(), out, workers=workers, scheduler=scheduler, progress=progress)
    return done, analyse_transfer(s, done.records)


def shown(value: float | None, budget: int) -> str:
    """An evaluation count as the report shows it: ">B" when censored."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f">{budget}" if value > budget else f"{value:g}"
