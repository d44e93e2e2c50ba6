"""``bat record``: measure a benchmark's space on the GPU into a dataset, resumably, in chunks."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

import typer

from bat.cli.options import positive_finite

#: Exit status when the device must be reset: resume in a fresh process.
EXIT_RESUME_IN_NEW_PROCESS = 3


class SizeChoice(StrEnum):
    published = "published"
    small = "small"


def record(
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="Benchmark to measure."),
    all_: bool = typer.Option(False, "--all", help="Every valid configuration, in id order."),
    sample: int = typer.Option(None, "--sample", min=1, help="A uniform sample of N valid ones."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Seed of --sample."),
    gpu_name: str = typer.Option(None, "--gpu-name", help="Short GPU id in the dataset "
                                 "(default: from the device name, e.g. H100_80GB_HBM3)."),
    out: Path = typer.Option(None, "--out", "-o", help="Dataset file (.parquet); default <data folder>/"
                             "datasets/<bench>_<gpu>.parquet (recorded-small/ for the small size)."),
    size: SizeChoice = typer.Option(SizeChoice.published, "--size", help="Problem size."),
    resume: bool = typer.Option(False, "--resume", help="Continue the journal beside --out."),
    force: bool = typer.Option(False, "--force", help="Record again over an existing --out dataset."),
    limit: int = typer.Option(None, "--limit", min=1, help="Stop after N configurations."),
    max_minutes: float = typer.Option(None, "--max-minutes", min=0.01, callback=positive_finite,
                                      help="Stop starting new configurations after M minutes."),
    workers: int = typer.Option(max(1, min(8, (os.cpu_count() or 2) - 1)), "--workers",
                                min=0, help="NVRTC compile processes (0: compile inline)."),
    repeats: int = typer.Option(7, "--repeats", min=1, help="Timed runs after the warm-up."),
    timeout: float = typer.Option(10.0, "--timeout", min=0.01, callback=positive_finite,
                                  help="Seconds one run may take."),
    counters: bool = typer.Option(False, "--counters", help="Also collect the profile-guided search's "
                                  "Nsight Compute counters: ncu profiles each ok configuration once more "
                                  "in a separate process (seconds each; recorded as profile_ms)."),
) -> None:
    """Measure a space on the GPU and write a dataset with full provenance.

    Progress is journalled per configuration beside the dataset
    (<out>.journal.jsonl); after an interruption (kill -9 included), --limit
    or --max-minutes, run the same command with --resume. With --counters, ncu
    must be on PATH (checked before anything is measured). Exit status 0: done
    or stopped as asked; 3: the device needs a fresh process (a hung kernel
    or a sticky CUDA error): run again with --resume.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from bat.backends.live.session import INPUT_SEED, LiveSession
    from bat.cli.console import console
    from bat.core.benchmark import load_benchmark
    from bat.core.dataset import Dataset, DatasetMeta
    from bat.core.errors import BatError, DatasetError
    from bat.formats.importing import remember_space
    from bat.run.recording.engine import RecordPlan, all_valid, open_journal, run_recording, sample_valid, to_dataset
    from bat.run.recording.live import provenance_meta

    if all_ == (sample is not None):
        raise BatError("bat record: give exactly one of --all and --sample N")
    bench = load_benchmark(benchmark)
    if out is not None:
        _check_out(out, resume=resume, force=force)
    if bench.command and not bench.kernel.get("runner"):
        if counters:
            raise BatError(f"bat record --counters: {bench.name} runs a command, not a CUDA kernel ncu "
                           "can profile through bat.run.profile_one")
        _record_command(bench, out=out, size=size, sample=sample, seed=seed, workers=workers,
                        limit=limit, resume=resume, force=force)
        return
    profiler = None
    if counters:  # before the GPU is touched: a missing ncu fails here
        from bat.toolchain.profiler import CounterProfiler

        profiler = CounterProfiler(bench, size=bench.size(size.value), seed=INPUT_SEED)
    session = LiveSession(bench, bench.size(size.value), repeats=repeats, timeout_s=timeout)
    space = session.bench.space
    work = all_valid(space) if all_ else sample_valid(space, sample, seed)
    meta = remember_space(DatasetMeta(**provenance_meta(session, gpu_name)), bench)
    if out is None:
        out = _default_out(bench, meta.gpu, size, resume)
        _check_out(out, resume=resume, force=force)
    device = {"gpu": meta.gpu, "gpu_name": meta.gpu_name, "arch": session.arch}
    plan = RecordPlan(space=space, work=work, size_name=session.size.name, meta=meta, device=device,
                      counters=profiler.metrics if profiler else ())
    journal_path = out.with_name(out.name + ".journal.jsonl")
    if resume and not journal_path.exists() and out.exists():
        if Dataset.read_meta(out).partial:
            raise DatasetError(f"{out} is partial but its journal {journal_path} is gone")
        console.print(f"{out} is complete: nothing to resume")
        session.close()
        return
    journal = open_journal(plan, journal_path, resume=resume)
    if journal.records:
        plan.meta.date = journal.header["meta"]["date"]  # the recording started then
    console.print(f"[bold]recording[/] {session.describe()}", highlight=False)
    if profiler is not None:
        console.print(f"counters: {profiler.describe()}", highlight=False)
    console.print(f"{len(work.ids)} configurations ({work.mode}"
                  f"{f', seed {seed}' if work.mode == 'sample' else ''}); "
                  f"{len(journal.records)} already in {journal_path}", highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[statuses]}"), TimeRemainingColumn())
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(f"{session.bench.name} on {meta.gpu}", total=len(work.ids),
                                completed=len(journal.records), statuses="")
            counts: dict[str, int] = {}

            def advance(rec: dict) -> None:
                counts[rec["status"]] = counts.get(rec["status"], 0) + 1
                bar.update(task, advance=1,
                           statuses=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))

            outcome = run_recording(plan, session, journal, workers=workers, limit=limit,
                                    max_seconds=max_minutes * 60 if max_minutes else None,
                                    on_record=advance, profiler=profiler)
    finally:
        session.close()
    dataset = to_dataset(plan, journal)
    dataset.save(out)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(dataset.frame["status"].value_counts().items()))
    console.print(f"measured {outcome.measured_now} now; {outcome.done} of {outcome.expected} "
                  f"in {out} ({summary or 'empty'})", highlight=False)
    if outcome.complete:
        journal.remove()
        console.print("complete")
        return
    console.print(f"stopped: {outcome.stopped}; continue with the same command and --resume",
                  highlight=False)
    if session.broken:
        raise typer.Exit(EXIT_RESUME_IN_NEW_PROCESS)


