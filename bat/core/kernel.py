"""The kernel-runner contract: what a benchmark tells a backend about running its kernel.

One ``KernelRunner`` subclass per benchmark (``benchmarks/<name>/runner.py``)
says how to build the inputs, which ``-D`` macros to compile with, which
launches to make, and how to check the outputs against a NumPy reference. It
imports no GPU library, so it loads (and its references run) anywhere; the
live CuPy backend, the emulated backend and the NVRTC compile checks all drive
it, through one procedure (bat.backends.procedure).
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bat.core.benchmark import Benchmark, load_benchmark
from bat.core.limits import MAX_SOURCE_BYTES, read_text

Scalar = np.integer | np.floating
Arg = str | tuple[str, Scalar]


@dataclass(frozen=True)
class Launch:
    """One kernel launch: entry point, geometry, and arguments in order.

    An argument is the name of an array from ``make_inputs`` (passed as a
    device pointer) or ``("scalar", numpy_scalar)`` passed by value with its
    exact dtype.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[Arg, ...]
    shared_bytes: int = 0


@dataclass(frozen=True)
class CheckResult:
    """Outcome of comparing outputs with the reference (``bool(result)`` is ``ok``).

    ``error_ratio`` is the largest error as a fraction of the tolerance: the maximum over the
    compared elements of |got - expected| / (atol + rtol |expected|), so a comparison passes
    when it is at most 1 (an exact comparison gives 0 or infinity).
    """

    ok: bool
    message: str = ""
    error_ratio: float = 0.0

    def __bool__(self) -> bool:
        return self.ok


def combine(*results: CheckResult) -> CheckResult:
    """Several comparisons as one: the first failure's message, the largest error ratio."""
    ratio = max((r.error_ratio for r in results), default=0.0)
    failed = [r for r in results if not r.ok]
    return CheckResult(not failed, failed[0].message if failed else "", ratio)


