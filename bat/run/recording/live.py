"""Recording on a GPU: the dataset metadata a live session can vouch for, and ``record_live``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bat.backends.live.device import short_gpu_name
from bat.backends.live.session import INPUT_SEED, LiveSession
from bat.core.benchmark import Benchmark
from bat.core.dataset import Dataset, DatasetMeta
from bat.core.errors import DatasetError
from bat.run.recording.destination import check_out, default_out, journal_of
from bat.run.recording.engine import (
    Outcome,
    RecordPlan,
    all_valid,
    open_journal,
    run_recording,
    sample_valid,
    to_dataset,
)


def provenance_meta(session: LiveSession, gpu: str | None = None) -> dict[str, Any]:
    """DatasetMeta fields describing a recording made with ``session`` (partial/n_expected aside)."""
    info = session.info
    return {
        "benchmark": session.bench.name,
        "space_hash": session.bench.space.space_hash,
        "gpu": gpu or short_gpu_name(info["gpu_name"]),
        "gpu_name": info["gpu_name"],
        "problem_size": dict(session.size.values),
        "input_recipe": session.input_recipe(),
        "driver": info["driver"],
        "toolkit": f"CUDA runtime {info['cuda_runtime']}, NVRTC {info['nvrtc']}, CuPy {info['cupy']}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": "bat record (live CuPy backend)",
        "licence": "MIT",
        "notes": f"{session.size.name} problem size; objective = mean of {session.repeats} timed "
                 "runs after one warm-up run (CUDA events, data on the device)",
        "extra": {
            **{k: v for k, v in info.items() if k not in ("gpu_name", "driver")},
            "arch": session.arch,
            "repeats": session.repeats,
            "timeout_s": session.timeout_s,
            "size_name": session.size.name,
        },
    }


@dataclass
class LiveRecording:
    """What one ``record_live`` call did: where, how far, and whether the device needs a fresh process."""

    out: Path
    outcome: Outcome | None  # None: the dataset was complete already, nothing to resume
    dataset: Dataset | None
    broken: bool = False


def record_live(
    bench: Benchmark,
    *,
    out: Path | None,
    sample: int | None = None,
    seed: int = 0,
    gpu_name: str | None = None,
    small: bool = False,
    resume: bool = False,
    force: bool = False,
    limit: int | None = None,
    max_seconds: float | None = None,
    workers: int = 1,
    repeats: int = 7,
    timeout_s: float = 10.0,
    counters: bool = False,
    on_note: Callable[[str], None] | None = None,
    on_start: Callable[[str, int, int], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> LiveRecording:
    """Measure ``bench``'s space (every valid configuration, or a uniform ``sample``) on the GPU into ``out``.

    Every configuration is journalled beside the dataset; ``resume`` continues an interrupted recording.
    ``on_note`` hears what the recording says, ``on_start(label, total, done)`` its size, ``on_record``
    each journalled record.
    """
    def note(message: str) -> None:
        if on_note is not None:
            on_note(message)

    if out is not None:
        check_out(out, resume=resume, force=force)
    profiler = None
    if counters:  # before the GPU is touched: a missing ncu fails here
        from bat.toolchain.profiler import CounterProfiler

        profiler = CounterProfiler(bench, size=bench.size("small" if small else "published"), seed=INPUT_SEED)
    session = LiveSession(bench, bench.size("small" if small else "published"), repeats=repeats,
                          timeout_s=timeout_s)
    try:
        space = session.bench.space
        work = all_valid(space) if sample is None else sample_valid(space, sample, seed)
        meta = DatasetMeta(**provenance_meta(session, gpu_name)).remember(bench)
        out = out or default_out(bench, meta.gpu, small=small, resume=resume, force=force)
        plan = RecordPlan(space=space, work=work, size_name=session.size.name, meta=meta,
                          device={"gpu": meta.gpu, "gpu_name": meta.gpu_name, "arch": session.arch},
                          counters=profiler.metrics if profiler else ())
        if resume and not journal_of(out).exists() and out.exists():
            if Dataset.read_meta(out).partial:
                raise DatasetError(f"{out} is partial but its journal {journal_of(out)} is gone")
            note(f"{out} is complete: nothing to resume")
            return LiveRecording(out, None, None)
        journal = open_journal(plan, journal_of(out), resume=resume)
        started = journal.header["meta"].get("date")  # a dict: the journal's header is checked where it is read
        if journal.records and isinstance(started, str):
            plan.meta.date = started  # the recording started then
        note(f"recording {session.describe()}")
        if profiler is not None:
            note(f"counters: {profiler.describe()}")
        note(f"{len(work.ids)} configurations ({work.mode}{f', seed {seed}' if work.mode == 'sample' else ''}); "
             f"{len(journal.records)} already in {journal_of(out)}")
        if on_start is not None:
            on_start(f"{bench.name} on {meta.gpu}", len(work.ids), len(journal.records))
        outcome = run_recording(plan, session, journal, workers=workers, limit=limit, max_seconds=max_seconds,
                                on_record=on_record, profiler=profiler)
    finally:
        session.close()
    dataset = to_dataset(plan, journal)
    dataset.save(out)
    if outcome.complete:
        journal.remove()
    return LiveRecording(out, outcome, dataset, broken=bool(session.broken))
