"""GPU facts: CUDA cores per streaming multiprocessor by compute capability, and the known GPUs' specifications.

A GPU's CUDA core count is its SM count times the FP32 cores of one SM of
its compute capability (NVIDIA's CUDA programming guide tables). The live
backend reads the SM count and compute capability from the device; replayed
data names its GPU by short id, whose SM count is listed here for the GPUs
of the shipped data (and a few common ones).

``gpu_specs.json`` beside this module holds the public specifications of the
shipped data's GPUs (vendor, architecture, compute units, peak memory
bandwidth, L2 size), each figure with its source; ``gpu_facts`` reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bat.core.errors import BackendError, UnknownNameError

SPECS_FILE = Path(__file__).with_name("gpu_specs.json")


@dataclass(frozen=True)
class GpuFacts:
    """One GPU's public specification (``sources`` names the source of each figure)."""

    gpu: str
    name: str
    vendor: str  # "NVIDIA" or "AMD"
    architecture: str
    compute_capability: str  # "" for AMD
    compute_units: int  # SMs (NVIDIA) or CUs (AMD)
    memory_bandwidth_gbs: float
    l2_bytes: int
    sources: dict[str, str] = field(default_factory=dict)
    notes: str = ""


@cache
def all_gpu_facts() -> dict[str, GpuFacts]:
    """Every GPU of ``gpu_specs.json``, by short id."""
    raw = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return {gpu: GpuFacts(gpu=gpu, **entry) for gpu, entry in raw.items() if not gpu.startswith("_")}


def gpu_facts(gpu: str) -> GpuFacts | None:
    """The specification of a GPU named by short id (``A100``, ``MI250X``), None when it is not listed."""
    return all_gpu_facts().get(gpu)


#: words of a device name that tell its vendor, for GPUs not in gpu_specs.json
_VENDOR_WORDS = {"NVIDIA": ("nvidia", "geforce", "quadro", "tesla", "rtx", "gtx"),
                 "AMD": ("amd", "radeon", "instinct")}


def gpu_vendor(gpu: str, name: str | None) -> str:
    """The vendor ("NVIDIA", "AMD") of a GPU by short id, else by words of its device name; "" when unknown.

    The one vendor lookup: the device name is required (None only where none is recorded), so no caller
    can judge a GPU the project has no facts for by its short id alone (``DatasetMeta.vendor`` passes both).
    """
    facts = gpu_facts(gpu)
    if facts:
        return facts.vendor
    words = f"{name or ''} {gpu}".lower().replace("_", " ").split()
    found = [v for v, keys in _VENDOR_WORDS.items() if any(w in keys for w in words)]
    return found[0] if len(found) == 1 else ""


#: FP32 CUDA cores per SM, by compute capability major (a minor listed separately overrides)
CORES_PER_SM: dict[str, int] = {
    "3": 192, "5": 128, "6": 64, "6.1": 128, "6.2": 128, "7": 64, "8": 64, "8.6": 128, "8.7": 128,
    "8.9": 128, "9": 128, "10": 128, "12": 128,
}
#: short GPU id -> (SM count, compute capability)
KNOWN_GPUS: dict[str, tuple[int, str]] = {
    **{g: (f.compute_units, f.compute_capability) for g, f in all_gpu_facts().items() if f.vendor == "NVIDIA"},
    "H100_PCIe": (114, "9.0"), "H100_SXM": (132, "9.0"), "H200": (132, "9.0"),
}


def normalise_capability(capability: str | int | tuple[int, int]) -> str:
    """``"86"``, ``86``, ``(8, 6)`` or ``"8.6"`` as ``"8.6"`` (CuPy reports ``"86"``)."""
    if isinstance(capability, tuple):
        return f"{capability[0]}.{capability[1]}"
    text = str(capability).strip()
    if "." in text:
        return text
    if not text.isdigit() or len(text) < 2:
        raise UnknownNameError("compute capability", text, ["8.6", "86", "(8, 6)"])
    return f"{text[:-1]}.{text[-1]}"


def cores_per_sm(capability: str | int | tuple[int, int]) -> int:
    """FP32 CUDA cores of one SM of a compute capability (UnknownNameError for one not listed)."""
    cc = normalise_capability(capability)
    major = cc.split(".")[0]
    if cc in CORES_PER_SM:
        return CORES_PER_SM[cc]
    if major in CORES_PER_SM:
        return CORES_PER_SM[major]
    raise UnknownNameError("compute capability", cc, sorted(CORES_PER_SM))


def cuda_cores(sm_count: int, capability: str | int | tuple[int, int]) -> int:
    """CUDA cores of a GPU with ``sm_count`` SMs of the given compute capability."""
    if sm_count < 1:
        raise BackendError(f"a GPU with {sm_count} SMs has no CUDA cores (the device reported {sm_count})")
    return sm_count * cores_per_sm(capability)


def known_cuda_cores(gpu: str) -> int | None:
    """CUDA cores of a GPU named by short id (``RTX_3090``), None when it is not listed."""
    if gpu not in KNOWN_GPUS:
        return None
    return cuda_cores(*KNOWN_GPUS[gpu])
