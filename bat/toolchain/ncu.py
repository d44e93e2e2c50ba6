"""Collecting counters with Nsight Compute's command-line profiler, and parsing its CSV.

``collect_counters`` runs a command under ``ncu --csv --metrics ...`` (a
separate, profiled run: the timed run stays unprofiled), times that run and
parses the CSV that ncu writes to its log file. ncu's ``details`` CSV has one
row per (kernel launch, metric) with the columns ``ID``, ``Kernel Name``,
``Metric Name``, ``Metric Unit`` and ``Metric Value`` among others; values
may carry thousands separators, and a metric the GPU lacks is ``n/a`` or
absent. Such a metric is never read as zero: it is named in ``missing``,
and an error unless the caller allows missing metrics (its dataset column
then stays NaN).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bat.core.counters import SPEC_METRICS
from bat.core.errors import BackendError, DatasetError, MissingDependencyError

REQUIRED_COLUMNS = ("ID", "Kernel Name", "Metric Name", "Metric Value")


@dataclass(frozen=True)
class KernelCounters:
    """The metrics of one profiled kernel launch."""

    launch_id: int
    kernel: str
    counters: dict[str, float]
    missing: tuple[str, ...] = ()
    wall_s: float = 0.0
    units: dict[str, str] = field(default_factory=dict)


def parse_ncu_csv(text: str, metrics: Sequence[str] = SPEC_METRICS, *, where: str = "<ncu output>"
                  ) -> list[KernelCounters]:
    """Every kernel launch in ncu's CSV output, with the asked ``metrics`` (missing ones named)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise DatasetError(f"{where}: no ncu CSV header (a line starting with \"ID\"); "
                           "was ncu run with --csv and did it profile any kernel?")
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("==")]  # ncu's own messages
    frame = pd.read_csv(io.StringIO("\n".join(rows)), dtype=str, keep_default_na=False)
    absent = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if absent:
        raise DatasetError(f"{where}: ncu CSV lacks columns {absent}")
    launches = []
    for launch_id, group in frame.groupby("ID", sort=False):
        values: dict[str, float] = {}
        units: dict[str, str] = {}
        for name, unit, raw in zip(group["Metric Name"], group.get("Metric Unit", [""] * len(group)),
                                   group["Metric Value"], strict=True):
            value = _number(raw)
            if value is not None:
                values[name], units[name] = value, unit
        missing = tuple(m for m in metrics if m not in values)
        launches.append(KernelCounters(int(str(launch_id)), str(group["Kernel Name"].iloc[0]),
                                       {m: values[m] for m in metrics if m in values}, missing, units=units))
    return launches


def _number(raw: str) -> float | None:
    text = raw.strip().replace(",", "")
    if not text or text.lower() in {"n/a", "nan", "-"}:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def collect_counters(
    command: Sequence[str],
    metrics: Sequence[str] = SPEC_METRICS,
    *,
    kernel: str | None = None,
    ncu: str = "ncu",
    timeout_s: float = 600.0,
    allow_missing: bool = False,
) -> KernelCounters:
    """Run ``command`` once under ncu and return the first matching kernel launch's counters.

    ``kernel`` is a regular expression on the kernel name (ncu's
    ``--kernel-name regex:``). ``wall_s`` is the profiled run's wall time:
    the cost a searcher pays for a profile. Raises MissingDependencyError
    without ncu, BackendError when ncu fails or a metric is missing (unless
    ``allow_missing``: then the result names it in ``missing``).
    """
    exe = shutil.which(ncu)
    if exe is None:
        raise MissingDependencyError(f"Nsight Compute's command-line profiler {ncu!r} is not on PATH; "
                                     "counters cannot be collected without it")
    with tempfile.TemporaryDirectory(prefix="bat-ncu-") as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = [exe, "--csv", "--metrics", ",".join(metrics), "--launch-count", "1", "--log-file", str(log)]
        if kernel:
            cmd += ["--kernel-name", f"regex:{kernel}"]
        start = time.perf_counter()
        try:
            done = subprocess.run([*cmd, *command], capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise BackendError(f"ncu run of {list(command)} took longer than {timeout_s:g} s") from exc
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise BackendError(f"ncu exited with {done.returncode} profiling {list(command)}: "
                               f"{(done.stderr or done.stdout)[-800:]}")
        text = log.read_text() if log.exists() else done.stdout
    launches = parse_ncu_csv(text, metrics, where=f"ncu output of {list(command)}")
    first = launches[0]
    if first.missing and not allow_missing:
        raise BackendError(f"ncu gave no value for {list(first.missing)} on kernel {first.kernel!r} "
                           "(a metric this GPU or ncu version lacks?)")
    return KernelCounters(first.launch_id, first.kernel, first.counters, first.missing, wall, first.units)
