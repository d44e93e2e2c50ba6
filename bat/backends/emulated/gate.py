"""Would a GPU accept this configuration? NVRTC for sm_90 and the launch limits, before emulating.

Emulation runs only what a GPU would run: the configuration must compile with NVRTC for
``sm_90`` (static shared memory over 48 KiB, for one, fails in ptxas), and every launch must
fit the per-block limits of that architecture (threads; registers: ptxas' count per
thread, allocated per warp in units of 256, out of 65,536; static plus dynamic shared
memory, 48 KiB without the opt-in to more). Outcomes are cached as JSON
next to the emulation executables, keyed by the source, the macros and the NVRTC version.
A HIP source is gated the same way, through the HIP layer served to NVRTC as
``hip/hip_runtime.h`` (bat.backends.emulated.hip): the verdict of an Nvidia GPU (sm_90) on
the same code, which for a twin that differs from its CUDA kernel only by that include is
the CUDA twin's verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from bat.core.kernel import Launch
from bat.toolchain.resources import ResourceUsage

ARCH = "sm_90"
MAX_THREADS_PER_BLOCK = 1024
REGISTERS_PER_BLOCK = 65536
REGISTER_UNIT = 256  # registers are allocated per warp in multiples of this
SHARED_BYTES_PER_BLOCK = 49152  # static plus dynamic shared memory, without the opt-in to more
WARP = 32
#: Part of every cache key: a change of what an entry holds makes older entries unreachable.
CACHE_FORMAT = 3


@dataclass(frozen=True)
class GateResult:
    """``refusal`` is "" when a GPU would run the configuration; ``compiled`` False: NVRTC failed.

    ``seconds`` is what NVRTC took for this configuration, when it ran (``cached``: earlier).
    """

    compiled: bool
    refusal: str
    seconds: float
    cached: bool = False


def _nvrtc_version() -> str | None:
    try:
        return f"{metadata.version('cuda-bindings')}/{metadata.version('nvidia-cuda-nvrtc')}"
    except metadata.PackageNotFoundError:
        return None


def nvrtc_available() -> bool:
    """True when cuda-bindings and the NVRTC wheel are installed (the gate can run)."""
    return _nvrtc_version() is not None


def _printable(text: str) -> str:
    """NVRTC's log line without the NUL and control bytes it may carry."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text).strip()


def launch_refusal(usage: Mapping[str, ResourceUsage], launches: Sequence[Launch]) -> str:
    """Why a GPU would refuse one of ``launches`` (too many threads or registers), or ""."""
    for launch in launches:
        threads = math.prod(launch.block)
        if threads > MAX_THREADS_PER_BLOCK:
            return f"{launch.kernel}: block {launch.block} has {threads} threads; at most {MAX_THREADS_PER_BLOCK}"
        kernel = usage.get(launch.kernel)
        if kernel is None:
            continue
        if (shared := kernel.shared_bytes + launch.shared_bytes) > SHARED_BYTES_PER_BLOCK:
            return (f"{launch.kernel}: {kernel.shared_bytes} bytes of static and {launch.shared_bytes} of dynamic "
                    f"shared memory ({shared}); a block has {SHARED_BYTES_PER_BLOCK} without the opt-in")
        per_warp = math.ceil(kernel.registers * WARP / REGISTER_UNIT) * REGISTER_UNIT
        needed = per_warp * math.ceil(threads / WARP)
        if needed > REGISTERS_PER_BLOCK:
            return (f"{launch.kernel}: block {launch.block} needs {needed} registers ({kernel.registers} per "
                    f"thread); an {ARCH} block has {REGISTERS_PER_BLOCK}: too many resources requested for launch")
    return ""


def check(source: str, name: str, macros: Mapping[str, object], launches: Sequence[Launch],
          cache: Path, headers: Mapping[str, str] | None = None) -> GateResult:
    """Compile with NVRTC for sm_90 (or find the outcome cached) and check the launches.

    ``headers`` (include name -> text) are the files the source includes by name.
    """
    from bat.toolchain.nvrtc import compile_source
    from bat.toolchain.resources import parse_ptxas_log

    version = _nvrtc_version()
    included = sorted((headers or {}).items())
    key = hashlib.sha256(json.dumps([CACHE_FORMAT, source, name, sorted((k, str(v)) for k, v in macros.items()),
                                     ARCH, version, *([included] if included else [])]).encode()).hexdigest()
    path = cache / "nvrtc" / key[:2] / f"{key[2:26]}.json"
    if path.is_file():
        stored = json.loads(path.read_text())
        usage = parse_ptxas_log(stored["log"]) if stored["ok"] else {}
        refusal = stored["error"] if not stored["ok"] else launch_refusal(usage, launches)
        return GateResult(stored["ok"], refusal, stored["seconds"], cached=True)
    result = compile_source(source, macros, arch=ARCH, name=name, headers=dict(included))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # one writer per process; the rename is atomic
    error = "" if result.ok else f"NVRTC for {ARCH}: {_printable(result.first_error())}"
    tmp.write_text(json.dumps({"ok": result.ok, "log": result.log if result.ok else "", "seconds": result.seconds,
                               "error": error}))
    tmp.replace(path)
    if not result.ok:
        return GateResult(False, error, result.seconds)
    return GateResult(True, launch_refusal(result.usage or {}, launches), result.seconds)
