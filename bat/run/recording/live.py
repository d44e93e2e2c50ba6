"""Provenance of a recording made on a GPU: the dataset metadata a live session can vouch for."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bat.backends.live.device import short_gpu_name
from bat.backends.live.session import LiveSession


def provenance_meta(session: LiveSession, gpu: str | None = None) -> dict[str, Any]:
    """DatasetMeta fields describing a recording made with ``session`` (partial/n_expected aside)."""
    info = session.info
    return {
        "benchmark": session.bench.name,
        "space_hash": session.bench.space.space_hash,
        "gpu": gpu or short_gpu_name(info["gpu_name"]),
        "gpu_name": info["gpu_name"],
        "problem_size": dict(session.size.values),
        "input_recipe": session.input_recipe(),
        "driver": info["driver"],
        "toolkit": f"CUDA runtime {info['cuda_runtime']}, NVRTC {info['nvrtc']}, CuPy {info['cupy']}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": "bat record (live CuPy backend)",
        "licence": "MIT",
        "notes": f"{session.size.name} problem size; objective = mean of {session.repeats} timed "
                 "runs after one warm-up run (CUDA events, data on the device)",
        "extra": {
            **{k: v for k, v in info.items() if k not in ("gpu_name", "driver")},
            "arch": session.arch,
            "repeats": session.repeats,
            "timeout_s": session.timeout_s,
            "size_name": session.size.name,
        },
    }
