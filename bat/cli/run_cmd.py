"""``bat run``: one tuner on one benchmark, replayed (no GPU) or live, with a trace."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from bat.cli.console import shown_path
from bat.cli.options import finite, positive_finite

if TYPE_CHECKING:
    from bat.run.driver import RunResult
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
    isolate: bool = typer.Option(False, "--isolate", help="Run the tuner in its own sandboxed process over the "
                                                          "BAT protocol (docs/RELIABILITY.md)."),
    tuner_charge: float = typer.Option(None, "--tuner-charge", min=0.0, callback=finite,
                                       help="Charge this many seconds of tuner time per proposal (a declared "
                                            "cost model: a deterministic time axis) instead of measuring it."),
    tuner_args: list[str] = typer.Argument(None, metavar="[-- PROGRAM_ARGS]",
                                           help="After --, arguments for an exec:PROGRAM tuner."),
) -> None:
    """Tune a benchmark with a tuner and report the best configuration found."""
    from bat.cli.console import console
    from bat.core.errors import BatError
    from bat.core.problem import Budget
    from bat.registry import make_tuner, resolve_dataset, with_arguments
    from bat.run.driver import AUTO, run_tuner
    from bat.run.targets import TargetRequest, make_target

    if benchmark is None and dataset is None:
        raise BatError("bat run: give --benchmark NAME|FILE or --dataset FILE|ID")
    spec = with_arguments(tuner, tuner_args or [])
    tuner_obj = make_tuner(spec, tuner_option)  # an unknown tuner or option fails before any work
    if isolate:  # its own process; the first line says which sandbox it gets
        tuner_obj = make_tuner(f"isolate:{spec}", options=tuple(tuner_option))
        console.print(escape(tuner_obj.sandbox.describe()), highlight=False, soft_wrap=True)
    chosen = resolve_dataset(dataset).path if dataset else None
    # a tuner that reads counters gets them: live, every evaluation is also profiled with ncu
    request = TargetRequest(gpu=gpu, counters=tuner_obj.needs_counters, dataset=chosen, noise=noise,
                            noise_seed=seed)
    target, how = make_target(benchmark, backend=backend, request=request)
    try:
        origin = f" (dataset {shown_path(target.dataset_path)})" if target.dataset_path else ""
        console.print(f"[bold]{how}[/]: {target.backend.describe()}{origin}", highlight=False, soft_wrap=True)
        b = Budget(max_evals=None if time_budget else budget, max_time_s=time_budget)
        with sigterm_interrupts(), progress_bar(f"{tuner} on {target.benchmark}/{target.gpu}") as progress:
            result = run_tuner(tuner_obj, target, budget=b, seed=seed, options=tuner_option,
                               out=AUTO if out is None else out, force=force, resume=resume, progress=progress,
                               on_note=_note, tuner_name=spec, tuner_charge_s=tuner_charge)
    finally:
        target.backend.close()  # a command backend's scratch folder goes, whatever happened
    report(result, target)


def _note(message: str) -> None:
    from bat.cli.console import console

    console.print(f"[yellow]note:[/] {escape(message)}", highlight=False, soft_wrap=True)


def report(result: RunResult, target: Target) -> None:
    """What ``bat run`` prints after a run: the best found, the counts, the costs, the trace."""
    from bat.cli.console import console

    warning = result.trace_meta.get("tuner_report", {}).get("warning")
    if warning:
        console.print(f"[yellow]warning:[/] {escape(str(warning))}", highlight=False)
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
    console.print(f"trace: {result.trace_path}", highlight=False, soft_wrap=True)


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[float], None]]:
    """A transient progress bar; yields the callback that moves it (fraction done)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from bat.cli.console import console

    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                  TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task(escape(description), total=1.0)
        yield lambda fraction: bar.update(task, completed=fraction)


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
