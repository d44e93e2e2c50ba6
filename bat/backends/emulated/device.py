"""The emulated device: the procedure's calls become a plan that a configuration's executable runs.

``EmulatedDevice`` implements bat.backends.procedure.Device for one built configuration
(bat.backends.emulated.build). Allocations, copies, poisoning, symbols and launches are
written as lines of ``plan.txt`` (host data as files beside it); ``read`` runs the
executable, which replays the plan once per block order (forward, then reverse) and saves
the arrays asked for. A sanitizer report, a misused barrier, a deadlock or a crash raises
``KernelRunError`` with the runtime's own words; outputs that differ between the two block
orders raise ``OrderDependenceError``. ``run`` returns None: nothing here is a timing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bat.backends.emulated.build import Build
from bat.backends.procedure import POISON_BYTE
from bat.core.errors import BackendError, KernelRunError, OrderDependenceError
from bat.core.kernel import Launch

ORDERS = ("forward", "reverse")
#: Sanitizer settings: stop at the first report, no leak check (the runtime exits without freeing).
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=1:report_signal_unsafe=0:history_size=4",
}
#: Lines of a failed run's log kept in the error (the first lines say what went wrong).
REPORT_LINES = 12


class EmulatedDevice:
    """One configuration's executable as a Device; a temporary directory holds the plan and data."""

    def __init__(self, build: Build, *, block_timeout_s: float = 60.0, orders: Sequence[str] = ORDERS) -> None:
        if not build.ok or build.executable is None:
            raise BackendError("an emulated device needs a successful build")
        self.build, self.block_timeout_s, self.orders = build, block_timeout_s, tuple(orders)
        self._dir = Path(tempfile.mkdtemp(prefix="bat-emu-"))
        (self._dir / "in").mkdir()
        self._plan = [f"shared {r.offset} {r.size} {r.name.replace(' ', '_')}" for r in build.shared]
        self._arrays: dict[str, np.ndarray] = {}  # name -> a host array of its dtype and shape
        self._files = 0
        self.run_seconds = 0.0

    # -- the Device protocol -------------------------------------------------------------------
    def allocate(self, name: str, host: np.ndarray) -> None:
        self._arrays[name] = np.empty_like(host)
        self._plan.append(f"array {name} {host.nbytes}")
        self.upload(name, host)

    def upload(self, name: str, host: np.ndarray) -> None:
        self._plan.append(f"load {name} {self._file(host)}")

    def poison(self, name: str) -> None:
        self._plan.append(f"fill {name} {POISON_BYTE}")

    def set_symbol(self, name: str, host: np.ndarray) -> None:
        self._plan.append(f"symbol {name} {self._file(host)}")

    def run(self, launches: Sequence[Launch]) -> None:
        for launch in launches:
            self._plan.append(" ".join(["launch", launch.kernel, *map(str, launch.grid), *map(str, launch.block),
                                        str(launch.shared_bytes)]))
            self._plan.extend(_argument(arg) for arg in launch.args)
        return None

    def read(self, names: Sequence[str]) -> dict[str, np.ndarray]:
        plan = [*self._plan, *(f"save {name}" for name in names)]
        (self._dir / "plan.txt").write_text("\n".join(plan) + "\n")
        self._execute()
        results = {order: {name: self._load(order, name) for name in names} for order in self.orders}
        first = results[self.orders[0]]
        for order in self.orders[1:]:
            for name in names:
                if (message := _differences(name, first[name], results[order][name], order)):
                    raise OrderDependenceError(message)
        return first

    # -- the rest ------------------------------------------------------------------------------
    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def _file(self, host: np.ndarray) -> int:
        self._files += 1
        np.ascontiguousarray(host).tofile(self._dir / "in" / f"{self._files}.bin")
        return self._files

    def _load(self, order: str, name: str) -> np.ndarray:
        like = self._arrays[name]
        return np.fromfile(self._dir / order / f"{name}.bin", dtype=like.dtype).reshape(like.shape)

    def _execute(self) -> None:
        assert self.build.executable is not None
        # the runtime's own watchdog fires first; this limit only catches a runtime that cannot stop
        limit = 3 * self.block_timeout_s + 600
        command = [str(self.build.executable), str(self._dir), str(max(1, round(self.block_timeout_s))),
                   ",".join(self.orders)]
        start = time.perf_counter()
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                                 env={**os.environ, **SANITIZER_ENV}, errors="replace")
        except subprocess.TimeoutExpired:
            raise KernelRunError(f"the emulation did not finish within {limit:g} s") from None
        finally:
            self.run_seconds += time.perf_counter() - start
        if out.returncode != 0:
            raise KernelRunError(report(out.stderr, out.returncode))


