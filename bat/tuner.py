"""The Tuner contract: propose configurations to a Problem until its budget is spent.

A tuner keeps its hyper-parameters as keyword-only dataclass fields
(validated in ``__post_init__``), does no work in its constructor, and in
``tune`` loops ``while not problem.exhausted``, calling
``problem.evaluate(config)``. The problem validates, de-duplicates, charges
the budget and records the trace; the tuner never sees another rule.
Randomness comes only from the ``rng`` passed in, so the same seed gives
the same trace.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from bat.problem import Problem


class Tuner(ABC):
    """Base class of every tuner (reference strategies and library adapters)."""

    #: One line for ``bat list tuners``.
    summary: ClassVar[str] = ""
    #: How the library is driven and what differs from the common rules, if anything.
    notes: ClassVar[str] = ""

    @abstractmethod
    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        """Evaluate configurations through ``problem`` until ``problem.exhausted``."""


def library_seed(rng: np.random.Generator) -> int:
    """A 32-bit seed for a library that takes an int, drawn from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))
