"""Data checks: can a dataset be analysed as it is? Each check reports what it found; some flag.

A *flagged* dataset is still analysed, but every report that uses it marks
it and says why. The checks (``CHECKS``):

- ``scale`` (flags): the best time of the dataset against the best times of
  the same benchmark on other GPUs at the same problem size. The reference is
  the median of those best times, the upper median for an even count (a
  dataset that is far too fast is the likelier error: nothing makes a kernel
  faster than its hardware allows, while throttling or a laptop GPU can make
  it slow). More than ``SCALE_RATIO`` (20) times away from the reference
  flags: most likely a unit or problem-size error upstream. Ratios within
  one dataset (speedups, portability percentages) survive such an error;
  absolute times across GPUs do not.
- ``repeats`` (flags): ok rows whose objective is neither the mean nor the
  median of their repeated times (``times_ms``) within 0.1 %.
- ``statuses`` (flags): ok rows without a finite positive objective, failed
  rows that carry an objective.
- ``space`` (flags): values outside the space's value lists; rows that
  violate a constraint of the space but are recorded with another status
  than ``constraint_violation``; a space hash that differs from the space
  file's.
- ``duplicates`` (flags): the same configuration recorded more than once.
- ``coverage`` (a note, never flags): fewer rows than the space's
  constrained count while the metadata does not mark the dataset partial.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bat.core.dataset import Dataset, Status
from bat.core.space import SearchSpace
from bat.data.repeats import repeat_groups

SCALE_RATIO = 20.0
REPEAT_TOLERANCE = 1e-3
CHECKS = ("scale", "repeats", "statuses", "space", "duplicates", "coverage")


@dataclass(frozen=True)
class Finding:
    """What one check found; ``flagged`` marks a dataset that reports must warn about."""

    check: str
    flagged: bool
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"check": self.check, "flagged": self.flagged, "message": self.message}


@dataclass(frozen=True)
class Peer:
    """Another dataset of the same benchmark: its GPU, best time and problem size."""

    gpu: str
    best_ms: float
    problem_size: dict


@dataclass
class DataCheck:
    """Every finding on one dataset."""

    dataset: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return any(f.flagged for f in self.findings)

    @property
    def flags(self) -> list[Finding]:
        return [f for f in self.findings if f.flagged]

    def summary(self) -> str:
        """One line: flagged with the reasons, or the checks it passed."""
        if self.flagged:
            return f"{self.dataset} flagged: " + "; ".join(f"{f.check}: {f.message}" for f in self.flags)
        notes = [f for f in self.findings if not f.flagged]
        passed = [c for c in CHECKS if c != "coverage" and c not in {f.check for f in notes}]
        return f"{self.dataset}: passed {', '.join(passed)}" + "".join(f"; {f.check}: {f.message}" for f in notes)

    def to_dict(self) -> dict[str, object]:
        return {"dataset": self.dataset, "flagged": self.flagged,
                "findings": [f.to_dict() for f in self.findings]}


def check_dataset(dataset: Dataset, space: SearchSpace | None = None, peers: Sequence[Peer] = ()) -> DataCheck:
    """Run every check on ``dataset`` (``space``: the one it belongs to; ``peers``: other GPUs)."""
    if space is None:

        space = dataset.meta.load_benchmark().space
    out = DataCheck(dataset.name)
    out.findings += _scale(dataset, peers)
    out.findings += _repeats(dataset)
    out.findings += _statuses(dataset)
    out.findings += _space(dataset, space)
    dups = int(dataset.frame.duplicated(list(dataset.parameters)).sum())
    if dups:
        out.findings.append(Finding("duplicates", True, f"{dups} rows repeat a configuration recorded earlier"))
    n_valid = space.count_valid()
    if len(dataset.frame) < n_valid and not dataset.meta.partial:
        out.findings.append(Finding("coverage", False, f"{len(dataset.frame)} of {n_valid} constrained "
                                                        "configurations recorded; the metadata does not mark "
                                                        "the dataset partial"))
    return out


def _scale(dataset: Dataset, peers: Sequence[Peer]) -> list[Finding]:
    ok = dataset.ok["objective_ms"].to_numpy(dtype=float)
    ok = ok[np.isfinite(ok) & (ok > 0)]
    same = [p for p in peers if p.gpu != dataset.meta.gpu and p.problem_size == dataset.meta.problem_size]
    if len(ok) == 0:
        return []
    if not same:
        return [Finding("scale", False, "no other GPU with data at the same problem size to compare the best "
                                        "time with")]
    best = float(ok.min())
    everyone = sorted([best, *(p.best_ms for p in same)])
    reference = everyone[len(everyone) // 2]  # the upper median for an even count
    ratio = max(best / reference, reference / best)
    if ratio <= SCALE_RATIO:
        return []
    direction = "below" if best < reference else "above"
    listing = ", ".join(f"{p.gpu} {p.best_ms:.4g}" for p in sorted(same, key=lambda p: p.gpu))
    return [Finding("scale", True,
                    f"best time {best:.4g} ms is {ratio:,.0f}x {direction} the median best time {reference:.4g} ms "
                    f"of {dataset.meta.benchmark} on {len(everyone)} GPUs at the same problem size ({listing} ms): "
                    "likely a unit or problem-size error upstream; ratios within this dataset hold, absolute "
                    "times across GPUs do not")]


def _repeats(dataset: Dataset) -> list[Finding]:
    frame = dataset.frame
    ok = np.flatnonzero((frame["status"] == Status.OK.value).to_numpy())
    objective = frame["objective_ms"].to_numpy(dtype=float)
    bad: list[tuple[int, float, float]] = []
    for rows, sample in repeat_groups(frame["times_ms"].to_numpy(), ok):
        mean, median = sample.mean(axis=1), np.median(sample, axis=1)
        tol = REPEAT_TOLERANCE * np.abs(objective[rows])
        off = (np.abs(objective[rows] - mean) > tol) & (np.abs(objective[rows] - median) > tol)
        bad += [(int(r), float(a), float(m)) for r, a, m in zip(rows[off], mean[off], median[off], strict=True)]
    if not bad:
        return []
    row, mean_, median_ = min(bad)
    return [Finding("repeats", True,
                    f"{len(bad)} ok rows have an objective that is neither the mean nor the median of their "
                    f"repeated times (0.1 %), e.g. row {row}: objective {objective[row]:.6g} ms, "
                    f"mean {mean_:.6g}, median {median_:.6g}")]


def _statuses(dataset: Dataset) -> list[Finding]:
    frame = dataset.frame
    objective = frame["objective_ms"].to_numpy(dtype=float)
    is_ok = (frame["status"] == Status.OK.value).to_numpy()
    ok_bad = int((is_ok & ~(np.isfinite(objective) & (objective > 0))).sum())
    failed_valued = int((~is_ok & np.isfinite(objective)).sum())
    out = []
    if ok_bad:
        out.append(Finding("statuses", True, f"{ok_bad} ok rows lack a finite positive objective"))
    if failed_valued:
        out.append(Finding("statuses", True, f"{failed_valued} failed rows carry an objective"))
    return out


def _space(dataset: Dataset, space: SearchSpace) -> list[Finding]:
    frame = dataset.frame
    out = []
    if tuple(space.names) != tuple(dataset.parameters):
        return [Finding("space", True, f"parameters {list(dataset.parameters)} are not the space's "
                                       f"{list(space.names)}")]
    inside = np.ones(len(frame), dtype=bool)
    for p in space.parameters:
        inside &= frame[p.name].isin(p.values).to_numpy()
    everyone = bool(inside.all())
    if not everyone:
        out.append(Finding("space", True, f"{int((~inside).sum())} rows have values outside the space"))
    # encode reads the space's columns only: the rows are taken apart only when some are out of it
    idx = space.encode(frame if everyone else frame.loc[inside, list(space.names)])
    valid = space.is_valid(idx) if len(idx) else np.zeros(0, dtype=bool)
    status = frame["status"].to_numpy()[inside]
    measured = int((~valid & (status != Status.CONSTRAINT_VIOLATION.value)).sum())
    if measured:
        out.append(Finding("space", True, f"{measured} rows violate a constraint of the space but are recorded "
                                          "as measured"))
    whole = space.whole or space  # the data of a slice (bat import --fix) is recorded on the whole space
    if dataset.meta.space_hash != whole.space_hash:
        out.append(Finding("space", True, f"space hash {dataset.meta.space_hash[:12]} differs from the space "
                                          f"file's {whole.space_hash[:12]}"))
    return out


def best_time(path: str | Path) -> float | None:
    """Best ok objective of a dataset file, reading two columns only (None without one).

    Remembered per file version (absolute path, inode, size, modification time): a campaign checks
    every run's dataset against its peers, and reading them again per run was most of a
    short replayed run's cost; a file changed or replaced is read again."""
    st = os.stat(path)
    return _best_time(os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=1024)