class KernelRunner(ABC):
    """How to run and check one benchmark's kernel; see docs/DESIGN.md.

    Array names in ``make_inputs`` are the names used in launches. Before every
    run (bat.backends.procedure) the arrays in ``poison_names()`` are filled with
    a poison value (NaN, all-ones integers), so an element a kernel fails to write
    cannot pass as correct, and the arrays in ``reset_names()`` (read and written
    by a run) are copied again from their host values; arrays in
    ``symbol_names()`` go to the ``__constant__`` variable of the same name.
    """

    benchmark: ClassVar[str]
    kernel_names: ClassVar[tuple[str, ...]]
    source: ClassVar[str] = "kernel.cu"

    def __init__(self, bench: Benchmark) -> None:
        #: the loaded benchmark (its launch section gives the geometry)
        self.bench = bench

    @abstractmethod
    def make_inputs(self, size: Mapping[str, int], seed: int) -> dict[str, np.ndarray]:
        """Host arrays (inputs, outputs, scratch), byte-identical for a given size and seed."""

    @abstractmethod
    def macros(self, config: Mapping[str, object], size: Mapping[str, int]) -> dict[str, object]:
        """Every ``-D`` define: the tunable parameters and the problem size."""

    @abstractmethod
    def launches(self, config: Mapping[str, object], size: Mapping[str, int]) -> list[Launch]:
        """The launches of one run, in order; the objective is their total time."""

    @abstractmethod
    def output_names(self) -> list[str]:
        """Arrays compared with the reference after a run."""

    def reset_names(self) -> list[str]:
        """Arrays a run reads and writes (accumulated in place), restored before each run (default: none)."""
        return []

    def poison_names(self) -> list[str]:
        """Arrays a run writes before reading, poisoned before each run (default: the outputs not reset)."""
        resets = set(self.reset_names())
        return [name for name in self.output_names() if name not in resets]

    def tolerance(self, name: str, size: Mapping[str, int]) -> tuple[float, float]:
        """(rtol, atol) of output ``name``, against the reference or between two devices (default exact)."""
        return 0.0, 0.0

    def symbol_names(self) -> list[str]:
        """Arrays copied into ``__constant__`` variables of the same name (default: none)."""
        return []

    @abstractmethod
    def reference(self, inputs: Mapping[str, np.ndarray], size: Mapping[str, int]) -> dict[str, Any]:
        """The expected outputs, computed with NumPy (maybe on a sampled subset: see subclass)."""

    @abstractmethod
    def verify(self, outputs: Mapping[str, np.ndarray], reference: Mapping[str, Any]) -> CheckResult:
        """Compare device outputs (host copies) with ``reference``; the tolerance is stated."""

    @abstractmethod
    def input_recipe(self, size: Mapping[str, int], seed: int) -> dict[str, Any]:
        """Sizes, seed and distributions: recorded with every dataset."""

    def flops(self, size: Mapping[str, int]) -> float | None:
        """Floating-point operations of one run, for GFLOP/s (None: not meaningful)."""
        return None

    def bytes_moved(self, size: Mapping[str, int]) -> float | None:
        """Minimum DRAM traffic of one run in bytes, for GB/s (None: not meaningful)."""
        return None

    def geometry(
        self, config: Mapping[str, object], size: Mapping[str, int]
    ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(grid, block) of the main kernel from the ``launch`` section of space.json."""
        grid, block = self.bench.geometry(dict(config), dict(size))
        return _triple(grid), _triple(block)

    def source_path(self) -> Path:
        """The kernel's CUDA source file (the space file's ``kernel.source``, else ``source``)."""
        source: str = self.bench.kernel.get("source", self.source)
        return self.bench.directory / source

    def source_text(self) -> str:
        """The text of ``source_path()``, read through the bounded reader (a regular file of at most
        ``MAX_SOURCE_BYTES``: the space file names it, so it may name a FIFO or a device)."""
        return read_text(self.source_path(), MAX_SOURCE_BYTES)

    def prepare_source(self, source: str, config: Mapping[str, object]) -> str:
        """The source text as compiled for ``config`` (default: unchanged; the macros carry the configuration)."""
        return source

    def headers(self) -> dict[str, str]:
        """Files the source includes by name (the space file's ``kernel.headers``, beside it): name -> text."""
        return {name: read_text(self.bench.directory / name, MAX_SOURCE_BYTES)
                for name in self.bench.kernel.get("headers", [])}


def _triple(values: Sequence[int]) -> tuple[int, int, int]:
    out = [int(v) for v in values] + [1] * (3 - len(values))
    return out[0], out[1], out[2]


def scalar(value: Scalar) -> tuple[str, Scalar]:
    """A by-value launch argument with its exact dtype (``np.int32(3)``, ``np.float64(0.5)``)."""
    return ("scalar", value)


def compare(
    name: str, got: np.ndarray, expected: np.ndarray, *, rtol: float, atol: float
) -> CheckResult:
    """|got - expected| <= atol + rtol |expected| (``numpy.isclose``) everywhere; names the worst element."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return CheckResult(False, f"{name}: shape {got.shape} != expected {expected.shape}", float("inf"))
    err = np.abs(got.astype(np.float64) - expected.astype(np.float64)).ravel()
    allowed = atol + rtol * np.abs(expected.astype(np.float64)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(err == 0, 0.0, err / allowed)
    ratios[np.isnan(ratios)] = np.inf  # NaN (a poisoned element) is never close
    ratio = float(ratios.max()) if ratios.size else 0.0
    close = ratios <= 1.0
    if close.all():
        return CheckResult(True, "", ratio)
    bad = np.flatnonzero(~close)
    worst = int(bad[np.argmax(err[bad])]) if np.isfinite(err[bad]).any() else int(bad[0])
    where = np.unravel_index(worst, got.shape)
    return CheckResult(
        False,
        f"{name}: {bad.size} of {got.size} elements differ (rtol={rtol}, atol={atol}); "
        f"worst at {tuple(int(i) for i in where)}: got {got.ravel()[worst].item()!r}, "
        f"expected {expected.ravel()[worst].item()!r}",
        ratio,
    )


def rng_for(seed: int) -> np.random.Generator:
    """The generator every ``make_inputs`` uses (PCG64, so bytes do not depend on the machine)."""
    return np.random.Generator(np.random.PCG64(seed))


def digest(arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 over names, dtypes, shapes and little-endian bytes of a set of arrays."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        h.update(f"{name}:{arr.dtype.str}:{arr.shape};".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def sample_indices(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted ``k`` distinct indices in ``[0, n)``, always with the first and the last."""
    if k >= n:
        return np.arange(n)
    inner = rng.choice(np.arange(1, n - 1), size=k - 2, replace=False)
    return np.sort(np.concatenate(([0, n - 1], inner)))


def load_runner(benchmark: Benchmark | str) -> KernelRunner:
    """The runner named by a benchmark's ``kernel.runner`` entry ("module:attr"), bound to it.

    ``benchmark`` is a loaded Benchmark (a space file given by path included) or a
    name or path that ``load_benchmark`` resolves.
    """
    import importlib

    from bat.core.errors import SpaceSpecError

    bench = benchmark if isinstance(benchmark, Benchmark) else load_benchmark(benchmark)
    spec = bench.kernel.get("runner", "")
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise SpaceSpecError(f"{bench.path}: kernel.runner must be 'module:attr', got {spec!r}")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise SpaceSpecError(f"{bench.path}: kernel.runner {spec!r} cannot be imported: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, KernelRunner)):
        raise SpaceSpecError(f"{bench.path}: kernel.runner {spec!r} is not a bat.core.kernel.KernelRunner subclass")
    return cls(bench)
