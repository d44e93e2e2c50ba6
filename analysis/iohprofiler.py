"""Export of tuner runs in the IOHprofiler data format, which IOHanalyzer reads.

The format (IOHanalyzer's documentation, "Supported Data Format", the
IOHprofiler format with the two-column raw data):

- one folder per algorithm (here: per tuner label), holding per function a
  meta-data file ``IOHprofiler_f<id>_<name>.info`` and a raw-data file
  ``data_f<id>_<name>/IOHprofiler_f<id>_DIM<d>.dat``;
- the meta-data file has three lines per dimension: (name, value) pairs
  separated by commas, with the case-sensitive mandatory names ``funcId``,
  ``DIM`` and ``algId``; a line starting with ``%`` (a comment); the
  relative path of the raw-data file followed by one ``instance:running
  time|best-so-far f(x)`` entry per run;
- the raw-data file starts every run with the separation line
  ``"function evaluation" "best-so-far f(x)"`` (double quotes), followed by
  records of two numbers separated by one space, each block ending with the
  run's last function evaluation.

Here a function is one target (benchmark on a GPU, ``funcId`` its position
in the campaign, ``funcName`` ``<benchmark>_<gpu>``), DIM is the number of
tuning parameters, every run is instance 1 of it, a function evaluation is
one charged evaluation of a distinct configuration, and f(x) is the
recorded kernel time in ms of the configuration the run holds as best
(minimised: ``maximization = 'F'``). A record is written at every
improvement and at the run's last evaluation. A run holds nothing until its
first valid configuration; it is written from there, and a run that found
none is written as one record at its last evaluation with the slowest valid
time of the dataset (the comment line says how many).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bat.analysis.score import RunCurve
from bat.core.atomic import write_text

HEADER = '"function evaluation" "best-so-far f(x)"'


@dataclass(frozen=True)
class Function:
    """One target as IOHprofiler sees it."""

    func_id: int
    name: str
    dim: int
    f_fail: float


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _records(run: RunCurve, f_fail: float) -> list[tuple[int, float]]:
    """(evaluation, best-so-far) at the first valid configuration, every improvement, and the end."""
    n = len(run.best)
    if n == 0:
        return []
    valid = np.flatnonzero(run.held >= 0)
    if len(valid) == 0:
        return [(n, f_fail)]
    steps = [int(valid[0])] + [int(i) for i in np.flatnonzero(np.diff(run.best)) + 1 if i > valid[0]]
    if steps[-1] != n - 1:
        steps.append(n - 1)
    return [(i + 1, float(run.best[i])) for i in steps]


def write_function(folder: Path, algorithm: str, fn: Function, runs: Sequence[RunCurve], comment: str) -> Path:
    """Write one function's meta-data and raw data for one algorithm; returns the .info path."""
    stem = f"f{fn.func_id}_{_safe(fn.name)}"
    data = folder / f"data_{stem}" / f"IOHprofiler_f{fn.func_id}_DIM{fn.dim}.dat"
    data.parent.mkdir(parents=True, exist_ok=True)
    lines, entries, empty = [], [], 0
    for run in runs:
        records = _records(run, fn.f_fail)
        if not records:
            continue
        empty += int(not (run.held >= 0).any())
        lines.append(HEADER)
        lines += [f"{k} {v:.10e}" for k, v in records]
        entries.append(f"1:{records[-1][0]}|{records[-1][1]:.10e}")
    write_text(data, "\n".join(lines) + "\n")
    note = f"{comment}; {empty} runs found no valid configuration" if empty else comment
    info = folder / f"IOHprofiler_{stem}.info"
    algo = algorithm.replace("'", "")
    write_text(info, f"suite = 'BAT', funcId = {fn.func_id}, funcName = '{_safe(fn.name)}', DIM = {fn.dim}, "
                     f"maximization = 'F', algId = '{algo}'\n"
                     f"% {note}\n"
                     f"{data.relative_to(folder).as_posix()}, {', '.join(entries)}\n")
    return info


def write_campaign(out: Path, functions: Sequence[Function],
                   runs: Mapping[str, Mapping[int, Sequence[RunCurve]]], comment: str) -> list[Path]:
    """``out/<tuner>/...`` for every tuner label; ``runs[label][func_id]`` are that tuner's runs."""
    paths = []
    for label, per_function in runs.items():
        folder = out / _safe(label)
        for fn in functions:
            if per_function.get(fn.func_id):
                paths.append(write_function(folder, label, fn, per_function[fn.func_id], comment))
    return paths
