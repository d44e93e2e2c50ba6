"""Checkpoints of ``bat run`` on a measuring backend: every evaluation journalled, ``--resume`` continues.

A run whose backend measures (live GPU, command, emulated; anything but a
replay of recorded data) keeps every evaluation the backend made in a
journal beside its trace, ``<trace name>.<token>.journal.jsonl``
(bat.run.recording.journal: fsynced JSON lines, locked while its run is alive,
a unique token so that two identical runs never share one). When the run
ends its trace is written and the journal removed. When it is interrupted
(Ctrl-C, SIGTERM, ``kill -9``, a lost machine) the journal stays, and the
same command with ``--resume`` runs the tuner again from its seed while a
``JournalledBackend`` answers every configuration the journal holds from
the journal, not the backend. Every registered tuner proposes the same
configurations for the same seed and answers (bat.testing checks it across
processes), so the resumed trace equals an uninterrupted one but for its
wall-clock column, and nothing measured is measured again; a tuner that
proposes otherwise still gets the journal's answer for any configuration
the journal holds. Replay runs keep no journal: they rerun exactly in
seconds, and an fsync per evaluation would cost more than the evaluation.
"""

from __future__ import annotations

import glob
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bat.core.dataset import Status
from bat.core.errors import DatasetError
from bat.core.problem import Backend, EvalResult, no_noise
from bat.run.recording.journal import Journal, JournalBusy

KIND = "bat-run-journal"
SUFFIX = ".journal.jsonl"
_NUMBER = (int, float, type(None))
#: the fields of a record of a run's journal (``_record``), with their JSON types: checked where it is read
FIELDS: dict[str, tuple[type, ...]] = {
    "config": (dict,), "status": (str,), "objective_ms": _NUMBER, "times_ms": (list,), "compile_ms": _NUMBER,
    "cost_s": _NUMBER, "message": (str,), "extra": (dict,)}


def journal_header(*, tuner: str, options: list[str], benchmark: str, gpu: str, backend: str,
                   budget_evals: int | None, budget_time_s: float | None, seed: int, space_hash: str,
                   noise: str, identity: str = "") -> dict[str, Any]:
    """What identifies a run: a journal is resumed only by a run with this same header. ``identity`` is the
    target's measurement identity (bat.run.identity: the whole space file and the problem size)."""
    return {"tuner": tuner, "options": sorted(options), "benchmark": benchmark, "gpu": gpu, "backend": backend,
            "budget_evals": budget_evals, "budget_time_s": budget_time_s, "seed": seed,
            "space_hash": space_hash, "noise": noise, "identity": identity}


@dataclass
class RunCheckpoint:
    """The journal this run writes, and what an earlier interrupted run left for it."""

    journal: Journal
    resumed: int = 0  # evaluations taken over from an interrupted run
    others: list[tuple[Path, int]] = field(default_factory=list)  # interrupted runs not resumed, with sizes

    def remove(self) -> None:
        """The run's trace is written: its journal is no longer needed."""
        self.journal.remove()


def open_checkpoint(trace: Path, header: Mapping[str, Any], *, resume: bool) -> RunCheckpoint:
    """Start the journal of a run whose trace will be ``trace``; with ``resume``, take over the largest
    journal an interrupted run with the same ``header`` left beside it (a live run's journal is locked
    and never taken; a damaged one is never taken either, and when it is all there is, ``resume`` is refused
    naming it rather than silently starting afresh)."""
    want = _canonical(header)
    left: list[tuple[Journal, int]] = []  # journals of interrupted runs of this same command, with sizes
    damaged: list[str] = []
    for path in sorted(trace.parent.glob(f"{glob.escape(trace.name)}.*{SUFFIX}")):
        try:
            journal = Journal.open(path, kind=KIND, fields=FIELDS, header_fields={})
        except JournalBusy:  # a run alive now: not ours to touch
            continue
        except DatasetError as exc:  # damaged, or not a run journal: never taken, and --resume says so
            damaged.append(str(exc))
            continue
        if _canonical(_identity(journal.header)) == want:
            left.append((journal, len(journal.records)))
        else:
            journal.close()
    if resume and damaged and not left:
        raise DatasetError(f"--resume: no journal of this run can be resumed; {damaged[0]} (remove it to start "
                           "afresh)")
    left.sort(key=lambda item: -item[1])
    chosen, size = left.pop(0) if resume and left else (None, 0)
    for journal, _ in left:
        journal.close()
    if chosen is None:
        path = trace.with_name(f"{trace.name}.{secrets.token_hex(4)}{SUFFIX}")
        chosen = Journal.create(path, dict(header), kind=KIND)
    others = [(journal.path, n) for journal, n in left]
    return RunCheckpoint(journal=chosen, resumed=size, others=others)


class JournalledBackend:
    """A backend whose every evaluation is journalled, answering from the journal what it already holds."""

    def __init__(self, inner: Backend, checkpoint: RunCheckpoint) -> None:
        self.inner = inner
        self.name = inner.name
        self.journal = checkpoint.journal
        self._answers = {_key(r["config"]): _result(r) for r in self.journal.records}
        self.reused = 0
        self.measured = 0

    def describe(self) -> str:
        return self.inner.describe()

    def evaluate(self, config: Mapping[str, Any]) -> EvalResult:
        answer = self._answers.pop(_key(config), None)
        if answer is not None:
            self.reused += 1
            return answer
        result = self.inner.evaluate(config)
        self.journal.append(_record(result))
        self.measured += 1
        return result

    def with_noise(self, noise: str, seed: int) -> Backend:
        return no_noise(self, noise)  # a journal keeps answers as given: noise is drawn by the backend it wraps

    def close(self) -> None:
        """Release the journal (it stays on disk until ``RunCheckpoint.remove``) and the backend."""
        self.journal.close()
        self.inner.close()


def _identity(header: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in header.items() if k not in ("kind", "version")}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _key(config: Mapping[str, Any]) -> str:
    return json.dumps(dict(config), sort_keys=True)


def _record(result: EvalResult) -> dict[str, Any]:
    return {"config": dict(result.config), "status": result.status.value, "objective_ms": result.objective_ms,
            "times_ms": list(result.times_ms), "compile_ms": result.compile_ms, "cost_s": result.cost_s,
            "message": result.message, "extra": dict(result.extra)}


def _result(record: Mapping[str, Any]) -> EvalResult:
    return EvalResult(config=dict(record["config"]), status=Status(record["status"]),
                      objective_ms=record["objective_ms"], times_ms=tuple(record["times_ms"]),
                      compile_ms=record["compile_ms"], cost_s=record["cost_s"], message=record["message"],
                      extra=dict(record["extra"]))
