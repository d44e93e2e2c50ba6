"""The measurement procedure every kernel backend runs, on any device: one place, no device library.

A ``Device`` is what a backend wraps around the hardware (the CuPy layer of the live backend,
bat.backends.live.cupy_device; the CPU emulation, bat.backends.emulated.device). The
procedure, written once here against the runner contract (bat.core.kernel), is:

1. ``allocate``: every array of ``make_inputs`` except the ``__constant__`` symbols gets its
   own device array of exactly its size, holding its host value;
2. ``execute``, per configuration: copy the symbols, then for every run (warm-ups first)
   fill the arrays a run writes before reading them (``poison_names``: NaN for floats,
   all-ones for integers), restore the arrays a run reads and writes (``reset_names``),
   and make the launches; after the last run read the outputs back;
3. ``check``: compare the outputs with the reference (``verify``); a verifier that raises
   says the output is wrong.

A device that times runs returns milliseconds from ``run``; one that does not (emulation)
returns None, and nothing is ever reported as a time then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from bat.core.kernel import CheckResult, KernelRunner, Launch, compare

#: Seed of the inputs every backend uses (inputs are byte-identical for a given size and seed).
INPUT_SEED = 0
#: The byte every poisoned array is filled with (a NaN in every float width, -1 in every int).
POISON_BYTE = 0xFF


class Device(Protocol):
    """A kernel's device as the procedure sees it: named arrays, symbols, launches."""

    def allocate(self, name: str, host: np.ndarray) -> None:
        """A device array of exactly ``host``'s size, holding its values."""
        ...

    def upload(self, name: str, host: np.ndarray) -> None:
        """Copy ``host`` into the device array ``name``."""
        ...

    def poison(self, name: str) -> None:
        """Fill the device array ``name`` with ``POISON_BYTE``."""
        ...

    def set_symbol(self, name: str, host: np.ndarray) -> None:
        """Copy ``host`` into the ``__constant__`` variable ``name`` of the loaded kernels."""
        ...

    def run(self, launches: Sequence[Launch]) -> float | None:
        """Make ``launches`` in order; milliseconds between events, or None (no timing)."""
        ...

    def read(self, names: Sequence[str]) -> dict[str, np.ndarray]:
        """Host copies of device arrays, shaped and typed as their host values."""
        ...


@dataclass(frozen=True)
class Execution:
    """What the runs of one configuration gave: the timed runs (if any) and the outputs."""

    times_ms: tuple[float, ...]
    outputs: dict[str, np.ndarray]


def allocate(device: Device, runner: KernelRunner, host: Mapping[str, np.ndarray]) -> None:
    """Give every array of ``host`` except the symbols its own exact-size device array."""
    symbols = set(runner.symbol_names())
    for name, array in host.items():
        if name not in symbols:
            device.allocate(name, array)


def execute(device: Device, runner: KernelRunner, host: Mapping[str, np.ndarray],
            launches: Sequence[Launch], *, warmups: int, repeats: int) -> Execution:
    """Copy the symbols, do ``warmups`` then ``repeats`` runs, and read the outputs back."""
    for name in runner.symbol_names():
        device.set_symbol(name, host[name])
    resets, poisoned = runner.reset_names(), runner.poison_names()
    times: list[float] = []
    for run in range(warmups + repeats):
        for name in poisoned:
            device.poison(name)
        for name in resets:
            device.upload(name, host[name])
        elapsed = device.run(launches)
        if run >= warmups and elapsed is not None:
            times.append(elapsed)
    return Execution(tuple(times), device.read(runner.output_names()))


def check(runner: KernelRunner, outputs: Mapping[str, np.ndarray], reference: Mapping) -> CheckResult:
    """``runner.verify``; a verifier that cannot compare says the output is wrong."""
    try:
        return runner.verify(outputs, reference)
    except Exception as exc:  # a malformed output (wrong shape, NaN where an index is read) is wrong
        return CheckResult(False, f"verification failed: {type(exc).__name__}: {exc}", float("inf"))


def agreement(runner: KernelRunner, first: Mapping[str, np.ndarray], second: Mapping[str, np.ndarray],
              size: Mapping[str, int]) -> CheckResult:
    """Outputs of two devices for the same configuration and inputs, within the runner's tolerances."""
    worst = CheckResult(True)
    for name in runner.output_names():
        rtol, atol = runner.tolerance(name, size)
        result = compare(name, first[name], second[name], rtol=rtol, atol=atol)
        if not result.ok:
            return result
        worst = max(worst, result, key=lambda r: r.error_ratio)
    return worst
