"""The thin CuPy layer of the live backend: a GPU as the measurement procedure's Device.

Everything above this class (bat.backends.procedure, the session's bookkeeping and
checks) is shared with the emulated backend and runs in CI; this module, with the device
probe and NVRTC through CuPy, is the only code no CI run executes (CI has no GPU). Every
CuPy call BAT makes, in one place:

- here: ``cupy.cuda.Device(id).use``, ``cupy.asarray``, ``ndarray.set``,
  ``ndarray.view(cupy.uint8).fill``, ``cupy.asnumpy``, ``cupy.RawModule(path=...)``,
  ``RawModule.get_function``, ``RawModule.get_global(...).copy_from_host``,
  ``RawKernel(grid, block, args, shared_mem=...)``, ``RawKernel.attributes``,
  ``cupy.cuda.Event()``, ``Event.record``, ``Event.done``, ``cupy.cuda.get_elapsed_time``,
  ``cupy.cuda.runtime.deviceSynchronize``;
- bat.backends.live.device: ``cupy.cuda.runtime.getDeviceCount``, ``getDeviceProperties``,
  ``driverGetVersion``, ``runtimeGetVersion``, ``cupy.cuda.Device(id).attributes`` and
  ``.compute_capability``, ``cupy.cuda.nvrtc.getVersion``;
- bat.toolchain.compiling.cupy_compiler: ``cupy.cuda.nvrtc`` (createProgram, compileProgram,
  getProgramLog, getCUBIN, destroyProgram).

CuPy is imported when a device is made, never when this module is.
"""

from __future__ import annotations

import ctypes
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bat.backends.live.device import cupy_module
from bat.backends.procedure import POISON_BYTE
from bat.core.errors import RunTimeoutError
from bat.core.kernel import Launch


class CupyDevice:
    """One CUDA device through CuPy: named arrays, the loaded module's kernels, timed runs."""

    def __init__(self, device_id: int = 0, *, timeout_s: float = 10.0) -> None:
        self.cp = cupy_module()
        self.cp.cuda.Device(device_id).use()
        self.timeout_s = timeout_s
        self.arrays: dict[str, Any] = {}
        self.kernels: dict[str, Any] = {}
        self.module: Any = None
        self.pending: Any = None  # the end event of a run that timed out
        self._tmp = tempfile.TemporaryDirectory(prefix="bat-cubin-")

    # -- modules -------------------------------------------------------------------------------
    def load(self, cubin: bytes, names: Iterable[str]) -> dict[str, dict[str, int]]:
        """Load a cubin; its kernels' CUDA attributes (registers, limits) by name."""
        path = Path(self._tmp.name) / "module.cubin"
        path.write_bytes(cubin)
        try:
            self.module = self.cp.RawModule(path=str(path))
            self.kernels = {name: self.module.get_function(name) for name in sorted(set(names))}
        finally:
            path.unlink(missing_ok=True)
        return {name: dict(kernel.attributes) for name, kernel in self.kernels.items()}

    # -- the procedure's Device ----------------------------------------------------------------
    def allocate(self, name: str, host: np.ndarray) -> None:
        self.arrays[name] = self.cp.asarray(host)

    def upload(self, name: str, host: np.ndarray) -> None:
        self.arrays[name].set(host)

    def poison(self, name: str) -> None:
        self.arrays[name].view(self.cp.uint8).fill(POISON_BYTE)

    def set_symbol(self, name: str, host: np.ndarray) -> None:
        array = np.ascontiguousarray(host)
        self.module.get_global(name).copy_from_host(array.ctypes.data_as(ctypes.c_void_p), array.nbytes)

    def run(self, launches: Sequence[Launch]) -> float:
        """Make the launches between two events; milliseconds (RunTimeoutError after ``timeout_s``: the
        end event is kept as ``pending``)."""
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record()
        for launch in launches:
            args = tuple(a[1] if isinstance(a, tuple) else self.arrays[a] for a in launch.args)
            self.kernels[launch.kernel](launch.grid, launch.block, args, shared_mem=launch.shared_bytes)
        end.record()
        if not self.wait(end, self.timeout_s):
            self.pending = end
            raise RunTimeoutError(f"a run took longer than {self.timeout_s:g} s")
        return float(self.cp.cuda.get_elapsed_time(start, end))

    def read(self, names: Sequence[str]) -> dict[str, np.ndarray]:
        return {name: self.cp.asnumpy(self.arrays[name]) for name in names}

    # -- health --------------------------------------------------------------------------------
    @staticmethod
    def wait(event: Any, seconds: float) -> bool:
        """Poll ``event`` until it completes (True) or ``seconds`` pass (False)."""
        deadline = time.monotonic() + seconds
        pause = 1e-5
        while not event.done:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 2e-3)
        return True

    def synchronize(self) -> str | None:
        """Wait for the device; the sticky CUDA error it reports (every later call fails), or None."""
        try:
            self.cp.cuda.runtime.deviceSynchronize()
        except Exception as exc:  # CuPy's CUDA errors have no common base we can name here
            return str(exc)
        return None

    def close(self) -> None:
        self._tmp.cleanup()