def _check_out(out: Path, *, resume: bool, force: bool) -> None:
    """A new recording never replaces a dataset unless forced; a resumed one continues its own."""
    from bat.core.atomic import check_output
    from bat.core.errors import DatasetError

    check_output(out, overwrite=resume or force, what="--out")
    journal = out.with_name(out.name + ".journal.jsonl")
    if resume and not journal.exists() and not out.exists():
        raise DatasetError(f"--resume: neither a journal {journal} nor a dataset {out} to resume; "
                           "leave out --resume to start recording")


def _default_out(bench, gpu: str, size: SizeChoice, resume: bool) -> Path:
    """<data folder>/datasets/<bench>_<gpu>.parquet; small sizes go to recorded-small/ (never replayed).

    A second dataset of the same space and GPU is never started by default: give --out for one.
    """
    from bat.core.errors import DatasetError
    from bat.core.userdata import data_dir, dataset_file
    from bat.registry import datasets_of

    if size is SizeChoice.small:
        return dataset_file(bench.name, f"{gpu}_small", folder=data_dir() / "recorded-small",
                            fields=("benchmark", "--gpu-name"))
    out = dataset_file(bench.name, gpu, fields=("benchmark", "--gpu-name"))
    others = [e for e in datasets_of(bench) if e.meta.gpu == gpu and e.path.resolve() != out.resolve()]
    if others and not resume:
        raise DatasetError(f"a dataset of {bench.name} on {gpu} exists at {others[0].path}; give --out FILE to "
                           "record another one (then choose between them with --dataset)")
    return out


def _record_command(bench, *, out: Path | None, size: SizeChoice, sample: int | None, seed: int,
                    workers: int, limit: int | None, resume: bool, force: bool) -> None:
    """A benchmark with a command section and no CUDA kernel: the command backend records it."""
    from bat.cli.console import console
    from bat.run.recording.command import host_id, record_command_benchmark

    if out is None:
        out = _default_out(bench, host_id(), size, resume)
        _check_out(out, resume=resume, force=force)
    dataset, outcome = record_command_benchmark(
        bench, out, small=size is SizeChoice.small, sample=sample, seed=seed,
        compile_workers=max(1, workers), limit=limit, resume=resume)
    console.print(f"measured {outcome.measured_now} now; {outcome.done} of {outcome.expected} "
                  f"of {bench.name} on {dataset.meta.gpu} in {out}", highlight=False)
    if not outcome.complete:
        console.print(f"stopped: {outcome.stopped}; continue with the same command and --resume",
                      highlight=False)


def register(app: typer.Typer) -> None:
    app.command("record")(record)
