"""Trace names that tell runs apart: benchmark, GPU, backend, tuner and its options, budget, seed."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from bat.core.problem import Budget
from bat.run.targets import Target


def run_name(target: Target, tuner: str, options: Sequence[str], budget: Budget, seed: int) -> str:
    """A trace name holding everything that tells runs apart: benchmark, GPU, backend, tuner (with its
    program arguments) and its options, budget kind and size, seed
    (``gemm_RTX_3090_replay_optuna_n100_s0.parquet``); a long tuner or option text is shortened with a hash."""
    parts = [target.benchmark, target.gpu]
    if target.backend.name != target.gpu:  # an emulated run's GPU field already names its backend
        parts.append(target.backend.name)
    parts.append(_shortened(tuner))
    if options:
        parts.append(_shortened("-".join(sorted(options))))
    parts.append(f"n{budget.max_evals}" if budget.max_evals is not None else f"t{budget.max_time_s:g}s")
    parts.append(f"s{seed}")
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", "_".join(parts)) + ".parquet"


def _shortened(text: str, limit: int = 40) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit - 11]}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
