"""One unit of a hypertune: a campaign of the tuned tuner with one setting on a set of datasets, scored.

A unit runs every run of its inner campaign (``bat.analysis.compare``:
``Campaign``, ``execute_run``) one after the other in the process that got
it, and scores them with the methodology score on evaluations
(``bat.analysis.compare.methodology.study``). Units are the tasks of the
worker pool or the Dask cluster (``dispatch``): a unit returns a small JSON
result, so no run traces travel back. Every setting of a phase runs with the
same label and therefore the same run seeds: settings are compared on the
same random streams (common random numbers), and the best and the default
settings are compared run by run on the held-out set. A setting whose runs
raise (a population larger than a space, say) gives a unit without a score
and with the error, which the search treats as a failed evaluation.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
from collections.abc import Generator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bat.campaign.design import Campaign, TunerSpec
from bat.core.errors import MissingDependencyError
from bat.core.hyperparams import options_pairs

AXIS = "evaluations"


@dataclass(frozen=True)
class Unit:
    """A setting of ``tuner`` on ``datasets`` ((benchmark, GPU, file)) at ``budget``, ``repeats`` runs each."""

    tuner: str
    setting: tuple[tuple[str, Any], ...]  # sorted (option, value) pairs
    datasets: tuple[tuple[str, str, str], ...]
    budget: int
    repeats: int
    seed: int
    phase: str  # "search" or "final"

    @property
    def key(self) -> str:
        """Stable identity (the store's key): the same unit gives the same key in any hypertune."""
        body = asdict(self)
        body["datasets"] = [[b, g] for b, g, _ in self.datasets]  # files may move; the data is the same
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:24]

    def campaign(self) -> Campaign:
        spec = TunerSpec(self.tuner, self.tuner, options_pairs(dict(self.setting)))
        return Campaign(tuners=(spec,), targets=tuple((b, g) for b, g, _ in self.datasets), budgets=(self.budget,),
                        repeats=self.repeats, seed=self.seed, datasets=self.datasets)


def make_unit(tuner: str, setting: Mapping[str, Any], datasets: tuple[tuple[str, str, str], ...], budget: int,
              repeats: int, seed: int, phase: str) -> Unit:
    return Unit(tuner, tuple(sorted(setting.items())), datasets, budget, repeats, seed, phase)


def evaluate_unit(unit: Unit) -> dict[str, Any]:
    """Run ``unit``'s campaign here and score it: mean score, its interval, and each dataset's run scores."""
    from bat.analysis.compare.methodology import study
    from bat.campaign.execute import execute_run

    start = time.perf_counter()
    campaign = unit.campaign()
    try:
        records = [execute_run(spec) for spec in campaign.runs()]
    except Exception as exc:  # a setting the tuner cannot run with (e.g. a population larger than a space)
        return {"key": unit.key, "unit": asdict(unit), "score": None, "ci_low": None, "ci_high": None,
                "per_target": {}, "wall_s": time.perf_counter() - start, "worker": os.getpid(),
                "error": f"{type(exc).__name__}: {exc}"[:500]}
    meth = study(campaign, records)
    assert meth is not None  # replay campaigns always have a methodology view
    label = unit.tuner
    per_target = {t.name: [float(x) for x in t.scores[label][AXIS].run_scores] for t in meth.targets
                  if label in t.scores}
    agg = meth.aggregate(label, AXIS)
    return {"key": unit.key, "unit": asdict(unit), "score": agg["score"], "ci_low": agg["ci_low"],
            "ci_high": agg["ci_high"], "per_target": per_target, "wall_s": time.perf_counter() - start,
            "worker": os.getpid()}


def _init(parent_pid: int) -> None:
    """Worker initializer: the worker dies with the driver; Ctrl-C goes to the driver, which stops the pool."""
    import signal

    from bat.core.lifetime import die_with_parent

    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Executor:
    """Where units run: here (``workers`` 1), a pool of spawned worker processes, or a Dask cluster.

    The pool (or the Dask client) lives as long as the executor, so its workers keep the datasets they
    loaded (``bat.campaign.execute.load_target``) from one batch of units to the next.
    """

    def __init__(self, workers: int = 1, scheduler: str | None = None) -> None:
        self.workers, self.scheduler = workers, scheduler
        self._pool: Any = None
        self._client: Any = None
        if scheduler:
            try:
                from distributed import Client
            except ImportError as exc:
                raise MissingDependencyError("--scheduler needs dask[distributed] (the 'scale' group)") from exc
            self._client = Client(scheduler)
        elif workers > 1:
            self._pool = multiprocessing.get_context("spawn").Pool(processes=workers, initializer=_init,
                                                                   initargs=(os.getpid(),))

    @property
    def slots(self) -> int:
        """Units that can run at once: the local workers, or the Dask cluster's worker threads."""
        if self._client is not None:
            workers = self._client.scheduler_info().get("workers", {})
            return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        return max(1, self.workers)

    def run(self, units: list[Unit]) -> Generator[dict[str, Any], None, None]:
        """Results of ``units`` as they finish."""
        if self._client is not None:
            from distributed import as_completed

            futures = [self._client.submit(evaluate_unit, u, pure=False) for u in units]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                self._client.cancel(futures)
        elif self._pool is not None:
            yield from self._pool.imap_unordered(evaluate_unit, units)
        else:
            for u in units:
                yield evaluate_unit(u)

    def close(self, *, abort: bool = False) -> None:
        if self._pool is not None:
            if abort:
                self._pool.terminate()
            else:
                self._pool.close()
            self._pool.join()
        if self._client is not None:
            self._client.close()


def paired_difference(better: Mapping[str, list[float]], base: Mapping[str, list[float]], seed: int = 0
                      ) -> dict[str, float | None]:
    """Mean over datasets of the run-by-run score difference ``better - base``, with its bootstrap interval."""
    from bat.analysis.score import aggregate

    diffs = [np.asarray(better[k]) - np.asarray(base[k]) for k in sorted(better) if k in base
             and len(better[k]) == len(base[k])]
    return aggregate(diffs, seed)
