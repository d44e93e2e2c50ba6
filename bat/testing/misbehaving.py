"""Tuners whose process misbehaves: it dies, hangs or speaks nonsense after a few evaluations.

They test that an isolated run (bat.tuner_adapters.isolated) ends with one
line naming the tuner and what it did, keeps the trace of what was
evaluated, and that a campaign goes on with its other runs.
"""

from __future__ import annotations

import os
import time
from typing import ClassVar

import numpy as np

from bat.core.problem import Problem
from bat.core.tuner import Tuner

#: evaluations each makes before it misbehaves
FIRST = 2


class _Misbehaving(Tuner):
    summary: ClassVar[str] = "a tuner whose process misbehaves (bat.testing.misbehaving)"

    def tune(self, problem: Problem, rng: np.random.Generator) -> None:
        for row in problem.space.sample_valid(FIRST, rng):
            problem.evaluate(problem.space.config(row))
        self.misbehave(problem)

    def misbehave(self, problem: Problem) -> None:
        raise NotImplementedError


class Dies(_Misbehaving):
    """Exits with status 3 in the middle of its run."""

    def misbehave(self, problem: Problem) -> None:
        os._exit(3)


class Hangs(_Misbehaving):
    """Stops talking and never exits."""

    def misbehave(self, problem: Problem) -> None:
        while True:
            time.sleep(60)


class Nonsense(_Misbehaving):
    """Writes lines that are not protocol messages (over the protocol's own stream when isolated)."""

    def misbehave(self, problem: Problem) -> None:
        client = getattr(problem, "client", None)
        if client is None:
            raise ValueError("nonsense")
        for _ in range(1000):
            client.writer.write(b"\x00not json at all{\n")
            client.writer.flush()
            client.reader.readline()