def _best_time(path: str, inode: int, size: int, mtime_ns: int) -> float | None:
    table = pq.read_table(path, columns=["status", "objective_ms"])
    ok = table.filter(pc.equal(table["status"], Status.OK.value))["objective_ms"]
    best = pc.min(ok).as_py() if len(ok) else None
    return float(best) if best is not None else None


def registry_peers(benchmark: str, root: Path | None = None) -> list[Peer]:
    """Best time and problem size of every registered dataset of ``benchmark``."""
    from bat.registry import dataset_entries

    peers = []
    for e in dataset_entries(root, shared=True):
        if e.meta.benchmark == benchmark and (best := best_time(e.path)) is not None:
            peers.append(Peer(e.meta.gpu, best, e.meta.problem_size))
    return peers


def peers_of(datasets: Iterable[Dataset]) -> list[Peer]:
    """Peers from loaded datasets."""
    return [Peer(d.meta.gpu, d.best_ms, d.meta.problem_size) for d in datasets if not d.ok.empty]


def merge_peers(*groups: Iterable[Peer]) -> list[Peer]:
    """One peer per GPU (the first group that names a GPU wins)."""
    out: dict[str, Peer] = {}
    for group in groups:
        for p in group:
            out.setdefault(p.gpu, p)
    return list(out.values())
