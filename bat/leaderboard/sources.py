"""The inputs of a leaderboard: ``bat compare`` result folders, read, checked and merged into one set of cells.

A source is a folder holding the ``results.json`` that ``bat compare`` writes
(``bat.analysis.compare.report``). It is read within the input limits
(``bat.core.limits``) and checked for the fields a leaderboard reads: a
campaign with its tuners and targets, and a methodology section with a score
per (tuner, target, axis). A transfer study's (``bat compare --study
transfer``, recognised by its ``study.splits``) is checked against its own
shape (``bat.leaderboard.transfer``) and kept apart: its tuners ran with a
prior, so they are ranked on the transfer pages, never merged into the
cells. A file of another schema (a comparison run without the methodology
score) is refused naming the file and the field.

Sources merge by cell, a (tuner label, benchmark, GPU): a cell given by two
folders is taken once when both hold the same runs (the same run ids and
traces), and refused when they differ; a label must name the same tuner
(spec and options) in every folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bat.core.errors import BatError
from bat.core.limits import MAX_DATA_BYTES, loads, read_bytes
from bat.leaderboard.schema import SHAPE, mismatch
from bat.leaderboard.sealed import FORMAT, SealedError, check
from bat.leaderboard.transfer import TransferSourceError, is_transfer, runs
from bat.leaderboard.transfer import check as check_transfer

RESULTS = "results.json"
AXES = ("evaluations", "time")


class SourceError(BatError, ValueError):
    """A results folder a leaderboard cannot be built from (another schema, a conflict with another folder)."""


@dataclass(frozen=True)
class Source:
    """One results folder: its name, the bytes of its ``results.json`` and the parsed document."""

    name: str
    raw: bytes
    doc: dict[str, Any]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def transfer(self) -> bool:
        """Whether these are the results of a transfer study (``bat.leaderboard.transfer``)."""
        return is_transfer(self.doc)


def campaigns(sources: Sequence[Source]) -> list[Source]:
    """The ``bat compare`` campaigns among ``sources`` (the transfer studies left out)."""
    return [s for s in sources if not s.transfer]


def read_source(folder: Path, name: str | None = None) -> Source:
    """The results of ``folder`` (or a ``results.json`` itself), checked for the fields a leaderboard reads."""
    path = folder / RESULTS if folder.is_dir() else folder
    raw = read_bytes(path, MAX_DATA_BYTES)
    try:
        doc = loads(raw, str(path), finite=False)
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    check_schema(doc, str(path))
    return Source(name or (folder.name if folder.is_dir() else folder.parent.name), raw, doc)


def check_schema(doc: Any, where: str) -> None:
    """SourceError naming ``where`` and the field when ``doc`` is not of the shape a leaderboard reads
    (``bat.leaderboard.schema.SHAPE``, a transfer study's ``bat.leaderboard.transfer.SHAPE``)."""
    if is_transfer(doc):
        try:
            check_transfer(doc, where)
        except TransferSourceError as exc:
            raise SourceError(str(exc)) from None
        return
    if found := mismatch(doc, SHAPE):
        raise SourceError(f"{where}: '{found[0]}' {found[1]}: not the results.json of bat compare (a campaign "
                          "with the methodology score)")
    if not doc["campaign"]["budgets"]:
        raise SourceError(f"{where}: 'campaign.budgets' is empty")
    for i, run in enumerate(doc["runs"]):
        if len(run["trace"]["charged"]) != len(run["trace"]["best_so_far_ms"]):
            raise SourceError(f"{where}: 'runs[{i}].trace': its columns differ in length")
    if "sealed" in doc:
        if doc["sealed"]["format"] != FORMAT:
            raise SourceError(f"{where}: 'sealed.format' is not {FORMAT}")
        try:
            check(doc, where)
        except SealedError as exc:
            raise SourceError(str(exc)) from None


def sealed_runs(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """The recorded digests of every sealed run of ``sources`` (each with its source's name), as the manifest
    lists them."""
    return [{"source": s.name, **r} for s in campaigns(sources) for r in s.doc.get("sealed", {}).get("runs", [])]


def transfer_runs(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """Every stored run of the transfer studies of ``sources``, as the manifest lists them
    (``bat.leaderboard.transfer.runs``)."""
    return [r for s in sources if s.transfer for r in runs(s.name, s.doc)]


def cell_runs(source: Source, label: str, benchmark: str, gpu: str) -> dict[str, str]:
    """The runs of one cell in ``source``: run id -> sha256 of the run (metadata and trace, canonical JSON)."""
    return {r["meta"]["run_id"]: hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()
            for r in source.doc["runs"]
            if (r["meta"]["label"], r["meta"]["benchmark"], r["meta"]["gpu"]) == (label, benchmark, gpu)}


def target_key(name: str) -> tuple[str, str]:
    """``benchmark/gpu`` as (benchmark, gpu)."""
    benchmark, _, gpu = name.partition("/")
    return benchmark, gpu


def owners(sources: Sequence[Source]) -> dict[tuple[str, str, str], int]:
    """The source (index) each cell is taken from; SourceError on a conflict between two folders."""
    tuners: dict[str, tuple[str, dict[str, Any], str]] = {}
    owner: dict[tuple[str, str, str], int] = {}
    for i, s in enumerate(sources):
        if s.transfer:
            continue
        for t in s.doc["campaign"]["tuners"]:
            declared = (t["spec"], t["options"])
            if t["label"] in tuners and tuners[t["label"]][:2] != declared:
                raise SourceError(f"{s.name}: tuner label '{t['label']}' names {t['spec']} with other options "
                                  f"than in {tuners[t['label']][2]}: one label, one tuner")
            tuners.setdefault(t["label"], (*declared, s.name))
        for name, target in s.doc["methodology"]["targets"].items():
            for label in target["scores"]:
                key = (label, *target_key(name))
                if key in owner:
                    first = sources[owner[key]]
                    if cell_runs(first, *key) != cell_runs(s, *key):
                        raise SourceError(f"{s.name} and {first.name}: conflicting runs of {label} on {name} "
                                          "(the same cell with other runs)")
                    continue
                owner[key] = i
    return owner