def _argument(arg: str | tuple[str, object]) -> str:
    if isinstance(arg, str):
        return f"arg A {arg}"
    value = np.asarray(arg[1])
    kind = {"f": "f", "i": "i", "u": "u", "b": "u"}.get(value.dtype.kind)
    if kind is None:
        raise BackendError(f"scalar launch argument {arg[1]!r} of dtype {value.dtype} is not a number")
    data = value.astype(value.dtype.newbyteorder("<")).tobytes()
    return f"arg S {kind} {len(data)} {data.hex()}"


def _differences(name: str, first: np.ndarray, other: np.ndarray, order: str) -> str:
    """Why two block orders' copies of an array differ bit for bit ("" when they do not)."""
    a, b = first.reshape(-1).view(np.uint8), other.reshape(-1).view(np.uint8)
    if np.array_equal(a, b):
        return ""
    width = first.dtype.itemsize
    bad = np.flatnonzero((a != b).reshape(-1, width).any(axis=1))
    at = np.unravel_index(int(bad[0]), first.shape)
    return (f"{name} depends on the order blocks and their threads run in: {bad.size} of {first.size} "
            f"elements differ between the forward and the {order} order; first at {tuple(int(i) for i in at)}: "
            f"{first.reshape(-1)[bad[0]]!r} vs {other.reshape(-1)[bad[0]]!r}")


def report(log: str, code: int) -> str:
    """What went wrong, in one line, from a failed run's log (sanitizer, barrier, deadlock, crash)."""
    lines = [_PATH.sub(r"\1", _ADDRESS.sub("", line)).strip() for line in log.splitlines() if line.strip()]
    ours = [line.removeprefix("bat-emu: ") for line in lines if line.startswith("bat-emu: ")]
    heads = [i for i, line in enumerate(lines) if _SANITIZER.search(line)]
    parts: list[str] = []
    if heads:
        first = heads[0]
        parts.append(lines[first].lstrip("=0123456789 ").removeprefix("ERROR: ").removeprefix("WARNING: "))
        detail = [line for line in lines[first + 1:first + 40]
                  if _ACCESS.match(line) or ("located" in line and "region" in line)]
        frames = [_MODULE.sub("", line.split(" in ", 1)[-1] if " in " in line else line.split(" ", 1)[-1])
                  for line in lines[first + 1:] if line.startswith("#") and _KERNEL_LINE.search(line)]
        parts += [*detail[:2], *(f"at {f}" for f in frames[:2])]
    parts += ours
    if not parts:
        parts = lines[-REPORT_LINES:] or [f"the emulation exited with status {code}"]
    return "; ".join(parts)


_SANITIZER = re.compile(r"(ERROR|WARNING): (AddressSanitizer|ThreadSanitizer|LeakSanitizer)|runtime error:")
_ACCESS = re.compile(r"^(READ|WRITE|Read|Write|Previous (read|write)|Atomic \w+) of size \d+")
_ADDRESS = re.compile(r" (on|at) (address )?0x[0-9a-f]+( at pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+)?|"
                      r"0x[0-9a-f]+ is | \[0x[0-9a-f]+,0x[0-9a-f]+\)| thread T\d+|\(pid=\d+\)|^#\d+ 0x[0-9a-f]+ ")
_MODULE = re.compile(r" \([^()]*\+0x[0-9a-f]+\)$")
_PATH = re.compile(r"(?:/[^\s:]*/)?([^\s/:]+\.(?:cu|hip):\d+)")
_KERNEL_LINE = re.compile(r"\.(?:cu|hip):\d+")  # a frame in the kernel's source (CUDA or HIP)
