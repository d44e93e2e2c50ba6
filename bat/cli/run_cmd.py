"""``bat run``: one tuner on one benchmark, replayed (no GPU) or live, with a trace."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.console import shown_path
from bat.cli.options import (
    MAX_EVALUATIONS,
    MAX_SECONDS,
    MAX_SEED,
    devices_option,
    finite,
    positive_finite,
    timeout_factor_option,
    worker_count,
)
from bat.cli.output import document, progress, say

if TYPE_CHECKING:
    from bat.run.driver import RunResult
    from bat.run.targets import Target


def run(
    tuner: str = typer.Option(..., "--tuner", "-t",
                              help="Tuner name (see `bat list tuners`), package.module:Class or module:Class (a file "
                                   "on the path), or exec:PROGRAM (a program speaking docs/PROTOCOL.md)."),
    tuner_option: list[str] = typer.Option([], "--tuner-option", "-O",
                                           help="A hyper-parameter of the tuner, KEY=VALUE (repeatable; "
                                                "`bat list tuners --options`)."),
    tuner_options: Path = typer.Option(None, "--tuner-options",
                                       help="An options file for this tuner (bat hypertune writes one); -O "
                                            "options override it."),
    benchmark: str = typer.Option(None, "--benchmark", "-b",
                                  help="Benchmark name, or a space file (ours or T1) by path, used as written."),
    gpu: str = typer.Option(None, "--gpu", "--gpus",
                           help="GPU whose recorded data to replay (default: RTX_3090)."),
    dataset: str = typer.Option(None, "--dataset", "-d",
                                help="Dataset to replay, by file or id (`bat list datasets`); its own space is "
                                     "used unless --benchmark names one."),
    budget: int = typer.Option(100, "--budget", "-n", min=1, max=MAX_EVALUATIONS,
                               help="Distinct valid configurations to evaluate."),
    time_budget: float = typer.Option(None, "--time-budget", max=MAX_SECONDS, callback=positive_finite,
                                      help="Simulated seconds (compile + run) instead."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED, help="Seed: the same seed gives the same trace."),
    out: Path = typer.Option(None, "--out", "-o",
                             help="Trace file (Parquet); default <data folder>/runs/<benchmark>_<gpu>_<backend>_"
                                  "<tuner>_<budget>_s<seed>.parquet, numbered -2, -3, ... when taken."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
    resume: bool = typer.Option(False, "--resume",
                                help="Continue an interrupted run of this same command on a measuring backend: "
                                     "what its journal holds is not measured again."),
    backend: str = typer.Option("auto", "--backend",
                                help="auto: live on a GPU when one is present, else replay; or a backend of "
                                     "`bat list backends` (emulated: the kernel on the CPU, correctness only)."),
    noise: str = typer.Option("none", "--noise",
                              help="Replay only: none (recorded objective), repeat (one recorded repeated time) or "
                                   "bootstrap (mean of a resample of the repeats), drawn with --seed."),
    isolate: bool = typer.Option(False, "--isolate", help="Run the tuner in its own sandboxed process over the "
                                                          "BAT protocol (docs/RELIABILITY.md)."),
    tuner_charge: float = typer.Option(None, "--tuner-charge", min=0.0, max=MAX_SECONDS, callback=finite,
                                       help="Charge this many seconds of tuner time per proposal (a declared "
                                            "cost model: a deterministic time axis) instead of measuring it."),
    compile_workers: int = typer.Option(1, "--compile-workers", callback=worker_count,
                                        help="Configurations compiled at once on the simulated clock "
                                             "(docs/METHODS.md); a tuner that proposes batches gains from it."),
    devices: int = devices_option(),
    timeout_factor: float = timeout_factor_option(),
    prior: str = typer.Option(None, "--prior",
                              help="Give the tuner other GPUs' measured data of the same space (problem.facts."
                                   "others): comma-separated GPU ids or dataset files/ids, or all-others."),
    tuner_args: list[str] = typer.Argument(None, metavar="[-- PROGRAM_ARGS]",
                                           help="After --, arguments for an exec:PROGRAM tuner."),
) -> None:
    """Tune a benchmark with a tuner and report the best configuration found."""
    from bat.core.errors import BatError
    from bat.core.problem import Budget
    from bat.core.schedule import Parallelism
    from bat.registry import make_tuner, resolve_dataset, with_arguments
    from bat.run.driver import AUTO, run_tuner
    from bat.run.targets import TargetRequest, load_prior, make_target, with_prior

    if benchmark is None and dataset is None:
        raise BatError("bat run: give --benchmark NAME|FILE or --dataset FILE|ID")
    spec = with_arguments(tuner, tuner_args or [])
    if tuner_options is not None:
        from bat.core.hyperparams import read_options_file

        named, pairs = read_options_file(tuner_options)
        if named != tuner:
            raise BatError(f"--tuner-options {tuner_options}: written for tuner {named}, not {tuner}")
        tuner_option = [*pairs, *tuner_option]
    tuner_obj = make_tuner(spec, tuner_option)  # an unknown tuner or option fails before any work
    if isolate:  # its own process; the first line says which sandbox it gets
        from bat.tuner_adapters.isolated import IsolatedTuner

        isolated = make_tuner(f"isolate:{spec}", options=tuple(tuner_option))
        assert isinstance(isolated, IsolatedTuner)
        say("{}", isolated.sandbox.describe())
        tuner_obj = isolated
    from bat.cli.data_cmd import import_on_the_fly

    chosen = (import_on_the_fly(dataset, benchmark) or resolve_dataset(dataset).path) if dataset else None
    # a tuner that reads counters gets them: live, every evaluation is also profiled with ncu
    request = TargetRequest(gpu=gpu, counters=tuner_obj.needs_counters, dataset=chosen, noise=noise,
                            noise_seed=seed)
    target, how = make_target(benchmark, backend=backend, request=request)
    try:
        if prior:
            refs = [p.strip() for p in prior.split(",")]
            if not all(refs):
                raise BatError(f"--prior {prior!r}: an empty item; give comma-separated GPUs or datasets")
            target = with_prior(target, load_prior(target, refs))
            say("prior: measured data of {}", ", ".join(target.facts.others))
        origin = f" (dataset {shown_path(target.dataset_path)})" if target.dataset_path else ""
        say("[bold]{}[/]: {}{}", how, target.backend.describe(), origin)
        b = Budget(max_evals=None if time_budget else budget, max_time_s=time_budget)
        with sigterm_interrupts(), progress(f"{tuner} on {target.benchmark}/{target.gpu}", 1.0) as moved:
            result = run_tuner(tuner_obj, target, budget=b, seed=seed, options=tuner_option,
                               out=AUTO if out is None else out, force=force, resume=resume, progress=moved,
                               on_note=_note, tuner_name=spec, tuner_charge_s=tuner_charge,
                               parallelism=Parallelism(compile_workers, devices), timeout_factor=timeout_factor)
    finally:
        target.backend.close()  # a command backend's scratch folder goes, whatever happened
    report(result, target)


def _note(message: str) -> None:
    say("[yellow]note:[/] {}", message)


def report(result: RunResult, target: Target) -> None:
    """What ``bat run`` prints after a run: the best found, the counts, the costs, the trace (and its document)."""
    tuner_report = result.trace_meta.get("tuner_report", {})
    warning = tuner_report.get("warning")
    if warning:
        say("[yellow]warning:[/] {}", warning)
    if result.after_close:
        say("[yellow]warning:[/] {} proposal(s) after the tuner's tune() returned were refused (never evaluated)",
            result.after_close)
    best: dict | None = None
    if result.best is None:
        say("no valid configuration was found")
    elif result.best.objective_ms is None:  # a backend that checks correctness only (emulated)
        evaluated = result.trace[result.trace["kind"] == "evaluated"]
        correct = int((evaluated["status"] == "ok").sum())
        say("configurations verified correct: {} of {} (no timings)", correct, result.evaluated)
        say("first correct configuration: {}", result.best.config)
        best = {"config": result.best.config, "time_ms": None}
    else:
        say("best configuration: {}", result.best.config)
        say("best time: {:.4f} ms", result.best.objective_ms)
        ratio = result.ratio_to_best_known
        if ratio is not None:
            say("best known: {:.4f} ms; ratio best known / found: {:.3f}", result.best_known_ms, ratio)
        best = {"config": result.best.config, "time_ms": result.best.objective_ms}
    say("evaluations: {} ({} failed); proposals rejected by constraints: {} (invalid rate {:.1%}); repeats: {}",
        result.evaluated, result.failed, result.rejected, result.invalid_rate, result.repeated)
    spent = ("time spent checking on this machine" if target.backend.name == "emulated"
             else "simulated tuning time")
    say("tuner time: {:.2f} s; {}: {:.1f} s", result.tuner_s, spent, result.clock_s)
    workers, devices = result.trace_meta["compile_workers"], result.trace_meta["devices"]
    if (workers, devices) != (1, 1):
        say("on {} compile workers and {} devices; the work charged adds up to {:.1f} s", workers, devices,
            result.cost_s)
    charges = None  # what each evaluation is charged, and where that falls back (bat.core.costs)
    if target.dataset is not None:
        from bat.core.costs import recorded_costs

        costs = recorded_costs(target.dataset.frame)
        charges = costs.describe()
        if costs.falls_back:
            say("simulated time: {}", charges)
    say("trace: {}", result.trace_path)
    document({"tuner": result.tuner, "benchmark": result.benchmark, "gpu": result.gpu, "backend": result.backend,
              "seed": result.seed, "dataset": str(target.dataset_path) if target.dataset_path else None,
              "best": best, "best_known_ms": result.best_known_ms, "ratio_to_best_known": result.ratio_to_best_known,
              "evaluations": result.evaluated, "failed": result.failed, "rejected": result.rejected,
              "invalid_rate": result.invalid_rate, "repeats": result.repeated, "tuner_s": result.tuner_s,
              "cost_s": result.cost_s, "clock_s": result.clock_s, "compile_workers": workers, "devices": devices,
              "timeout_factor": result.trace_meta["timeout_factor"], "simulated_time": charges,
              "warning": str(warning) if warning else None,
              "refused_after_return": result.after_close,
              "processes_left": tuner_report.get("processes_left", []),
              "trace": str(result.trace_path) if result.trace_path else None})


def register(app: typer.Typer) -> None:
    app.command("run")(run)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM interrupts like Ctrl-C (a journalled run then names its journal: bat.run.driver)."""
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
