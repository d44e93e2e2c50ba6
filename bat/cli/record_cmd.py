"""``bat record``: measure a benchmark's space on the GPU into a dataset, resumably, in chunks."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

import typer

from bat.cli.options import MAX_EVALUATIONS, MAX_REPEATS, MAX_SECONDS, MAX_SEED, MAX_WORKERS, positive_finite
from bat.cli.output import EXIT_RETRY, document, say


class SizeChoice(StrEnum):
    published = "published"
    small = "small"


def record(
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="Benchmark to measure."),
    all_: bool = typer.Option(False, "--all", help="Every valid configuration, in id order."),
    sample: int = typer.Option(None, "--sample", min=1, max=MAX_EVALUATIONS, help="A uniform sample of N valid ones."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, max=MAX_SEED, help="Seed of --sample."),
    gpu_name: str = typer.Option(None, "--gpu-name", help="Short GPU id in the dataset "
                                 "(default: from the device name, e.g. H100_80GB_HBM3)."),
    out: Path = typer.Option(None, "--out", "-o", help="Dataset file (.parquet); default <data folder>/"
                             "datasets/<bench>_<gpu>.parquet (recorded-small/ for the small size)."),
    size: SizeChoice = typer.Option(SizeChoice.published, "--size", help="Problem size."),
    resume: bool = typer.Option(False, "--resume", help="Continue the journal beside --out."),
    force: bool = typer.Option(False, "--force", help="Record again over an existing --out dataset."),
    limit: int = typer.Option(None, "--limit", min=1, max=MAX_EVALUATIONS, help="Stop after N configurations."),
    max_minutes: float = typer.Option(None, "--max-minutes", min=0.01, max=MAX_SECONDS / 60, callback=positive_finite,
                                      help="Stop starting new configurations after M minutes."),
    workers: int = typer.Option(max(1, min(8, (os.cpu_count() or 2) - 1)), "--workers",
                                min=0, max=MAX_WORKERS, help="NVRTC compile processes (0: compile inline)."),
    repeats: int = typer.Option(None, "--repeats", min=1, max=MAX_REPEATS,
                                help="Timed runs after the warm-up (default 7; a "
                                "command benchmark: its command.repeats)."),
    timeout: float = typer.Option(None, "--timeout", min=0.01, max=MAX_SECONDS, callback=positive_finite,
                                  help="Seconds one run may take (default 10; a command benchmark: its "
                                       "command.time_limit_s.run)."),
    counters: bool = typer.Option(False, "--counters", help="Also collect the profile-guided search's "
                                  "Nsight Compute counters: ncu profiles each ok configuration once more "
                                  "in a separate process (seconds each; recorded as profile_ms)."),
) -> None:
    """Measure a space on the GPU and write a dataset with full provenance.

    Progress is journalled per configuration beside the dataset
    (<out>.journal.jsonl); after an interruption (kill -9 included), --limit
    or --max-minutes, run the same command with --resume. With --counters, ncu
    must be on PATH (checked before anything is measured). Exit status 0: done
    or stopped as asked; 75: the device needs a fresh process (a hung kernel
    or a sticky CUDA error): run again with --resume.
    """
    from bat.core.benchmark import load_benchmark
    from bat.core.errors import BatError

    if all_ == (sample is not None):
        raise BatError("bat record: give exactly one of --all and --sample N")
    bench = load_benchmark(benchmark)
    max_seconds = max_minutes * 60 if max_minutes else None
    if bench.command and not bench.kernel.get("runner"):
        if counters:
            raise BatError(f"bat record --counters: {bench.name} runs a command, not a CUDA kernel ncu "
                           "can profile through bat.run.profile_one")
        from bat.run.recording.command import record_command_benchmark

        dataset, outcome, out = record_command_benchmark(
            bench, out, small=size is SizeChoice.small, sample=sample, seed=seed, compile_workers=max(1, workers),
            limit=limit, max_seconds=max_seconds, resume=resume, force=force, repeats=repeats, timeout_s=timeout)
        broken = False
    else:
        from bat.run.recording.live import record_live

        with recording_bar() as (on_start, on_record):
            done = record_live(bench, out=out, sample=sample, seed=seed, gpu_name=gpu_name,
                               small=size is SizeChoice.small, resume=resume, force=force, limit=limit,
                               max_seconds=max_seconds, workers=workers, repeats=repeats or 7,
                               timeout_s=timeout or 10.0, counters=counters, on_note=lambda m: say("{}", m),
                               on_start=on_start, on_record=on_record)
        if done.outcome is None or done.dataset is None:  # complete already: nothing recorded now
            return
        dataset, outcome, out, broken = done.dataset, done.outcome, done.out, done.broken
    summary = ", ".join(f"{k} {v}" for k, v in sorted(dataset.frame["status"].value_counts().items()))
    say("measured {} now; {} of {} of {} on {} in {} ({})", outcome.measured_now, outcome.done, outcome.expected,
        bench.name, dataset.meta.gpu, out, summary or "empty")
    document({"benchmark": bench.name, "gpu": dataset.meta.gpu, "out": str(out), "measured_now": outcome.measured_now,
              "done": outcome.done, "expected": outcome.expected, "complete": bool(outcome.complete),
              "stopped": None if outcome.complete else str(outcome.stopped), "retry_in_new_process": bool(broken)})
    if outcome.complete:
        say("complete")
        return
    say("stopped: {}; continue with the same command and --resume", outcome.stopped)
    if broken:
        raise typer.Exit(EXIT_RETRY)


@contextmanager
def recording_bar() -> Iterator[tuple[Callable[[str, int, int], None], Callable[[dict], None]]]:
    """Progress of a recording (bat.cli.output.progress); yields the callbacks that start and advance it."""
    from contextlib import ExitStack

    from bat.cli.output import progress

    state: dict = {}
    with ExitStack() as stack:
        def start(label: str, total: int, done: int) -> None:
            state.update(done=done, total=total, move=stack.enter_context(progress(label, total)))

        def advance(rec: dict) -> None:
            state["done"] += 1
            state["move"](state["done"], state["total"])

        yield start, advance


def register(app: typer.Typer) -> None:
    app.command("record")(record)
