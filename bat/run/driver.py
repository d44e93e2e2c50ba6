"""The run driver: one tuner on one target, wired end to end (problem -> tuner -> trace).

``run_tuner`` is what ``bat run``, ``bat compare`` and a notebook call, with
the same behaviour: given a target (bat.run.targets), it checks a replayed
dataset (bat.data.checks; once per dataset and space in a process, so the
runs of a campaign on one target share one check), builds the Problem with a trace recorder
attached, runs the tuner with a seeded generator, writes the trace where
asked (a path, or ``"auto"``: a name in the data folder holding everything
that tells runs apart, numbered when taken; an existing file is replaced only
with ``force``), and returns the run's summary. On a measuring backend a run
that writes a trace journals every evaluation beside it
(bat.run.recording.run_journal), and ``resume`` continues an interrupted one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from bat.core.atomic import check_output
from bat.core.errors import RunInterrupted
from bat.core.problem import Budget, EvalResult, Problem
from bat.core.schedule import SEQUENTIAL, Parallelism
from bat.core.trace import TraceRecorder, write_trace
from bat.core.tuner import Tuner, class_spec, object_options
from bat.core.userdata import check_writable, runs_dir
from bat.registry import make_tuner
from bat.run.naming import run_name
from bat.run.recording.run_journal import JournalledBackend, RunCheckpoint, journal_header, open_checkpoint
from bat.run.targets import Target

if TYPE_CHECKING:
    from bat.data.checks import DataCheck

#: ``out="auto"``: the trace goes to the data folder under a name that tells runs apart (bat.run.naming)
AUTO = "auto"


@dataclass
class RunResult:
    """What one tuner run found, and what it cost."""

    tuner: str
    seed: int
    benchmark: str
    gpu: str
    backend: str
    backend_description: str
    best: EvalResult | None
    best_known_ms: float | None
    evaluated: int
    rejected: int
    repeated: int
    failed: int
    tuner_s: float
    cost_s: float
    wall_s: float
    trace: pd.DataFrame
    trace_meta: dict[str, Any]
    trace_path: Path | None = None
    data_check: DataCheck | None = None  # the replayed dataset's data check (None: not replayed or not asked)
    notes: list[str] = field(default_factory=list)  # what the run said on the way (data flags, resumption)
    reused: int = 0  # evaluations answered from an interrupted run's journal (resume)
    after_close: int = 0  # proposals refused because they came after tune() returned (bat.core.problem)
    clock_s: float = 0.0  # the simulated clock at the end (bat.core.schedule); cost_s is the work charged

    @property
    def ratio_to_best_known(self) -> float | None:
        """best known / best found, in (0, 1]; None without either."""
        if self.best is None or self.best_known_ms is None or self.best.objective_ms is None:
            return None
        return self.best_known_ms / self.best.objective_ms

    @property
    def invalid_rate(self) -> float:
        proposals = self.evaluated + self.rejected + self.repeated
        return self.rejected / proposals if proposals else 0.0


def run_tuner(
    tuner: str | Tuner,
    target: Target,
    *,
    budget: Budget,
    seed: int = 0,
    options: Sequence[str] = (),
    out: str | Path | Literal["auto"] | None = None,
    force: bool = False,
    resume: bool = False,
    check_data: bool = True,
    data_check: DataCheck | None = None,
    progress: Callable[[float], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    tuner_name: str | None = None,
    tuner_charge_s: float | None = None,
    isolate: bool = False,
    parallelism: Parallelism = SEQUENTIAL,
    timeout_factor: float | None = None,
) -> RunResult:
    """Run ``tuner`` on ``target`` under ``budget`` with ``seed`` (see the module docstring).

    ``options`` are the tuner's KEY=VALUE options (a tuner given by name is made with them);
    ``out`` a trace path, ``"auto"`` or None (the trace stays in memory, nothing is journalled);
    ``on_note`` hears each note as it is made. ``data_check``: the check already made of this target's
    dataset (``check_target``; a campaign checks each target once), used instead of checking again.
    ``tuner_charge_s``: seconds charged as the tuner's time per proposal (a declared cost model: the
    time axis is then deterministic), None to measure it. ``isolate``: run the tuner in its own
    sandboxed process (``isolate:`` scheme). ``parallelism``: the compile workers and devices of the
    simulated clock (bat.core.schedule); ``timeout_factor``: measurements past this factor x the best
    so far are stopped (bat.core.timeouts). An interrupted journalled run raises RunInterrupted (a
    KeyboardInterrupt) naming its journal.
    """
    name = tuner_name or (tuner if isinstance(tuner, str) else type(tuner).__name__)
    tuner_obj = make_tuner(tuner, tuple(options)) if isinstance(tuner, str) else tuner
    if isolate:  # the registry's isolate: scheme (bat.tuner_adapters.isolated), in its own process
        tuner_obj = make_tuner(f"isolate:{tuner if isinstance(tuner, str) else class_spec(tuner_obj)}",
                               options=tuple(options) if isinstance(tuner, str) else object_options(tuner_obj))
    notes: list[str] = []

    def note(message: str) -> None:
        notes.append(message)
        if on_note is not None:
            on_note(message)

    checked = data_check if data_check is not None else check_target(target) if check_data else None
    if checked is not None and checked.flagged:
        note("data check flagged this dataset: " + "; ".join(f.message for f in checked.flags))
    numbered = out == AUTO
    path = runs_dir() / run_name(target, name, options, budget, seed) if numbered else out
    if path is not None:
        path = check_output(check_writable(Path(path)), overwrite=force or numbered, what="--out")  # before the run
    checkpoint = _checkpoint(target, path, name, options, budget, seed, resume, note)
    journalled = None if checkpoint is None else JournalledBackend(target.backend, checkpoint)
    if journalled is not None:
        target = replace(target, backend=journalled)
    try:
        result = _run(tuner_obj, target, budget, seed, name, progress, tuner_charge_s, parallelism, timeout_factor)
    except BaseException as exc:
        if checkpoint is None:
            raise
        checkpoint.journal.close()  # kept on disk, released for a resume (the caller owns the backend)
        if not isinstance(exc, KeyboardInterrupt):
            raise
        raise RunInterrupted(f"interrupted: {len(checkpoint.journal.records)} evaluations kept in "
                             f"{checkpoint.journal.path}: the same run with resume (--resume) continues "
                             "from there") from exc
    result.data_check, result.notes = checked, notes
    if path is not None:
        result.trace_path = write_trace(result.trace, result.trace_meta, path, overwrite=force, numbered=numbered)
    if checkpoint is not None and journalled is not None:
        checkpoint.remove()
        result.reused = journalled.reused
        if checkpoint.resumed:
            note(f"resumed: {journalled.reused} evaluations answered from the interrupted run's journal, "
                 f"{journalled.measured} measured now")
    return result


#: the data checks made in this process (the last ``CHECKS_KEPT``), by the identity of dataset and space:
#: a campaign's runs on one target check its data once, not once per run
_checked: dict[tuple[int, int, str], tuple[object, object, DataCheck]] = {}
CHECKS_KEPT = 16


def check_target(target: Target) -> DataCheck | None:
    """The data check of a replayed target's dataset against its benchmark's registered peers (made once per
    dataset and space in a process; each caller gets its own list of findings); None when the target replays
    no dataset."""
    if target.dataset is None:
        return None
    key = (id(target.dataset), id(target.space), target.benchmark)
    kept = _checked.get(key)
    if kept is not None and kept[0] is target.dataset and kept[1] is target.space:
        return replace(kept[2], findings=list(kept[2].findings))
    from bat.data.checks import check_dataset, registry_peers

    checked = check_dataset(target.dataset, target.space, registry_peers(target.benchmark))
    _checked[key] = (target.dataset, target.space, checked)
    if len(_checked) > CHECKS_KEPT:
        del _checked[next(iter(_checked))]
    return replace(checked, findings=list(checked.findings))


def _checkpoint(target: Target, path: Path | None, tuner: str, options: Sequence[str], budget: Budget, seed: int,
                resume: bool, note: Callable[[str], None]) -> RunCheckpoint | None:
    """The journal of a run that writes a trace on a measuring backend (None for a replay: it reruns
    exactly), resumed from an interrupted one when asked."""
    if target.dataset is not None or path is None:
        if resume:
            note("resume: only a run on a measuring backend that writes a trace keeps a journal; running afresh")
        return None
    header = journal_header(tuner=tuner, options=list(options), benchmark=target.benchmark, gpu=target.gpu,
                            backend=target.backend.name, budget_evals=budget.max_evals,
                            budget_time_s=budget.max_time_s, seed=seed, space_hash=target.space.space_hash,
                            noise="none", identity=target.identity)  # noise: replay alone, which keeps no journal
    checkpoint = open_checkpoint(path, header, resume=resume)
    if resume and not checkpoint.resumed:
        note("resume: no interrupted run of this command was found; running afresh")
    elif checkpoint.resumed:
        note(f"resuming: {checkpoint.resumed} evaluations from {checkpoint.journal.path}")
    for other, n in checkpoint.others:
        note(f"an interrupted run of this command left {n} evaluations in {other}; resume (--resume) continues it")
    return checkpoint


def _run(tuner_obj: Tuner, target: Target, budget: Budget, seed: int, name: str,
         progress: Callable[[float], None] | None, tuner_charge_s: float | None = None,
         parallelism: Parallelism = SEQUENTIAL, timeout_factor: float | None = None) -> RunResult:
    """Problem -> tuner -> trace, in memory."""
    meta = {
        "tuner": name,
        "seed": seed,
        "benchmark": target.benchmark,
        "gpu": target.gpu,
        "backend": target.backend.name,
        "budget_evals": budget.max_evals,
        "budget_time_s": budget.max_time_s,
        "best_known_ms": target.best_known_ms,
        "space_hash": target.space.space_hash,
        "tuner_charge_s": tuner_charge_s,
        "oracle": bool(tuner_obj.oracle),
        "compile_workers": parallelism.compile_workers,
        "devices": parallelism.devices,
        "timeout_factor": timeout_factor,
        "runs_ahead": asdict(tuner_obj.runs_ahead),
    }
    recorder = TraceRecorder(target.space.names, meta)
    observers: list[Any] = [recorder]
    if progress is not None:
        observers.append(_ProgressObserver(budget, progress))
    problem = Problem(space=target.space, backend=target.backend, budget=budget, observers=observers,
                      facts=target.facts, tuner_charge_s=tuner_charge_s, parallelism=parallelism,
                      timeout_factor=timeout_factor, draw_seed=seed, runs_ahead=tuner_obj.runs_ahead)
    if tuner_obj.oracle:  # the answer key goes to a declared oracle only (bat.core.facts)
        problem.answer_key = target.dataset
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    problem.start_clock()
    try:
        tuner_obj.tune(problem, rng)
    finally:
        problem.close()  # a thread the tuner left behind is refused from here on
    wall = time.perf_counter() - start
    s = problem.stats
    meta.update(evaluated=s.evaluated, rejected=s.rejected, repeated=s.repeated, failed=s.failed, partial=s.partial,
                tuner_s=s.tuner_s, cost_s=s.cost_s, clock_s=s.clock_s, wall_s=wall, after_close=s.after_close)
    if report := tuner_obj.run_report():
        meta["tuner_report"] = report
    recorder.meta.update(meta)  # the saved trace carries the end-of-run counts too
    return RunResult(
        tuner=name, seed=seed, benchmark=target.benchmark, gpu=target.gpu,
        backend=target.backend.name, backend_description=target.backend.describe(),
        best=problem.best, best_known_ms=target.best_known_ms,
        evaluated=s.evaluated, rejected=s.rejected, repeated=s.repeated, failed=s.failed,
        tuner_s=s.tuner_s, cost_s=s.cost_s, wall_s=wall, clock_s=s.clock_s,
        trace=recorder.frame(), trace_meta=meta, after_close=s.after_close,
    )


class _ProgressObserver:
    def __init__(self, budget: Budget, callback: Callable[[float], None]) -> None:
        self.budget, self.callback = budget, callback
        self.evaluated = 0

    def on_result(self, event: Any) -> None:
        if event.charged:
            self.evaluated += 1
            self.callback(self.budget.progress(self.evaluated, event.elapsed_cost_s))
