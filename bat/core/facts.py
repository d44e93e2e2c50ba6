"""What a tuner is entitled to know of its target: declared here, and nowhere else.

A tuner sees a ``Problem``: its search space, its budget (and what is left of
it), the answers to what it evaluated, and ``problem.facts``, a
``TargetFacts``. That is all. Never the target's measurements (the replayed
dataset is the answer key), never the backend object (``Problem`` keeps it
private). The campaign, the CLI and the isolated runner (bat.run.isolation)
all build a tuner's view from this one declaration.

``TargetFacts`` holds:

- ``gpu``, ``gpu_facts``, ``cuda_cores``: the target GPU's public
  specification (bat.core.gpus), what a user knows of a GPU before measuring;
- ``threads``: the benchmark's launch geometry (a function of the parameters,
  part of the benchmark's published definition);
- ``measures_counters``: whether each evaluation returns performance counters;
- ``others``: measured data of *other* GPUs on the same space, by GPU id
  (empty outside the transfer study; never the target's GPU: ``check``
  refuses it).

A tuner that needs more than this (the profile searcher's exact mode reads
the counters of configurations it never evaluated) is an *oracle*: it says so
on its class (``Tuner.oracle``), the driver then grants it the answer key
(``Problem.answer_key``), and comparisons show it apart (``bat compare
--oracles``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bat.core.errors import TunerError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from bat.core.dataset import Dataset
    from bat.core.gpus import GpuFacts


@dataclass(frozen=True)
class TargetFacts:
    """What a tuner may know of the target beyond its space and budget; each fact is optional."""

    #: the GPU's short id (``RTX_3090``); "" when unknown or not a GPU
    gpu: str = ""
    #: CUDA cores of that GPU (SMs x cores per SM of its compute capability), None when unknown
    cuda_cores: int | None = None
    #: threads launched per configuration (the benchmark's launch geometry), from a frame of
    #: parameter values; None when the benchmark has no launch geometry
    threads: Callable[[pd.DataFrame], np.ndarray] | None = None
    #: the backend returns performance counters with every ok evaluation (``EvalResult.extra``)
    measures_counters: bool = False
    #: the GPU's public specification (vendor, compute units, bandwidth, L2), None when not listed
    gpu_facts: GpuFacts | None = None
    #: measured data of other GPUs on the same space, by GPU id (the transfer study's prior)
    others: Mapping[str, Dataset] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.gpu and self.gpu in self.others:
            raise TunerError(f"the facts of GPU {self.gpu} may not hold its own measurements (others)")
