"""The ``profile`` tuner: profile the best configuration, find its bottleneck, step towards relief.

Loop (METHODS.md, "Profile-guided search"): start at a uniformly drawn
valid configuration p, run it with counters; then repeat: (re-)profile p
when it changed since its last profile (``problem.evaluate(p,
profiled=True)``: marked in the trace), compute bottlenecks from p's
measured counters, the reaction, every candidate's score and weight,
draw ``step`` configurations one by one in proportion to the weights
without replacement (``Generator.choice`` with ``p=``, which is sequential
weighted drawing), run them without counters, and make the fastest seen so
far the next p. When p failed or some of its counters are missing (a
partial dataset) the step is uniform; a backend that gives no counters at
all is an error. When every candidate is evaluated and budget is left, the rest of
the space is drawn uniformly.

Modes: "exact" reads every candidate's counters from the target's own
measurements, which no real tuner has: it is an oracle (``Tuner.oracle``),
granted the answer key (``problem.answer_key``) and shown apart in
comparisons; "predicted" uses a counter model fitted once (trained from
``model_dataset``, else another GPU's data with counters from
``facts.others``, else a shipped dataset of the same space with counters
recorded on another GPU, with ``model_seed``); "online" refits the
model on the counters this run has measured so far (for a live GPU and a
benchmark with no recorded counters: every live evaluation is profiled, so
each one adds a training row; until the model has enough rows the steps
are uniform). Every mode needs the backend to measure the profiled configuration's
counters (``facts.measures_counters``; an error naming what is missing
otherwise). "auto" is predicted when ``model_dataset`` is given or another
GPU's shipped dataset of the same space has counters, online otherwise
(never exact: auto is no oracle). The mode and the scoring scope
are printed when a run starts and kept in ``last_description``.

What the tuner knows of the target comes from ``problem.facts``
(bat.core.facts.TargetFacts): whether the backend measures counters, the
GPU's CUDA core count (the parallelism bottleneck; ``cores=`` overrides it) and the launch geometry (thread counts).

Cost of profiling in replay: the first run of the start configuration is
profiled and charged as an evaluation at its recorded cost (the Coulomb
data was recorded with profiling on, so the recorded cost is a profiled
run's). A re-profile of a configuration first run without counters goes
through ``problem.evaluate(p, profiled=True)``: the Problem records it as a
``profile`` row that costs simulated time (the recorded ``profile_ms`` when
the dataset has it, else the run's recorded cost) but no evaluation budget.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bat.core.counters import METRICS
from bat.core.dataset import Dataset
from bat.core.errors import TunerError
from bat.core.gpus import KNOWN_GPUS
from bat.core.problem import EvalResult, Problem
from bat.core.tuner import Tuner
from bat.tuner_adapters.profile.bottlenecks import REACTED, Constants, bottlenecks, reaction, scores, weights
from bat.tuner_adapters.profile.sources import ExactSource, NoCounters, OnlineSource, PredictedSource, thread_counts

Source = ExactSource | PredictedSource | OnlineSource | NoCounters
MODES = ("auto", "exact", "predicted", "online")
#: models already fitted in this process, by (dataset, its space hash, rows, space hash, seed)
_MODELS: dict[tuple, Any] = {}


@dataclass(kw_only=True)
class ProfileSearch(Tuner):
    """Profile-guided search (Filipovič et al.); hyper-parameters are the method's constants."""

    mode: str = "auto"
    compute_bound: bool = False  # inst_reaction 0.5 instead of 0.7
    inst_reaction: float | None = None  # overrides the compute_bound choice
    issue_threshold: bool = True  # False: +b_issue without the threshold (the authors' code)
    cutoff: float = -0.25
    exponent: float = 8.0
    floor: float = 1e-4
    step: int = 5
    cores: int | None = None  # CUDA cores; None: the target's (problem.facts.cuda_cores)
    model_dataset: str | None = None  # "benchmark/gpu" or a .parquet path (predicted mode)
    model_seed: int = 0  # seed of the counter model's train/test split (predicted and online)
    score_limit: int = 10**7  # spaces with this many valid configurations or more are sampled
    sample_size: int = 100_000
    without_counters: str = "error"  # "uniform": go on with uniform steps when there are no counters
    announce: bool = True

    summary: ClassVar[str] = "profile-guided search: bottleneck analysis of counters steers a weighted random step"
    needs_counters: ClassVar[bool] = True

    @property
    def oracle(self) -> bool:  # type: ignore[override]  # a class flag elsewhere, per instance here (its mode)
        """Exact mode reads counters of configurations it never evaluated: an oracle."""
        return self.mode == "exact"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.step < 1 or self.sample_size < 1 or self.score_limit < 1:
            raise ValueError("step, sample_size and score_limit must be >= 1")
        if self.without_counters not in ("error", "uniform"):
            raise ValueError(f"without_counters must be 'error' or 'uniform', got {self.without_counters!r}")
        if self.cores is not None and self.cores < 1:
            raise ValueError(f"cores must be >= 1, got {self.cores}")
        r = self.inst_reaction if self.inst_reaction is not None else (0.5 if self.compute_bound else 0.7)
        self.constants = Constants(r, self.issue_threshold, self.cutoff, self.exponent, self.floor)
        self.last_description = ""

    # -- setup -----------------------------------------------------------------
    def _source(self, problem: Problem) -> Source:
        try:
            return self._counter_source(problem)
        except TunerError:
            if self.without_counters == "error":
                raise
            return NoCounters(problem.space, score_limit=self.score_limit, sample_size=self.sample_size)

    def _counter_source(self, problem: Problem) -> ExactSource | PredictedSource | OnlineSource:
        from bat.tuner_adapters.profile.model import load_model_dataset, shipped_counter_dataset

        facts, space = problem.facts, problem.space
        scoring = {"score_limit": self.score_limit, "sample_size": self.sample_size}
        if not facts.measures_counters:
            raise TunerError(f"the profile tuner needs the counters of each profiled configuration: backend "
                             f"{problem.backend_name!r} measures no counters "
                             "(replay a dataset with counters, or run live, which profiles with ncu)")
        if self.mode == "exact":
            exact = problem.answer_key
            if exact is None or not exact.counters:
                raise TunerError(f"exact counters need the target's measurements with counters (an oracle's "
                                 f"answer key); backend {problem.backend_name!r} has none "
                                 "(use mode='predicted' or 'online')")
            return ExactSource(exact, space, facts.threads)
        model_data: Dataset | None = None
        if self.model_dataset is not None:
            model_data = load_model_dataset(self.model_dataset)
        elif self.mode in ("auto", "predicted"):
            given = [d for _, d in sorted(facts.others.items()) if d.counters]  # other GPUs' data, entitled
            model_data = given[0] if given else shipped_counter_dataset(space, exclude_gpu=facts.gpu)
        mode = self.mode
        if mode == "auto":
            mode = "predicted" if model_data is not None else "online"
        if mode == "online":
            return OnlineSource(space, facts.threads, seed=self.model_seed, **scoring)
        if model_data is None:
            raise TunerError(f"predicted counters need a dataset with counters: no shipped dataset of {space.name} "
                             "has any; give model_dataset ('benchmark/gpu' or a .parquet path)")
        if (model_data.meta.gpu, model_data.meta.space_hash) == (facts.gpu, space.space_hash) and facts.gpu:
            raise TunerError(f"dataset {model_data.name} holds the target's own measurements, which only an "
                             "oracle may read (mode='exact'); give another GPU's data as model_dataset")
        if not model_data.counters:
            raise TunerError(f"dataset {model_data.name} has no counter columns; the counter model needs counters")
        return PredictedSource(self._model(model_data, problem), space, facts.threads, **scoring)

    def _model(self, data: Dataset, problem: Problem) -> Any:
        from bat.tuner_adapters.profile.model import CounterModel

        key = (data.name, data.meta.space_hash, len(data.frame), problem.space.space_hash, self.model_seed)
        if key not in _MODELS:  # the model is a deterministic function of (dataset, space, seed)
            _MODELS[key] = CounterModel.fit(data, problem.space, self.model_seed)
        return _MODELS[key]

    def _cores(self, problem: Problem) -> int:
        if self.cores is not None:
            return self.cores
        if problem.facts.cuda_cores is None:
            gpu = problem.facts.gpu
            raise TunerError(f"CUDA core count of GPU {gpu or '(unknown)'!r} is not known "
                             f"(known: {sorted(KNOWN_GPUS)}); pass cores=")
        return problem.facts.cuda_cores

    # -- the loop ----------------------------------------------------------------
    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        space = problem.space
        source = self._source(problem)
        cores = self._cores(problem) if not isinstance(source, NoCounters) else 0
        self.last_description = f"profile search: {source.describe}" + (f"; {cores} CUDA cores" if cores else "")
        if self.announce:
            print(self.last_description, file=sys.stderr)
        evaluated: set[int] = set()
        start = space.sample_valid(1, rng)[0]
        p_id = int(space.to_ids(start[None, :])[0])
        result = problem.evaluate(space.config(start), profiled=True)
        source.observe(result)
        evaluated.add(p_id)
        best_id, best_fit = p_id, result.fitness
        while not problem.exhausted:
            if best_id != p_id:  # the fastest seen so far is the next p; profile it
                p_id = best_id
                result = problem.evaluate(space.config(space.from_ids(np.array([p_id]))[0]), profiled=True)
            ids, matrix = source.candidates(rng)
            fresh = ~np.isin(ids, np.fromiter(evaluated, dtype=np.int64, count=len(evaluated)))
            if not fresh.any():
                self._uniform_rest(problem, rng)
                return
            w = self._weights(result, p_id, source, matrix, fresh, cores, problem)
            chosen = rng.choice(int(fresh.sum()), size=min(self.step, int(fresh.sum())),
                                replace=False, p=w / w.sum())
            for cid in ids[fresh][chosen]:
                if problem.exhausted:
                    return
                evaluated.add(int(cid))
                outcome = problem.evaluate(space.config(space.from_ids(np.array([cid]))[0]))
                source.observe(outcome)
                fit = outcome.fitness
                if fit < best_fit:
                    best_id, best_fit = int(cid), fit

    def _weights(self, result: EvalResult, p_id: int, source: Source, matrix: np.ndarray, fresh: np.ndarray,
                 cores: int, problem: Problem) -> np.ndarray:
        """Weights of the not yet evaluated candidates (``matrix[fresh]``)."""
        if isinstance(source, NoCounters):
            return np.ones(int(fresh.sum()))
        measured = {short: result.extra[m] for short, m in METRICS.items() if m in result.extra}
        if result.ok and not measured:
            raise TunerError(f"backend {problem.backend_name!r} returned no counters for the profiled "
                             "configuration; the profile tuner needs counters (a dataset with counter "
                             "columns, or a live backend that collects them)")
        if not result.ok or len(measured) < len(METRICS) or not source.ready:
            return np.ones(int(fresh.sum()))  # p failed, lacks counters, or no model yet: a uniform step
        threads = result.extra.get("threads")
        if threads is None:
            values = problem.space.decode(problem.space.index(result.config)[None, :])
            threads = float(thread_counts(problem.facts.threads, values)[0])
        threads = None if threads is None or np.isnan(threads) else float(threads)
        b = bottlenecks(measured, threads, cores)
        delta = reaction(b, self.constants)
        p_row = source.profiled(p_id, measured, np.nan if threads is None else threads)
        raw = scores(np.array([delta[k] for k in REACTED]), matrix, p_row)[fresh]
        return weights(raw, self.constants)

    @staticmethod
    def _uniform_rest(problem: Problem, rng: np.random.Generator) -> None:
        from bat.tuner_adapters.reference.steps import random_unevaluated

        while not problem.exhausted:
            row = random_unevaluated(problem, rng)
            if row is None:
                return
            problem.evaluate(problem.space.config(row))
