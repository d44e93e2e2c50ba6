"""``bat run``: one tuner on one benchmark, replayed (no GPU) or live, with a trace."""

from __future__ import annotations

import hashlib
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bat.cli.options import positive_finite
from bat.core.atomic import check_output

if TYPE_CHECKING:
    from bat.core.problem import Budget
    from bat.run.recording.run_journal import RunCheckpoint
    from bat.run.targets import Target


def run(
    tuner: str = typer.Option(..., "--tuner", "-t",
                              help="Tuner name (see `bat list tuners`), package.module:Class, or "
                                   "exec:PROGRAM (a program speaking docs/PROTOCOL.md)."),
    tuner_option: list[str] = typer.Option([], "--tuner-option", "-O",
                                           help="A hyper-parameter of the tuner, KEY=VALUE (repeatable)."),
    benchmark: str = typer.Option(None, "--benchmark", "-b",
                                  help="Benchmark name, or a space file (ours or T1) by path, used as written."),
    gpu: str = typer.Option(None, "--gpu", help="GPU whose recorded data to replay (default: RTX_3090)."),
    dataset: str = typer.Option(None, "--dataset", "-d",
                                help="Dataset to replay, by file or id (`bat list datasets`); its own space is "
                                     "used unless --benchmark names one."),
    budget: int = typer.Option(100, "--budget", "-n", min=1, help="Distinct valid configurations to evaluate."),
    time_budget: float = typer.Option(None, "--time-budget", callback=positive_finite,
                                      help="Simulated seconds (compile + run) instead."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Seed: the same seed gives the same trace."),
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
    tuner_args: list[str] = typer.Argument(None, metavar="[-- PROGRAM_ARGS]",
                                           help="After --, arguments for an exec:PROGRAM tuner."),
) -> None:
    """Tune a benchmark with a tuner and report the best configuration found."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from bat.cli.console import console, shown_path
    from bat.core.errors import BatError
    from bat.core.problem import Budget
    from bat.core.trace import write_trace
    from bat.core.userdata import check_writable, runs_dir
    from bat.registry import make_tuner, resolve_dataset, with_arguments
    from bat.run.driver import run_tuner
    from bat.run.recording.run_journal import JournalledBackend
    from bat.run.targets import TargetRequest, make_target

    if benchmark is None and dataset is None:
        raise BatError("bat run: give --benchmark NAME|FILE or --dataset FILE|ID")
    spec = with_arguments(tuner, tuner_args or [])
    tuner_obj = make_tuner(spec, tuner_option)  # an unknown tuner or option fails before any work
    chosen = resolve_dataset(dataset).path if dataset else None
    # a tuner that reads counters gets them: live, every evaluation is also profiled with ncu
    request = TargetRequest(gpu=gpu, counters=tuner_obj.needs_counters, dataset=chosen, noise=noise,
                            noise_seed=seed)
    target, how = make_target(benchmark, backend=backend, request=request)
    try:
        origin = f" (dataset {shown_path(target.dataset_path)})" if target.dataset_path else ""
        console.print(f"[bold]{how}[/]: {target.backend.describe()}{origin}", highlight=False, soft_wrap=True)
        if target.dataset is not None:
            from bat.analysis.checks import check_dataset, registry_peers

            checked = check_dataset(target.dataset, target.space, registry_peers(target.benchmark))
            if checked.flagged:
                console.print("[yellow]data check flagged this dataset:[/] "
                              + "; ".join(f.message for f in checked.flags), highlight=False)
        b = Budget(max_evals=None if time_budget else budget, max_time_s=time_budget)
        numbered = out is None
        if out is None:
            out = runs_dir() / default_name(target, spec, tuner_option, b, seed)
        check_output(check_writable(out), overwrite=force or numbered, what="--out")  # before the run
        checkpoint = _checkpoint(target, out, spec, tuner_option, b, seed, noise, resume=resume)
        if checkpoint is not None:
            target = replace(target, backend=JournalledBackend(target.backend, checkpoint))
        with interruptible(checkpoint), Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                      TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task(f"{tuner} on {target.benchmark}/{target.gpu}", total=1.0)
            result = run_tuner(tuner_obj, target, budget=b, seed=seed,
                               progress=lambda f: bar.update(task, completed=f), tuner_name=spec)
    finally:
        target.backend.close()  # a command backend's scratch folder goes, whatever happened
    result.trace_path = write_trace(result.trace, result.trace_meta, out, overwrite=force, numbered=numbered)
    if checkpoint is not None:
        checkpoint.remove()
        if checkpoint.resumed:
            console.print(f"resumed: {target.backend.reused} evaluations answered from the interrupted run's "
                          f"journal, {target.backend.measured} measured now")
    warning = result.trace_meta.get("tuner_report", {}).get("warning")
    if warning:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    if result.best is None:
        console.print("no valid configuration was found")
    elif result.best.objective_ms is None:  # a backend that checks correctness only (emulated)
        evaluated = result.trace[result.trace["kind"] == "evaluated"]
        correct = int((evaluated["status"] == "ok").sum())
        console.print(f"configurations verified correct: {correct} of {result.evaluated} (no timings)")
        console.print(f"first correct configuration: {result.best.config}", highlight=False)
    else:
        console.print(f"best configuration: {result.best.config}", highlight=False)
        console.print(f"best time: {result.best.objective_ms:.4f} ms")
        ratio = result.ratio_to_best_known
        if ratio is not None:
            console.print(f"best known: {result.best_known_ms:.4f} ms; ratio best known / found: {ratio:.3f}")
    console.print(
        f"evaluations: {result.evaluated} ({result.failed} failed); proposals rejected by constraints: "
        f"{result.rejected} (invalid rate {result.invalid_rate:.1%}); repeats: {result.repeated}"
    )
    spent = ("time spent checking on this machine" if target.backend.name == "emulated"
             else "simulated tuning time")
    console.print(f"tuner time: {result.tuner_s:.2f} s; {spent}: {result.cost_s:.1f} s")
    if target.dataset is not None:
        from bat.core.costs import recorded_costs

        costs = recorded_costs(target.dataset.frame)
        if costs.falls_back:
            console.print(f"simulated time: {costs.describe()}", highlight=False)
    console.print(f"trace: {result.trace_path}")


def default_name(target: Target, tuner: str, options: list[str], budget: Budget, seed: int) -> str:
    """A trace name holding everything that tells runs apart: benchmark, GPU, backend, tuner (with its
    program arguments) and its options, budget kind and size, seed
    (``gemm_RTX_3090_replay_optuna_n100_s0.parquet``); a long tuner or option text is shortened with a hash."""
    parts = [target.benchmark, target.gpu]
    if target.backend.name != target.gpu:  # an emulated run's GPU field already names its backend
        parts.append(target.backend.name)
    parts.append(_shortened(tuner))
    if options:
        parts.append(_shortened("-".join(sorted(options))))
    parts.append(f"n{budget.max_evals}" if budget.max_evals is not None else f"t{budget.max_time_s:g}s")
    parts.append(f"s{seed}")
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", "_".join(parts)) + ".parquet"


def _shortened(text: str, limit: int = 40) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit - 11]}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def register(app: typer.Typer) -> None:
    app.command("run")(run)


def _checkpoint(target: Target, out: Path, tuner: str, options: list[str], budget: Budget, seed: int,
                noise: str, *, resume: bool) -> RunCheckpoint | None:
    """The journal of a run on a measuring backend (None for a replay), resumed from an interrupted one
    when asked; says what it found."""
    from bat.cli.console import console, shown_path
    from bat.run.recording.run_journal import journal_header, open_checkpoint

    if target.dataset is not None:
        if resume:
            console.print("--resume: a replay keeps no journal (it reruns exactly); running afresh")
        return None
    header = journal_header(tuner=tuner, options=options, benchmark=target.benchmark, gpu=target.gpu,
                            backend=target.backend.name, budget_evals=budget.max_evals,
                            budget_time_s=budget.max_time_s, seed=seed, space_hash=target.space.space_hash,
                            noise=noise)
    checkpoint = open_checkpoint(out, header, resume=resume)
    if resume and not checkpoint.resumed:
        console.print("--resume: no interrupted run of this command was found; running afresh")
    elif checkpoint.resumed:
        console.print(f"resuming: {checkpoint.resumed} evaluations from {shown_path(checkpoint.journal.path)}",
                      highlight=False)
    for path, n in checkpoint.others:
        console.print(f"[yellow]note:[/] an interrupted run of this command left {n} evaluations in "
                      f"{shown_path(path)}; --resume continues it", highlight=False)
    return checkpoint


@contextmanager
def interruptible(checkpoint: RunCheckpoint | None) -> Iterator[None]:
    """SIGTERM interrupts like Ctrl-C; an interrupted run says where its evaluations are kept."""
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        if checkpoint is not None:
            from bat.cli.console import err_console, shown_path

            err_console.print(f"{len(checkpoint.journal.records)} evaluations kept in "
                              f"{shown_path(checkpoint.journal.path)}: the same command with --resume "
                              "continues from there", highlight=False)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
