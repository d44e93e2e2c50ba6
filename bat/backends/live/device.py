"""The CUDA device, through CuPy: whether there is one, what it is, and its short name.

CuPy is imported only when a function here is called, so the module loads on
any machine.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bat.core.errors import MissingDependencyError, UnknownNameError
from bat.core.gpus import cuda_cores


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # CuPy raises its own CUDA errors when no driver is present
        return False


def cupy_module() -> Any:
    """CuPy, or MissingDependencyError saying the live backend needs it."""
    try:
        import cupy
    except ImportError as exc:
        raise MissingDependencyError(f"the live backend needs CuPy: {exc}") from exc
    return cupy


def short_gpu_name(name: str) -> str:
    """A dataset GPU id from a device name: ``NVIDIA GeForce RTX 3090`` -> ``RTX_3090``."""
    name = re.sub(r"^(NVIDIA\s+)?(GeForce\s+|Tesla\s+|Quadro\s+)?", "", name.strip())
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "GPU"


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def device_info(device_id: int = 0) -> dict[str, Any]:
    """Name, compute capability, SM and CUDA core counts, clocks and software versions of a CUDA device."""
    cp = cupy_module()
    rt = cp.cuda.runtime
    props = rt.getDeviceProperties(device_id)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    attrs = getattr(cp.cuda.Device(device_id), "attributes", {})
    driver_module = ""
    proc = Path("/proc/driver/nvidia/version")
    if proc.is_file() and (m := re.search(r"Kernel Module\s+(\S+)", proc.read_text())):
        driver_module = m.group(1)
    nv_major, nv_minor = cp.cuda.nvrtc.getVersion()
    capability = cp.cuda.Device(device_id).compute_capability
    sm_count = props.get("multiProcessorCount")
    return {
        "gpu_name": name,
        "compute_capability": capability,
        "sm_count": sm_count,
        "cuda_cores": device_cores(sm_count, capability),
        "max_sm_clock_mhz": (attrs.get("ClockRate") or props.get("clockRate") or 0) / 1000 or None,
        "max_memory_clock_mhz": (attrs.get("MemoryClockRate") or props.get("memoryClockRate") or 0)
        / 1000 or None,
        "memory_bytes": props.get("totalGlobalMem"),
        "driver": driver_module or _version(rt.driverGetVersion()),
        "cuda_driver_api": _version(rt.driverGetVersion()),
        "cuda_runtime": _version(rt.runtimeGetVersion()),
        "nvrtc": f"{nv_major}.{nv_minor}",
        "cupy": cp.__version__,
    }


def device_cores(sm_count: int | None, capability: str) -> int | None:
    """CUDA cores from the device's SM count and compute capability; None when either is unknown."""
    if not sm_count:
        return None
    try:
        return cuda_cores(int(sm_count), capability)
    except UnknownNameError:  # a compute capability newer than bat.core.gpus knows
        return None
